"""Without torch: attention_core.attend and kernels.attend fall back to the numpy reference,
and their results say so (backend "numpy reference").

A sitecustomize.py in a temporary folder put first on PYTHONPATH installs an import hook
that makes `import torch` raise ImportError in the child process, as on a machine without it.
"""

import os
import pathlib
import subprocess
import sys
import textwrap

ROOT = pathlib.Path(__file__).resolve().parents[1]

from tests.test_layering import BLOCKER  # the sitecustomize.py that hides torch

CHILD = textwrap.dedent("""
    import sys
    import numpy as np

    try:
        import torch  # noqa: F401
    except ImportError:
        pass
    else:
        raise SystemExit("the blocker let torch in")

    import attention_core.attend as core
    assert "torch" not in sys.modules and "kernels" not in sys.modules

    def softmax_attention(q, k, v, causal):  # one head, written out: [n, d] x3 -> [n, d]
        s = q @ k.T / np.sqrt(q.shape[-1])
        if causal:
            s = np.where(np.triu(np.ones(s.shape, bool), 1), -np.inf, s)
        e = np.exp(s - s.max(-1, keepdims=True))
        return e / e.sum(-1, keepdims=True) @ v

    rng = np.random.default_rng(0)
    q = rng.standard_normal((2, 4, 7, 8)).astype(np.float32)
    k = rng.standard_normal((2, 2, 7, 8)).astype(np.float32)
    v = rng.standard_normal((2, 2, 7, 8)).astype(np.float32)
    want = np.stack([np.stack([softmax_attention(q[b, h], k[b, h // 2], v[b, h // 2], True)
                               for h in range(4)]) for b in range(2)])
    result = core.attend(q, k, v, causal=True)
    assert result.backend == "numpy reference", result.backend
    assert result.reasons["flash attention"] == ("torch is not installed",)
    out = result.output
    assert out.shape == (2, 4, 7, 8) and out.dtype == np.float32
    np.testing.assert_allclose(out, want, atol=1e-5)
    assert "kernels" not in sys.modules, "without torch the core entry never reaches kernels"

    import kernels
    assert kernels.AttendResult is type(result)  # one result type for both entries
    got = kernels.attend(q, k, v, causal=True, backend="auto")
    assert got.backend == "numpy reference", got.backend
    assert got.reasons["flash attention"] == ("torch is not installed",)
    np.testing.assert_allclose(got.output, want, atol=1e-5)
    assert kernels.explain(q.shape, k.shape, "float32", None, True, False).backend \\
        == "numpy reference"
    for kwargs in ({"backend": "math"}, {"backend": "flash"}, {"require_fused": True}):
        try:
            kernels.attend(q, k, v, causal=True, **kwargs)
        except kernels.KernelUnavailable as e:
            assert "torch" in str(e)
        else:
            raise SystemExit(f"{kwargs} ran without torch")
    assert "torch" not in sys.modules
    print("ok")
""")


def test_without_torch_everything_falls_back_to_numpy(tmp_path):
    (tmp_path / "sitecustomize.py").write_text(BLOCKER)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(tmp_path), str(ROOT)]))
    out = subprocess.run([sys.executable, "-c", CHILD], cwd=ROOT, env=env, capture_output=True,
                         check=False,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stderr + out.stdout
    assert out.stdout.strip() == "ok"


def test_importing_the_core_entry_does_not_import_torch():
    code = ("import sys, attention_core.attend\n"
            "bad = ('torch', 'kernels', 'panel', 'bokeh')\n"
            "print(','.join(m for m in bad if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                         check=True, timeout=120, env=dict(os.environ, PYTHONPATH=str(ROOT)))
    assert out.stdout.strip() == ""
