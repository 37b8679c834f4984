"""JavaScript lives in static/ alone (issue 39, item 3): no Python string under app/ holds
script text. Python writes data (JSON in `<script type="application/json">`, data attributes,
a CustomJS's `args`) and reads the code from static/ (`resources.static_file`).

What counts as data, not script: one call of a named function of a static module with plain
names as its arguments, `AE.<module>.<function>(name, ...)` (a CustomJS's or a ReactiveHTML
script's whole code; in an f-string each `{...}` counts as a name: it carries JSON). A string
passed to `re.compile` is a pattern that reads markup, not a script; a docstring is prose.

The scan is an AST walk over every string constant and f-string of app/, looking for syntax
that English prose does not use (tests/test_js_only_in_static.py's SCRIPT_SYNTAX).
"""

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

SCRIPT_SYNTAX = {
    "function": re.compile(r"\bfunction\s*\w*\s*\("),
    "arrow": re.compile(r"=>"),
    "document.": re.compile(r"\bdocument\.\w"),
    "window.": re.compile(r"\bwindow\.\w"),
    "const": re.compile(r"\bconst\s+[\w\[{]"),
    "let": re.compile(r"\blet\s+\w+\s*[=;]"),
    "var": re.compile(r"\bvar\s+\w+\s*[=;]"),
    ".forEach(": re.compile(r"\.forEach\("),
    "=== / !==": re.compile(r"(?<![=!])[!=]==(?!=)"),
    "??": re.compile(r"\?\?"),
    "return": re.compile(r"^\s*return\b|[;{]\s*return\b"),
    "AE.": re.compile(r"\bAE\.\w"),
    "Bokeh.": re.compile(r"\bBokeh\.\w"),
    "inline <script>": re.compile(r"<script(?![^>]*\b(src=|type=\"application/json\"))[^>]*>"),
}

# the one form of code that is data: a call into a static module, its arguments names
CALL = re.compile(r"\s*AE\.\w+\.\w+\(\s*(\w+(\s*,\s*\w+)*)?\s*\)\s*;?\s*")
HOLE = "arg"  # what an f-string's {...} reads as
# an inline script whose whole text is a hole: it carries a file of static/ or Panel's own
# snippet (a script text written here would be caught where it is written)
CARRIED = re.compile(r"<script[^>]*>" + HOLE + "</script>")
JINJA_HOLE = re.compile(r"\{\{\s*\w+\s*\}\}")  # a Jinja template's {{ name }} is a hole too

# Files not yet moved, each with why: none since issue 39 (a file added here must say why).
PENDING = {}


def docstrings(tree):  # -> ids of the Constant nodes that are docstrings
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if (body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant)
                    and isinstance(body[0].value.value, str)):
                out.add(id(body[0].value))
    return out


def patterns(tree):  # -> ids of the string nodes passed to re.compile / re.sub / ...
    out = set()
    for node in ast.walk(tree):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and isinstance(node.func.value, ast.Name) and node.func.value.id == "re"
                and node.args):
            out.add(id(node.args[0]))
    return out


def strings(tree):  # -> [(line, text)]: each string constant and f-string (holes as HOLE)
    skip = docstrings(tree) | patterns(tree)
    inner = set()
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr):
            if id(node) in skip:
                continue
            parts = []
            for value in node.values:
                inner.add(id(value))
                if isinstance(value, ast.Constant):
                    parts.append(str(value.value))
                else:
                    parts.append(HOLE)
                    for sub in ast.walk(value):  # a format spec's constants are not text
                        inner.add(id(sub))
            out.append((node.lineno, "".join(parts)))
    for node in ast.walk(tree):
        if (isinstance(node, ast.Constant) and isinstance(node.value, str)
                and id(node) not in skip and id(node) not in inner):
            out.append((node.lineno, node.value))
    return out


def script_text(source):  # -> [(line, what, excerpt)]: the strings that read as script
    found = []
    for line, text in strings(ast.parse(source)):
        if CALL.fullmatch(text):
            continue
        text = CARRIED.sub("", JINJA_HOLE.sub(HOLE, text))
        for what, pattern in SCRIPT_SYNTAX.items():
            m = pattern.search(text)
            if m:
                start = max(0, m.start() - 30)
                found.append((line, what, text[start:m.end() + 30].replace("\n", " ")))
                break
    return found


def app_files():
    return sorted(p for p in (ROOT / "app").rglob("*.py") if "content" not in p.parts[-2:-1])


def test_no_python_string_under_app_holds_script_text():
    found = []
    for path in app_files():
        rel = path.relative_to(ROOT).as_posix()
        if rel in PENDING:
            continue
        found += [f"{rel}:{line}: {what}: {text!r}"
                  for line, what, text in script_text(path.read_text(encoding="utf-8"))]
    assert not found, "script text in Python strings (move it to static/):\n" + "\n".join(found)


def test_the_pending_files_still_hold_script_text():
    # an entry whose file no longer holds any goes: the list only shrinks
    stale = [rel for rel in PENDING
             if not script_text((ROOT / rel).read_text(encoding="utf-8"))]
    assert not stale, f"no script text left in {stale}: remove them from PENDING"


@pytest.mark.parametrize("sample", [
    'CODE = "if (window.AE && AE.url) { AE.url.flush(); }"',
    'CODE = """\nconst url = new URL(location.href);\n"""',
    "CODE = 'items.forEach(f)'",
    "CODE = 'const f = (o) => o.x'",
    "CODE = 'function draw() { return 1 }'",
    "CODE = f'box.innerHTML = {x}; document.title = 1'",
    "CODE = f'<script>{x};{y}</script>'",
    "CODE = \"return (2 ** tick).toLocaleString('en-US')\"",
    "CODE = 'let n = 0;'",
    "CODE = f\"return {labels}[tick] ?? String(tick)\"",
    'CODE = "AE.states.change(ae_spec, [c0, c1], cb_obj)"',  # a call, but with script in it
    'CODE = "AE.url.flush(); AE.url.liveUrl()"',  # two calls are a script
    "X = dict(code=\"if (a === b) { go() }\")",
])
def test_the_scan_catches_script_text(sample):  # positive controls
    assert script_text(sample), sample


@pytest.mark.parametrize("sample", [
    'CODE = "AE.states.onControl(this, ae_spec)"',
    "CODE = f'AE.readout.render(self, data, state, box, {template})'",
    'HTML = \'<script type="application/json" class="ae-q-data">{}</script>\'',
    "HTML = f'<script src=\"{url}\" defer></script>'",
    "HTML = f'<script>{HEAD_JS}</script>'",
    'PAT = re.compile(r\'<script type="text/javascript">(.*?)</script>\')',
    'def f():\n    """Runs a function of the window.AE namespace => data."""',
    'TEXT = "the sliding window. Let the reader return to it; a function of n"',
])
def test_the_scan_lets_data_and_prose_pass(sample):  # negative controls
    assert not script_text(sample), script_text(sample)


def test_a_component_carries_only_scripts_that_assign_its_own_properties():
    # Panel sends back to the session each property a ReactiveHTML's scripts assign
    # (`data.kept = ...`, found in the script text), so a static file carried by a component
    # that lacks the property makes Panel link one that is not there (the live page then
    # fails with UnknownReferenceError)
    from app.chapters.live_question import AnswerMemory, LiveReview
    from app.kit.chrome import A11y
    from app.kit.readout import UrlNote

    assigned = re.compile(r"\bdata\.(\w+)\s*[-+*/%&|^?]*=(?!=)")
    for cls in (AnswerMemory, LiveReview, A11y, UrlNote):
        names = {m for script in cls._scripts.values() for m in assigned.findall(script)}
        assert names <= set(cls.param), (cls.__name__, names - set(cls.param))
    assert {"kept"} <= {  # positive control: the memory's are seen
        m for s in AnswerMemory._scripts.values() for m in assigned.findall(s)}
