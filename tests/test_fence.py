"""One fence per language: the private names of Panel, Bokeh, Tornado and torch are reached only
from the fenced modules, and no module reads another of our modules' private names.

Python: app/panel_internals.py (Panel, Bokeh, Tornado) and kernels/torch_internals.py (torch)
are the only files that may touch a private name (`x._name`, getattr(x, "_name"), an
import of a private name or module) of those packages; each such name is listed in the
fence's INTERNALS with why. JS: the section of static/switcher.js between its fence
markers is the only place in static/ that reaches a private BokehJS name (`._name`).

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
FENCES = {"app/panel_internals.py", "kernels/torch_internals.py"}
JS_FENCE_FILE = "static/switcher.js"
JS_FENCE_START = "// ==== fence: BokehJS internals"
JS_FENCE_END = "// ==== end of fence"


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
                         "app/panel_internals.py and kernels/torch_internals.py (add a "
                         "function there, listed in its INTERNALS with why):\n"
                         + "\n".join(outside))


def test_no_module_reads_another_modules_private_names(scanned):
    reads = [f"{path}:{line}: {text}" for path, found in scanned.items()
             for line, kind, text in found if kind == "ours"]
    assert not reads, "give the module a public name for it:\n" + "\n".join(reads)


@pytest.mark.parametrize("path, module", [("app/panel_internals.py", "app.panel_internals"),
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

JS_PRIVATE = re.compile(r"\.\s*_[A-Za-z]\w*|\[\s*[\"'`]_[A-Za-z]\w*[\"'`]\s*\]")
JS_COMMENT = re.compile(r"/\*.*?\*/|(?:^|(?<=\s))//[^\n]*", re.DOTALL)


def js_private_lines(text):  # -> [(line number, access)] outside comments and the fence
    out, fenced = [], False
    for number, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        if stripped.startswith(JS_FENCE_START):
            fenced = True
        elif stripped.startswith(JS_FENCE_END):
            fenced = False
        if fenced:
            continue
        code = JS_COMMENT.sub("", line)
        out += [(number, m.group(0)) for m in JS_PRIVATE.finditer(code)]
    return out


def test_the_js_scanner_catches_a_private_outside_the_fence():
    text = ("const a = doc._all_models;  // ._not_this\n"
            f"  {JS_FENCE_START} ===\n  proto._update = f;\n  {JS_FENCE_END} ===\n"
            "x['_models']; y.all_models; // z._comment\n")
    assert js_private_lines(text) == [(1, "._all_models"), (5, "['_models']")]


def test_bokehjs_privates_only_in_the_switchers_fence():
    fences = {}
    for path in sorted((ROOT / "static").glob("*.js")):
        rel = path.relative_to(ROOT).as_posix()
        text = path.read_text(encoding="utf-8")
        fences[rel] = text.count(JS_FENCE_START)
        found = js_private_lines(text)
        assert not found, f"{rel}: BokehJS privates outside the fence: {found}"
    assert fences == {p: int(p == JS_FENCE_FILE) for p in fences}, fences


def test_every_private_in_the_js_fence_is_named_in_its_header():
    text = (ROOT / JS_FENCE_FILE).read_text(encoding="utf-8")
    fence = text[text.index(JS_FENCE_START):text.index(JS_FENCE_END)]
    header = "\n".join(line for line in fence.splitlines() if line.strip().startswith("//"))
    code = JS_COMMENT.sub("", fence)
    used = {m.group(0).lstrip(".").strip() for m in JS_PRIVATE.finditer(code)}
    assert used and all(name in header for name in used), (used, header[:400])
