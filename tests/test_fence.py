"""One fence per language: the private names of Panel, Bokeh, Tornado and torch are reached only
from the fenced modules, and no module reads another of our modules' private names.

Python: app/kit/panel_internals.py (Panel, Bokeh, Tornado) and kernels/torch_internals.py (torch)
are the only files that may touch a private name (`x._name`, getattr(x, "_name"), an
import of a private name or module) of those packages; each such name is listed in the
fence's INTERNALS with why. JS: static/bokeh_fence.js is the only file of static/ that
reaches BokehJS beyond its documented embedding API (a private `._name`, its module loader,
its views and their elements, Bokeh's and Panel's DOM class names: JS_SCAN), each named in its
header; and our browser files talk through one namespace, window.AE, not globals.

The Python scan is a pragmatic one over the syntax tree. An access `x._name` outside the
fence fails when x starts from a name bound to one of those packages (an import of it, or
the names torch, pn, panel, bokeh, tornado themselves, as kernels passes torch around), or
from one of our own modules (their privates are theirs), or when no file of ours defines
_name at all (then it is someone else's private, whatever x is). Names bound to other
imports (os, argparse, numpy...) are left alone: the fence is about the four packages.
"""

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCANNED = ("app", "kernels", "attention_core", "benchmarks", "scripts")
OURS = ("app", "kernels", "attention_core")  # our packages: their privates stay inside them
EXTERNAL = ("panel", "bokeh", "tornado", "torch")
CONVENTIONAL = {"torch", "pn", "panel", "bokeh", "tornado"}  # names that are the package
FENCES = {"app/kit/panel_internals.py", "kernels/torch_internals.py"}
JS_FENCE_FILE = "static/bokeh_fence.js"


def is_private(name):
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def python_files():  # -> {relative path: source}
    out = {}
    for top in SCANNED:
        for path in sorted((ROOT / top).rglob("*.py")):
            out[path.relative_to(ROOT).as_posix()] = path.read_text(encoding="utf-8")
    return out


def own_names(sources):  # -> every private name a file of ours defines (def, class, assignment)
    names = set()
    for source in sources:
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                names.add(node.name)
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                names.add(node.id)
            elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
                names.add(node.attr)
            elif isinstance(node, ast.arg):
                names.add(node.arg)
    return {n for n in names if is_private(n)}


def top(module):
    return (module or "").split(".")[0]


def bindings(tree):  # -> ({name: external package}, {name: our package}, {names of other imports})
    external, ours, other = {}, {}, set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            pairs = [(a.asname or a.name.split(".")[0], a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0:
            pairs = [(a.asname or a.name, node.module) for a in node.names]
        else:
            continue
        for name, module in pairs:
            if top(module) in EXTERNAL:
                external[name] = top(module)
            elif top(module) in OURS:
                ours[name] = top(module)
            else:
                other.add(name)
    return external, ours, other


def root_name(node):  # x.y.z, x().y, x[0].y -> "x"; None when it starts elsewhere
    while True:
        if isinstance(node, ast.Attribute):
            node = node.value
        elif isinstance(node, ast.Call):
            node = node.func
        elif isinstance(node, ast.Subscript):
            node = node.value
        elif isinstance(node, ast.Name):
            return node.id
        else:
            return None


def private_accesses(source, own):
    # -> [(line, kind, text)]: kind "external" (a private of panel/bokeh/tornado/torch or an
    # unknown one) or "ours" (another module of ours' private name)
    tree = ast.parse(source)
    external, ours, other = bindings(tree)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and top(node.module) in EXTERNAL:
            if any(is_private(p) for p in node.module.split(".")) or any(
                    is_private(a.name) for a in node.names):
                found.append((node.lineno, "external", ast.unparse(node)))
            continue
        if isinstance(node, ast.Import):
            for a in node.names:
                if top(a.name) in EXTERNAL and any(is_private(p) for p in a.name.split(".")):
                    found.append((node.lineno, "external", ast.unparse(node)))
            continue
        if isinstance(node, ast.Attribute) and is_private(node.attr):
            target, attr = node.value, node.attr
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
              and node.func.id in ("getattr", "setattr", "hasattr", "delattr")
              and len(node.args) >= 2 and isinstance(node.args[1], ast.Constant)
              and isinstance(node.args[1].value, str) and is_private(node.args[1].value)):
            target, attr = node.args[0], node.args[1].value
        else:
            continue
        root = root_name(target)
        text = ast.unparse(node)
        if root in external or root in CONVENTIONAL:
            found.append((node.lineno, "external", text))
        elif root in ours:
            found.append((node.lineno, "ours", text))
        elif root in other:
            continue  # os._exit and the like: not the four packages
        elif attr not in own:
            found.append((node.lineno, "external", text))
    return found


@pytest.fixture(scope="module")
def scanned():  # -> {path: [(line, kind, text)]}
    sources = python_files()
    own = own_names(sources.values())
    return {path: private_accesses(source, own) for path, source in sources.items()}


# --- the scanner itself ---------------------------------------------------------------------

OWN_SNIPPET = "class A:\n    def __init__(self):\n        self._mine = 1\n"


@pytest.mark.parametrize("snippet", [
    "import panel as pn\npn.state._sessions.clear()\n",
    "from panel.io.state import state\nkeys = list(state._sessions)\n",
    "def f(torch):\n    return torch._fused_sdp_choice\n",
    "def f(torch):\n    return getattr(torch._C, 'x', None)\n",
    "from bokeh.document import Document\nDocument()._template_variables['a'] = 1\n",
    "from panel.io.server import _set_request_route_context\n",
    "import torch._dynamo\n",
    "def f(doc):\n    return doc._all_models\n",  # defined nowhere of ours: someone else's
    "def f(server):\n    return getattr(server, '_tornado')\n",
])
def test_the_scanner_catches_a_private_of_the_four_packages(snippet):
    own = own_names([OWN_SNIPPET])
    assert [k for _, k, _ in private_accesses(snippet, own)] == ["external"], snippet


def test_the_scanner_catches_a_module_reading_another_modules_privates():
    found = private_accesses("import kernels\nlock = kernels.dispatch._LOCK\n", {"_LOCK"})
    assert [k for _, k, _ in found] == ["ours"]
    found = private_accesses("from kernels import dispatch\nwith dispatch._LOCK:\n    pass\n",
                             {"_LOCK"})
    assert [k for _, k, _ in found] == ["ours"]


def test_the_scanner_leaves_our_own_privates_and_other_libraries_alone():
    own = own_names([OWN_SNIPPET])
    for snippet in ("class B:\n    def f(self):\n        return self._mine\n",
                    "import os\nos._exit(0)\n", "import panel as pn\npn.state.curdoc\n"):
        assert private_accesses(snippet, own) == [], snippet


def test_a_new_private_access_in_the_server_fails(scanned):
    # what the test below says if someone writes pn.state._sessions into app/hosting/server.py
    sources = python_files()
    own = own_names(sources.values())
    patched = sources["app/hosting/server.py"] + "\n\ndef peek():\n    return pn.state._sessions\n"
    new = [f for f in private_accesses(patched, own) if f not in scanned["app/hosting/server.py"]]
    assert [(k, t) for _, k, t in new] == [("external", "pn.state._sessions")]


# --- the sources ----------------------------------------------------------------------------

def test_private_names_of_panel_bokeh_tornado_and_torch_only_in_the_fence(scanned):
    outside = [f"{path}:{line}: {text}" for path, found in scanned.items()
               if path not in FENCES for line, kind, text in found if kind == "external"]
    assert not outside, ("private names of Panel, Bokeh, Tornado or torch outside "
                         "app/kit/panel_internals.py and kernels/torch_internals.py (add a "
                         "function there, listed in its INTERNALS with why):\n"
                         + "\n".join(outside))


def test_no_module_reads_another_modules_private_names(scanned):
    reads = [f"{path}:{line}: {text}" for path, found in scanned.items()
             for line, kind, text in found if kind == "ours"]
    assert not reads, "give the module a public name for it:\n" + "\n".join(reads)


@pytest.mark.parametrize("path, module", [("app/kit/panel_internals.py", "app.kit.panel_internals"),
                                          ("kernels/torch_internals.py",
                                           "kernels.torch_internals")])
def test_every_private_name_the_fence_touches_is_listed_with_why(scanned, path, module):
    import importlib
    listed = importlib.import_module(module).INTERNALS
    names = {part for name, _, why in listed for part in name.split(".") if why}
    touched = {re.findall(r"\b_\w+", text)[-1] for _, kind, text in scanned[path]
               if kind == "external"}
    assert touched, f"{path} touches no private name: the scanner no longer sees it"
    assert touched <= names, f"{path} touches {sorted(touched - names)} without listing them"


# --- BokehJS --------------------------------------------------------------------------------

# What of BokehJS a file outside the fence may not name: (kind, pattern), each pattern's first
# group the name the fence's header must list where the fence uses it. The documented
# embedding API (Bokeh.embed.embed_item(s), Bokeh.documents, a document's get_model_by_id,
# models' properties and data) is not on it.
JS_SCAN = (
    ("private", r"\.\s*(_[A-Za-z]\w*)|\[\s*[\"'`](_[A-Za-z]\w*)[\"'`]\s*\]"),
    ("module loader", r"\b(require)\s*\("),
    ("view registry", r"\bBokeh\s*\.\s*(index)\b|\b(index)\s*\.\s*(?:find|find_one|get_one)\b"),
    ("undocumented name", (r"\b(add_document_standalone|find_one|get_one|button_el"
                           r"|child_views|lazy_initialize|update_position|context_menu"
                           r"|x_ranges|y_ranges|is_idle|all_models|apply_json_patch"
                           r"|from_json)\b")),
    ("view's element", r"(?<![\w.])(?:view|v|this)\s*\.\s*(el)\b"),  # q.el: a question's own
    ("model's document", r"\.\s*model\s*\.\s*(document)\b"),
    ("property descriptors", r"\.\s*(properties)\b"),
    ("view class", r"\b(\w*View|VisualProperties|InlineStyleSheet)\s*\.\s*prototype\b"),
    ("Bokeh's DOM", r"(?<![\w-])((?:bk|noUi|pn)-[A-Za-z][\w-]*|data-root-id)"),
    # the document's JSON (its format is what Bokeh's serializer writes, not an API)
    ("document format", (r"\.\s*(attributes)\b|\b(hold_render)\b"
                         r"|\btype\s*===\s*[\"'](object)[\"']|\b(render_items)\s*\[|\]\s*\.\s*(roots)\b")),
)
JS_PATTERNS = [(kind, re.compile(pattern)) for kind, pattern in JS_SCAN]
JS_COMMENT = re.compile(r"/\*.*?\*/|(?:^|(?<=\s))//[^\n]*", re.DOTALL)
JS_GLOBAL = re.compile(r"\bwindow\s*\.\s*(\w+)\s*=(?!=)")
OUR_GLOBALS = re.compile(r"\bAE(?:States|Islands|A11y|Questions|Terms)\b")


def js_reaches(text):  # -> [(line number, kind, name)] of JS_SCAN's hits outside comments
    out = []
    for number, line in enumerate(JS_COMMENT.sub("", text).splitlines(), 1):
        for kind, pattern in JS_PATTERNS:
            for m in pattern.finditer(line):
                out.append((number, kind, next(g for g in m.groups() if g)))
    return out


def js_files():  # -> {relative path: text} of static/'s scripts
    return {p.relative_to(ROOT).as_posix(): p.read_text(encoding="utf-8")
            for p in sorted((ROOT / "static").glob("*.js"))}


@pytest.mark.parametrize("snippet, kind, name", [
    ("const a = doc._all_models;", "private", "_all_models"),
    ("x['_models'] = 1;", "private", "_models"),
    ("const {Document} = Bokeh.require('document');", "module loader", "require"),
    ("const v = window.Bokeh.index;", "view registry", "index"),
    ("const v = B.index.find(model);", "view registry", "index"),
    ("await B.embed.add_document_standalone(doc, el, roots);", "undocumented name",
     "add_document_standalone"),
    ("const v = B.documents[0].views.find_one(model);", "undocumented name", "find_one"),
    ("if (doc.is_idle) { go(); }", "undocumented name", "is_idle"),
    ("const m = [...doc.all_models];", "undocumented name", "all_models"),
    ("for (const c of view.child_views) {}", "undocumented name", "child_views"),
    ("view.button_el.disabled = true;", "undocumented name", "button_el"),
    ("const root = view.el;", "view's element", "el"),
    ("const d = this.model.document;", "model's document", "document"),
    ("if (model.properties.x) {}", "property descriptors", "properties"),
    ("PlotView.prototype.paint = f;", "view class", "PlotView"),
    ("root.querySelector('.bk-slider-title');", "Bokeh's DOM", "bk-slider-title"),
    ("e.classList.contains(\"noUi-handle\");", "Bokeh's DOM", "noUi-handle"),
    ("root.querySelector(`[data-root-id]`);", "Bokeh's DOM", "data-root-id"),
    ("root.querySelector('.pn-loading');", "Bokeh's DOM", "pn-loading"),
    ("const a = def.attributes;", "document format", "attributes"),
    ("plot.hold_render = true;", "document format", "hold_render"),
    ("if (o.type === \"object\") {}", "document format", "object"),
    ("const r = group.render_items[0];", "document format", "render_items"),
    ("const ids = items[0].roots;", "document format", "roots"),
])
def test_the_js_scanner_catches_each_kind_of_reach(snippet, kind, name):
    assert js_reaches(f"let ok = 1;\n{snippet}\n") == [(2, kind, name)]


def test_the_js_scanner_leaves_comments_and_the_documented_api_alone():
    text = ("// Bokeh.index.find_one(model).el, ._private, .bk-btn\n"
            "/* doc.is_idle */ const a = 1;  // view.el\n"
            "Bokeh.embed.embed_items(docs, items); const d = Bokeh.documents[0];\n"
            "const m = d.get_model_by_id(id); m.tags = []; m.data = {}; m.change.connect(f);\n"
            "const i = list.indexOf(x); const el = document.body; el.classList.add('ae-x');\n"
            "q.el.focus(); out.push(`${tag}.${[...el.classList].join('.')}`);\n"
            "HTMLElement.prototype.showPopover; const u = 'https://example.org/x';\n")
    assert js_reaches(text) == []


def test_bokehjs_beyond_its_embedding_api_only_in_the_fence():
    files = js_files()
    assert JS_FENCE_FILE in files
    outside = [f"{path}:{line}: {kind} {name}" for path, text in files.items()
               if path != JS_FENCE_FILE for line, kind, name in js_reaches(text)]
    assert not outside, ("BokehJS beyond its embedding API outside static/bokeh_fence.js (add "
                         "a function there, named in its header with why):\n"
                         + "\n".join(outside))


def test_every_bokehjs_internal_the_fence_uses_is_named_in_its_header():
    text = (ROOT / JS_FENCE_FILE).read_text(encoding="utf-8")
    header = text[:text.index("(function")]
    used = {name for _, _, name in js_reaches(text)}
    assert {"require", "index", "el", "is_idle", "_get_css_value", "attributes",
            "hold_render"} <= used, used  # it sees them
    unnamed = {name for name in used
               if not re.search(rf"(?<![\w-]){re.escape(name)}(?![\w])", header)}
    assert not unnamed, f"{JS_FENCE_FILE} uses {sorted(unnamed)} without naming them in its header"


def test_our_browser_files_share_one_namespace_not_globals():
    # window.AE only; no file reads an old global (AEStates, AEIslands, ...): it uses
    # AE.states, ..., and so does the code Python writes into pages (tables, CustomJS)
    for path in sorted((ROOT / "app").rglob("*.py")):
        assert not OUR_GLOBALS.findall(path.read_text(encoding="utf-8")), path
    for path, text in js_files().items():
        code = JS_COMMENT.sub("", text)
        assigned = set(JS_GLOBAL.findall(code))
        assert assigned <= {"AE"}, (path, assigned)
        assert not OUR_GLOBALS.findall(code), path


def test_the_scanners_see_a_new_reach_or_global_in_a_real_file():
    text = js_files()["static/islands.js"]
    patched = text + ("\nconst view = window.Bokeh.index.find_one(model);\nview.el.remove();\n"
                      "window.AEX = 1;\n")
    new = [(kind, name) for _, kind, name in js_reaches(patched)]
    assert ("view registry", "index") in new and ("undocumented name", "find_one") in new
    assert ("view's element", "el") in new
    assert "AEX" in JS_GLOBAL.findall(JS_COMMENT.sub("", patched))


# --- Bokeh's document format, in Python -----------------------------------------------------

# A document's JSON read or written by its keys: only in the fence of the format
# (app/kit/island_documents.py) and where Panel's save is reached (app/kit/panel_internals.py).
PY_DOCUMENT_FORMAT = re.compile(
    r"""\[\s*["'](attributes|defs|roots|references|render_items)["']\s*\]"""
    r"""|\.get\(\s*["'](attributes|defs|roots|references)["']"""
    r"""|["']type["']\)?\s*==\s*["'](object)["']""")
PY_DOCUMENT_FENCE = {"app/kit/island_documents.py", "app/kit/panel_internals.py"}


def py_document_reaches(text):  # -> [(line number, key)] of the format's keys used in code
    return [(number, next(g for g in m.groups() if g))
            for number, line in enumerate(text.splitlines(), 1)
            for m in PY_DOCUMENT_FORMAT.finditer(line.split("#")[0])]


@pytest.mark.parametrize("snippet, key", [
    ('roots = item["roots"]', "roots"), ("doc['defs'] = []", "defs"),
    ('a = node.get("attributes")', "attributes"), ('if node.get("type") == "object":', "object"),
])
def test_the_python_scanner_catches_each_document_key(snippet, key):
    assert py_document_reaches(f"x = 1\n{snippet}\n") == [(2, key)]


def test_bokehs_document_format_only_in_its_fence():
    fence_hits = py_document_reaches((ROOT / "app/kit/island_documents.py").read_text())
    assert fence_hits, "the scanner no longer sees the fence's own edits"
    outside = [f"{path.relative_to(ROOT)}:{line}: {key}"
               for path in sorted((ROOT / "app").rglob("*.py"))
               if path.relative_to(ROOT).as_posix() not in PY_DOCUMENT_FENCE
               for line, key in py_document_reaches(path.read_text(encoding="utf-8"))]
    assert not outside, ("a document's JSON read by its keys outside app/kit/island_documents.py"
                         ":\n" + "\n".join(outside))
