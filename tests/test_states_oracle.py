"""Every value of every precomputed table of the static build, against an independent oracle.

A static page switches states in the browser from assets/states/<Panel>-<hash>.js, each table
made by the panel's own `state()`. The browser tests compare those tables with `state()`, the
function that made them: they cannot see a value that is wrong in both. tests/oracle.py
recomputes each value from the documents' definitions with numpy alone (nothing of `app` or
`attention_core`), reading the files as the browser does; a disagreement names the panel, the
state (its controls) and the value.
"""

import copy
import re

import pytest

from tests import oracle

STATES = "assets/states"
# panels whose tables the oracle does not recompute, and why (none: a new panel must be added)
NOT_COVERED = {}
# per panel, a value to change in a copy of its table: (target, key), a number in it
CHANGE = {
    "HeadPanel": ("holes:hero", "eff"),
    "CostPanel": ("holes:prefill", "share"),
    "DecodeBillPanel": ("holes:ops", "share"),
    "MemoryBillPanel": ("holes:cache", "kv_all"),
    "OverflowPanel": ("holes:table", "e1"),
    "OnlineSoftmaxPanel": ("holes:history", "hl0"),
    "SqrtDkPanel": ("source:curve", "mean_scaled"),
    "LadderPanel": ("holes:context", "total"),
    "AgreementPanel": ("holes:verdict", "cos"),
    "ShapesPanel": ("holes:shapes", "where"),
    "BlockPanel": ("holes:block", "params"),
    "TilesPanel": ("holes:step", "l0"),
    "TrafficPanel": ("holes:traffic", "tiled"),
    "BlocksPanel": ("holes:blocks", "tokens1"),
    "FitPanel": ("holes:fit", "page"),
}


@pytest.fixture(scope="module")
def tables(site_build):  # -> {panel: (ref, table)} of the built site, read as a browser would
    out = {}
    for path in sorted((site_build / STATES).glob("*.js")):
        ref, table = oracle.read_states_file(path)
        out[ref.rpartition("-")[0]] = (ref, table)
    return out


def test_the_oracle_knows_every_panel_the_site_ships(tables):
    assert set(tables) == set(oracle.CHECKS) | set(NOT_COVERED), (
        f"shipped: {sorted(tables)}; recomputed: {sorted(oracle.CHECKS)}; "
        f"not covered: {sorted(NOT_COVERED)}")
    assert set(CHANGE) == set(oracle.CHECKS)


@pytest.mark.parametrize("panel", sorted(oracle.CHECKS))
def test_every_precomputed_value_agrees_with_the_oracle(panel, tables):
    ref, table = tables[panel]
    found = oracle.problems(ref, table)
    assert not found, f"{len(found)} values disagree:\n" + "\n".join(found[:40])


def bumped(value):  # a number, or a text holding one, changed visibly
    if isinstance(value, list):
        return [bumped(value[0]), *value[1:]]
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return value * 1.5 + 1
    match = re.search(r"\d", value)
    return value[:match.start()] + str((int(match.group()) + 1) % 10) + value[match.end():]


def states_using(table, part, index):  # -> the controls of every state showing that value
    combos = oracle.Table(table).combos(part)  # in the order of the part's index
    return [params for params, i in zip(combos, part["index"], strict=True) if i == index]


@pytest.mark.parametrize("panel", sorted(CHANGE))
def test_a_value_changed_in_a_copy_of_a_built_table_fails_naming_its_state(panel, tables):
    ref, table = tables[panel]
    target, key = CHANGE[panel]
    changed = copy.deepcopy(table)
    part = next(p for p in changed["parts"] if target in p["values"][0])
    index = next(i for i, v in enumerate(part["values"])
                 if v[target][key] not in ("", [], None) and re.search(r"\d", str(v[target][key])))
    part["values"][index][target][key] = bumped(part["values"][index][target][key])
    found = oracle.problems(ref, changed)
    assert found, f"{panel}: {target}.{key} changed, and the oracle saw nothing"
    short = target.partition(":")[2]
    named = [line for line in found if f"{short}.{key}" in line]
    assert named, found[:5]
    for params in states_using(table, part, index):  # every state showing it is named
        where = ", ".join(f"{k}={v}" for k, v in params.items())
        assert any(line.startswith(f"{panel} [{where}] {short}.{key}") for line in named), (
            where, named[:5])


# the modules the oracle may import: the standard library's plain tools and numpy. Nothing
# that loads code (importlib, runpy, pkgutil, imp), so nothing of the project can run in it
ORACLE_MAY_IMPORT = {"__future__", "ast", "functools", "itertools", "json", "math", "re",
                     "pathlib", "numpy"}
# names that load or run code however they are reached (a name, an attribute, a string)
CODE_LOADERS = {"importlib", "import_module", "spec_from_file_location", "module_from_spec",
                "exec_module", "SourceFileLoader", "run_path", "run_module", "__import__",
                "exec", "eval", "runpy", "pkgutil", "imp"}
# builtins that run code, refused when called by name (re.compile is an attribute: fine)
RUNNING_BUILTINS = {"exec", "eval", "compile", "__import__"}


def independence_problems(source):  # the oracle's source -> how it could reach project code
    import ast

    tree = ast.parse(source)
    out = []
    names = {alias.name.split(".")[0] for node in ast.walk(tree)
             if isinstance(node, ast.Import) for alias in node.names}
    names |= {(node.module or "").split(".")[0] for node in ast.walk(tree)
              if isinstance(node, ast.ImportFrom)}
    if names & {"app", "attention_core", "tests", "kernels"}:
        out.append(f"imports the project: {sorted(names & {'app', 'attention_core', 'tests'})}")
    if names - ORACLE_MAY_IMPORT:
        out.append(f"imports what it may not: {sorted(names - ORACLE_MAY_IMPORT)}")
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id in CODE_LOADERS | RUNNING_BUILTINS:
            used = node.id
        elif isinstance(node, ast.Attribute) and node.attr in CODE_LOADERS:
            used = node.attr
        elif isinstance(node, ast.Constant) and node.value in CODE_LOADERS:
            used = node.value
        else:
            continue
        out.append(f"line {node.lineno}: uses {used!r}, which loads or runs code")
    return out


def test_the_oracle_imports_nothing_of_the_app_or_the_core():
    source = oracle.ROOT.joinpath("tests", "oracle.py").read_text(encoding="utf-8")
    assert independence_problems(source) == []


@pytest.mark.parametrize("snippet, says", [
    (("import importlib.util\n"
      "spec = importlib.util.spec_from_file_location('m', 'attention_core/head.py')\n"),
     "importlib"),
    ("from importlib import util\nutil.spec_from_file_location('m', 'x.py')\n", "importlib"),
    ("from importlib.machinery import SourceFileLoader\n", "importlib"),
    ("import runpy\nrunpy.run_path('attention_core/costs.py')\n", "runpy"),
    ("m = __import__('attention_core.costs')\n", "__import__"),
    ("exec(open('attention_core/costs.py').read())\n", "exec"),
    ("code = compile('x = 1', 'f', 'exec')\n", "compile"),
    ("import re\npattern = re.compile('x')\n", None),  # a regular expression is not code
    ("import sys\nf = getattr(sys.modules['builtins'], 'exec')\n", "sys"),
    ("from attention_core import costs\n", "imports the project"),
    ("import ast\ndata = ast.literal_eval('(1, 2)')\n", None),  # reading data is allowed
])
def test_the_guard_refuses_code_that_loads_code(snippet, says):  # a positive control
    found = independence_problems(snippet)
    if says is None:
        assert found == []
    else:
        assert found and any(says in p for p in found), found
