"""Dependencies point one way: app -> kernels -> attention_core, app -> attention_core.

- attention_core imports no panel, bokeh, param, torch, kernels or app at import time, so it
  runs wherever numpy runs;
- only attention_core.attend reaches kernels (and torch), and only inside the call;
- kernels builds on attention_core.reference, never on attention_core.attend (which reaches
  back into kernels);
- no module of the project imports a module that imports it back, lazily or not (app/ has
  a list of the cycles it still has to break, KNOWN_APP_CYCLES, which may only shrink);
- every public function of the core runs with torch blocked, and the core's tests pass so;
- app/'s folders stack, bottom up: lab (the kernel lab's engine), kit (states, readouts, URL
  binding, chrome, the registry, the Panel/Bokeh fence), panels, chapters, hosting; a module
  imports its own folder and those below, never above. Only app/hosting imports app/hosting;
  app/lab imports no panel, bokeh or param, torch only inside its jobs, and only the lab
  panel drives it; app/panels/cost_base serves the cost panels alone.

The static checks read the source with ast, so an import inside a function counts too.
"""

import ast
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CORE = ROOT / "attention_core"
PACKAGES = ("attention_core", "kernels", "app")
FORBIDDEN = ("panel", "bokeh", "param", "torch", "kernels", "app")
# the core's own unit tests: they must pass on a machine without torch
CORE_TESTS = ("test_head.py", "test_costs.py", "test_numerics.py", "test_online_softmax.py",
              "test_sqrt_dk.py", "test_worked_example.py")

# sitecustomize.py that makes `import torch` fail in a child process, as on a machine without it
BLOCKER = textwrap.dedent("""
    import sys

    class NoTorch:
        def find_spec(self, name, path=None, target=None):
            if name == "torch" or name.startswith("torch."):
                raise ModuleNotFoundError(f"No module named {name!r} (hidden by the test)",
                                          name=name)
            return None

    sys.meta_path.insert(0, NoTorch())
""")


def core_modules():  # -> ["attend", "claims", ...]: every module of attention_core
    return sorted(p.stem for p in CORE.glob("*.py") if p.stem != "__init__")


def module_files():  # -> {"kernels.dispatch": path, "app": path/__init__.py, ...}
    out = {}
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            parts = path.relative_to(ROOT).with_suffix("").parts
            out[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return out


def imports(path, module):  # -> [(imported name, function it sits in or None)], relative resolved
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    out = []

    def visit(node, function):
        for child in ast.iter_child_nodes(node):
            inside = child.name if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)) \
                else function
            if isinstance(child, ast.Import):
                out.extend((a.name, function) for a in child.names)
            elif isinstance(child, ast.ImportFrom):
                base = child.module or ""
                if child.level:
                    parts = package.split(".")
                    parts = parts[:len(parts) - child.level + 1]
                    base = ".".join(parts + ([base] if base else []))
                out.append((base, function))
                out.extend((f"{base}.{a.name}", function) for a in child.names)
            visit(child, inside)

    visit(tree, None)
    return out


def root(name):
    return name.split(".")[0]


def child(code, extra_path=(), timeout=180):  # -> CompletedProcess of `python -c code`
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([*map(str, extra_path), str(ROOT)]))
    return subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True,
                          text=True, check=False, timeout=timeout)


# --- import time -----------------------------------------------------------------------

def test_attention_core_imports_no_ui_torch_or_kernels_at_import_time():
    modules = core_modules()
    code = textwrap.dedent(f"""
        import importlib, sys
        bad = {FORBIDDEN!r}
        for m in {modules!r}:  # checked after each import, so the culprit is named
            importlib.import_module("attention_core." + m)
            pulled = [b for b in bad if b in sys.modules]
            if pulled:
                print("attention_core." + m, "pulled in", ",".join(pulled))
                break
    """)
    out = child(code)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "", f"importing {out.stdout.strip()}"
    assert {"attend", "reference", "head", "costs", "claims"} <= set(modules)


def test_the_core_imports_only_numpy_the_standard_library_and_itself():
    allowed = set(sys.stdlib_module_names) | {"numpy", "attention_core", "__future__"}
    lazy = {("attend", "kernels", "attend"), ("attend", "torch", "torch_importable")}
    found = set()
    for m in core_modules():
        for name, function in imports(CORE / f"{m}.py", f"attention_core.{m}"):
            if root(name) in allowed:
                continue
            assert function is not None, \
                f"attention_core.{m} imports {name} at import time"
            found.add((m, root(name), function))
        text = (CORE / f"{m}.py").read_text(encoding="utf-8")
        assert "import_module" not in text and "__import__" not in text, m
    assert found <= lazy, f"only attend() may reach kernels (and torch): {sorted(found - lazy)}"
    assert ("attend", "kernels", "attend") in found, "attend() no longer hands work to kernels"


def test_kernels_builds_on_the_reference_not_on_the_core_entry():
    for path in sorted((ROOT / "kernels").glob("*.py")):
        names = {name for name, _ in imports(path, f"kernels.{path.stem}")}
        assert not {n for n in names if n.startswith("attention_core.attend")}, path.name
    dispatch = {name for name, _ in imports(ROOT / "kernels" / "dispatch.py", "kernels.dispatch")}
    assert "attention_core.reference" in dispatch


# Cycles in app/ that were there when this test was written, each to be broken by whoever
# owns those modules (the layering rule: no two modules import each other). A new cycle fails the
# test; so does an entry here that is gone (delete it, so the list only shrinks).
KNOWN_APP_CYCLES = set()


def import_cycles():  # -> [[modules of one cycle]] over attention_core, kernels and app
    files = module_files()
    graph = {}
    for module, path in files.items():  # an import inside a function counts as an edge too
        graph[module] = {name for name, _ in imports(path, module)
                         if name in files and name != module}
    return strongly_connected(graph)


def test_no_core_or_kernels_module_imports_a_module_that_imports_it_back():
    cycles = [c for c in import_cycles() if any(root(m) != "app" for m in c)]
    assert not cycles, f"modules that import each other (directly or round a loop): {cycles}"


def test_no_app_module_imports_a_module_that_imports_it_back():
    cycles = {tuple(c) for c in import_cycles() if all(root(m) == "app" for m in c)}
    assert not cycles - KNOWN_APP_CYCLES, (
        f"modules that import each other (directly or round a loop): "
        f"{sorted(cycles - KNOWN_APP_CYCLES)}")
    assert not KNOWN_APP_CYCLES - cycles, (
        f"these cycles are gone: delete them from KNOWN_APP_CYCLES: "
        f"{sorted(KNOWN_APP_CYCLES - cycles)}")


def strongly_connected(graph):  # {node: {node}} -> [[nodes of one cycle]] (Tarjan)
    index, low, stack, on, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                out.append(sorted(group))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_the_core_entry_reaches_kernels_only_inside_the_call():
    out = child(textwrap.dedent("""
        import sys
        import numpy as np
        import attention_core.attend as core
        before = [m for m in ("torch", "kernels") if m in sys.modules]
        q = np.ones((1, 2, 3, 4), np.float32)
        result = core.attend(q, q[:, :1], q[:, :1], causal=True)
        print(",".join(before) + "|" + str("kernels" in sys.modules) + "|" + result.backend)
    """))
    assert out.returncode == 0, out.stderr
    before, reached, backend = out.stdout.strip().split("|")
    assert before == "", f"importing attention_core.attend pulled in {before}"
    assert reached == "True" and backend != "numpy reference", (
        "with torch installed, attend() hands the work to kernels and says which kernel ran")


# --- with torch blocked ----------------------------------------------------------------

# Calls every public function of attention_core at least once; a sys.setprofile hook records
# which ran. A new public function fails the test until a call to it is added here.
WORKLOAD = textwrap.dedent("""
    import importlib, inspect, json, pkgutil, sys
    import numpy as np
    import attention_core

    modules = [importlib.import_module("attention_core." + m.name)
               for m in pkgutil.iter_modules(attention_core.__path__)]
    public = {f.__code__: m.__name__ + "." + name for m in modules
              for name, f in vars(m).items()
              if inspect.isfunction(f) and f.__module__ == m.__name__ and name[0] != "_"}
    ran = set()

    def seen(frame, event, arg):
        if event == "call" and frame.f_code in public:
            ran.add(frame.f_code)

    sys.setprofile(seen)
    from attention_core import (attend, claims, costs, dot_product, head, reference, sqrt_dk,
                                online_softmax as ol)
    rows = claims.all_claims()  # most of the core: every figure the documents quote
    assert all(r.ok for r in rows), [r.what for r in rows if not r.ok]
    assert "claim" in claims.table(rows)
    assert costs.parse_config_text('{"n_layer": 12}') == {"n_layer": 12}
    assert costs.dtype_bytes("int8") == 1
    assert costs.state_bytes(costs.preset("gpt2")) == 0  # no layer keeps a fixed state
    assert costs.decode_step_arithmetic_intensity(costs.preset("gpt2"), 1024) > 0
    awq = costs.ModelShape.from_config({**costs.PRESETS["gpt2"], "quantization_config": {
        "quant_method": "awq", "bits": 4, "group_size": 128}})
    assert costs.quantized_params(awq) == sum(c * i * o for c, i, o in costs.stack_linears(awq))
    assert "awq" in costs.weight_convention(awq, "bf16") and costs.cache_convention(awq)
    h100, gpt2 = costs.GPUS["h100-sxm"], costs.preset("gpt2")
    assert costs.decode_tokens_per_second(gpt2, h100, 1024) > 0
    assert costs.compute_bound_batch(gpt2, h100, 0) > 1
    assert dot_product.agreement([1, 0], [2, 0]) == "aligned"
    assert 89 < dot_product.angle_degrees([1, 0], [0, 1]) < 91
    assert dot_product.scale_demo().d == 128
    assert head.dot_products(8, "prefill") == 64 and head.pairs_discarded(8, "prefill", True) == 28
    assert ol.scores_held_bytes(8, block=4) == 64
    rng = np.random.default_rng(0)
    q, k, v = (rng.standard_normal((2, 4, 9, 8)).astype(np.float32) for _ in range(3))
    k, v = k[:, :2], v[:, :2]
    want = reference.numpy_attention(q, k, v, causal=True)
    np.testing.assert_allclose(reference.tiled_numpy_attention(q, k, v, causal=True, block=4),
                               want, atol=1e-5)
    tri = np.tril(np.ones((9, 9), bool))
    np.testing.assert_allclose(reference.numpy_reference(q, k, v, mask=tri), want, atol=1e-5)
    np.testing.assert_allclose(ol.naive_attention(q[0, 0], k[0, 0], v[0, 0], causal=True),
                               want[0, 0], atol=1e-5)
    np.testing.assert_allclose(ol.tiled_attention(q[0, 0], k[0, 0], v[0, 0], causal=True,
                                                  block_q=4, block_k=4).output,
                               want[0, 0], atol=1e-5)
    steps, row = ol.attention_walk(q[0, 0, -1], k[0, 0], v[0, 0])
    np.testing.assert_allclose(row, want[0, 0, -1], atol=1e-5)
    assert reference.kv_group(q.shape, k.shape, v.shape) == 2
    assert attend.as_float_arrays([1])[0].dtype == np.float32
    assert reference.per_head(lambda a, b, c: a, q, k, v).shape == q.shape
    assert reference.reference_result(q, k, v, causal=True).backend == "numpy reference"
    assert not attend.torch_importable()
    result = attend.attend(q, k, v, causal=True)
    assert result.backend == "numpy reference" and result.device == "cpu", result
    np.testing.assert_array_equal(result.output, want)
    raw = sqrt_dk.scores_over_d_k(np.ones(4), np.ones((3, 4)), [1, 4])
    assert raw.tolist() == [[1, 1, 1], [4, 4, 4]]
    assert len(sqrt_dk.effective_curve([4, 16])) == 2 and sqrt_dk.sweep_point(16).d_k == 16
    from attention_core import flash
    tiled = flash.tiled_forward(q[0, 0], q[0, 0], v[0, 0, :9], block_rows=4, block_cols=2,
                                causal=True)
    np.testing.assert_allclose(tiled.output, flash.reference(q[0, 0], q[0, 0], v[0, 0, :9],
                                                             causal=True)[0], atol=1e-5)
    assert flash.tile_count(9, 8, 4, 4, True).skipped == 3
    assert flash.block_sizes(4096, 8) == (8, 128)
    assert flash.traffic(9, 8, 4, 4).standard == 2 * (4 * 9 * 8 + 4 * 81)
    from attention_core import paged
    page = paged.page_size_bytes(16, 8, 128, 2)
    blocks = paged.num_blocks(paged.available_kv_memory(80 << 30, 0.9, 16e9, 2 << 30), page, 32)
    assert paged.logged_tokens(blocks, 16) == 16 * blocks > 0
    assert paged.max_concurrency(blocks, 16, 8192) == blocks / 512
    assert paged.kv_bytes(2, 32, 8, 128, 2, window=1, windowed_layers=32) == 32 * page // 16
    assert paged.mla_bytes(1, 1, 512, 64, 2) == 1152
    assert paged.response_flops(1, 1, 1, 1) == paged.step_flops(1, 1, 2) == 3
    from attention_core import config_families
    assert config_families.families() == config_families.FAMILIES
    assert "'x' is not one this version knows" in config_families.unknown_line("x")
    assert config_families.caches_if("bert") == "is_decoder"
    assert "'bert' then attends in both directions" in config_families.caches_if_line(
        "bert", "is_decoder")
    assert costs.indexer_layers({"indexer_types": ["full", "shared"],
                                 "layer_types": ["full_attention"] * 2}, 2) == 1
    assert config_families.keeps_no_cache("openai-gpt") and not config_families.keeps_no_cache(
        "gpt2")
    assert "'openai-gpt' keeps no KV cache" in config_families.no_cache_line("openai-gpt")
    sys.setprofile(None)
    print(json.dumps({"missing": sorted(public[c] for c in public if c not in ran),
                      "public": len(public),
                      "pulled": [m for m in ("torch", "kernels") if m in sys.modules]}))
""")


def test_every_public_core_function_runs_with_torch_blocked(tmp_path):
    (tmp_path / "sitecustomize.py").write_text(BLOCKER)
    out = child(WORKLOAD, extra_path=[tmp_path])
    assert out.returncode == 0, out.stderr + out.stdout
    report = json.loads(out.stdout.strip().splitlines()[-1])
    assert report["pulled"] == [], f"the core pulled in {report['pulled']} without torch"
    assert report["missing"] == [], (
        f"public core functions the torch-blocked workload never ran: {report['missing']}; "
        "add a call to each in tests/test_layering.py WORKLOAD")
    assert report["public"] >= 80


def test_the_core_tests_pass_with_torch_blocked(tmp_path):
    (tmp_path / "sitecustomize.py").write_text(BLOCKER)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(tmp_path), str(ROOT)]))
    tests = [str(ROOT / "tests" / name) for name in CORE_TESTS]
    out = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                          "-x", *tests], cwd=tmp_path, env=env, capture_output=True, text=True,
                         check=False, timeout=600)
    assert out.returncode == 0, out.stdout[-4000:] + out.stderr[-2000:]
    assert " passed" in out.stdout and " failed" not in out.stdout


# The folders of app/ say what depends on what: hosting (server, build, CLI, ...) sits on
# top and nothing else imports it; the kernel lab's engine (app/lab) is plain Python that
# the lab panel drives (no panel, bokeh or param, torch only inside a job); the cost panels'
# shared base is theirs alone.
def app_imports():  # -> {module: {imported app module}}, imports inside functions included
    files = module_files()
    return {module: {name for name, _ in imports(path, module) if name in files}
            for module, path in files.items() if module.startswith("app")}


# app's folders, bottom up: a module imports its own folder and those below it, never above
APP_LAYERS = ("app.lab", "app.kit", "app.panels", "app.chapters", "app.hosting")


def layer_of(module):  # -> index in APP_LAYERS; app/__init__ alone sits in none
    return next(i for i, layer in enumerate(APP_LAYERS)
                if module == layer or module.startswith(layer + "."))


def imports_up(graph):  # -> {(module, imported)} where the import runs up APP_LAYERS
    return {(module, name) for module, names in graph.items() if module != "app"
            for name in names if name.startswith("app.") and layer_of(name) > layer_of(module)}


def test_app_is_five_folders_and_its_imports_point_down():
    loose = [m for m in module_files() if m.startswith("app.") and m.count(".") == 1
             and m not in APP_LAYERS]
    assert not loose, f"modules outside app's folders: {loose}"
    graph = app_imports()
    assert not imports_up(graph), f"imports that run up {APP_LAYERS}: {imports_up(graph)}"
    # the check can fail: the kit reaching up into the chapters, as chrome once did
    graph["app.kit.chrome"] = graph["app.kit.chrome"] | {"app.chapters.content"}
    assert imports_up(graph) == {("app.kit.chrome", "app.chapters.content")}


def test_only_hosting_imports_hosting():
    reach = {module: sorted(n for n in names if n.startswith("app.hosting"))
             for module, names in app_imports().items() if not module.startswith("app.hosting")}
    assert not {m: n for m, n in reach.items() if n}


def test_the_lab_engine_is_plain_python_and_only_the_lab_panel_drives_it():
    files = module_files()
    for module, path in files.items():
        if module.startswith("app.lab"):
            names = {name.split(".")[0] for name, _ in imports(path, module)}
            assert not names & {"panel", "bokeh", "param"}, module
            others = {n for n in app_imports()[module] if n.startswith("app.")
                      and not n.startswith("app.lab")}  # kernels and the core it may use
            assert not others, module
            top_level_torch = [n for n, function in imports(path, module)
                               if n.split(".")[0] == "torch" and function is None]
            assert not top_level_torch, module
    users = {m for m, names in app_imports().items()
             if any(n.startswith("app.lab") for n in names) and not m.startswith("app.lab")}
    # the lab panel and its own modules (words, charts, page), nothing else
    assert "app.panels.kernel_lab" in users
    assert all(m.startswith("app.panels.kernel_lab") for m in users), users


def test_the_cost_base_serves_the_cost_panels_alone():
    users = {m for m, names in app_imports().items() if "app.panels.cost_base" in names}
    assert users and all(m.startswith("app.panels.") for m in users)


# a script `panel serve` runs: building its page when run is its one job
SCRIPTS = ("app.hosting.serve_panel",)
IMPORT_EVERYTHING = textwrap.dedent("""
    import importlib, json, socket, sys, threading
    opened = []
    real = socket.socket

    class Watched(real):
        def __init__(self, *args, **kwargs):
            opened.append(repr(args))
            super().__init__(*args, **kwargs)

    socket.socket = Watched
    for name in json.loads(sys.argv[1]):
        importlib.import_module(name)
    print(json.dumps({"torch": sorted(m for m in sys.modules if m.split(".")[0] == "torch"),
                      "threads": [t.name for t in threading.enumerate()],
                      "sockets": opened}))
""")


def test_importing_any_module_of_app_loads_no_torch_starts_no_thread_opens_no_socket():
    names = sorted(n for n in module_files() if n.split(".")[0] == "app" and n not in SCRIPTS)
    assert "app.panels.kernel_lab" in names and "app.hosting.server" in names
    done = subprocess.run([sys.executable, "-c", IMPORT_EVERYTHING, json.dumps(names)],
                          cwd=ROOT, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    found = json.loads(done.stdout.strip().splitlines()[-1])
    assert found == {"torch": [], "threads": ["MainThread"], "sockets": []}, found


def test_the_kernel_lab_loads_torch_when_its_first_lab_is_built():  # the check above can fail
    code = ("import sys; from app.panels import kernel_lab; assert 'torch' not in sys.modules; "
            "kernel_lab.KernelLabPanel(); print('torch' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                          text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip().splitlines()[-1] == "True"
