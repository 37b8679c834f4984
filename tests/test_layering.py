"""attention_core imports no UI and no torch, so it runs wherever numpy runs."""

import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]


def test_attention_core_imports_no_ui_or_torch():
    modules = sorted(p.stem for p in (ROOT / "attention_core").glob("*.py") if p.stem != "__init__")
    code = (
        "import sys\n"
        + "".join(f"import attention_core.{m}\n" for m in modules)
        + "bad = [m for m in ('panel', 'bokeh', 'torch', 'param', 'kernels', 'app') if m in sys.modules]\n"
        "print(','.join(bad))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "", f"attention_core pulled in: {out.stdout.strip()}"
    assert len(modules) >= 8
