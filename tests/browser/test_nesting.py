"""Each panel of the registry, set two Columns below the page, still draws every figure.

A page may hold a panel deeper than the article does (a notebook, a course site's layout).
Bokeh lays out a Column that holds a figure with a layout of its own, and one so laid out
two levels down never lays out its other children: a figure inside a FlexBox there stayed
0 × 0 and the document never went idle. The decode bill's roofline did exactly that. This
serves each panel nested, on a server of its own (the app has no such route), and checks
that the document goes idle with every shown figure's plot frame larger than nothing.

Run as a script, this file is that server: `python tests/browser/test_nesting.py PORT`.
"""

import os
import subprocess
import sys
import tempfile
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from app.kit import registry

ROOT = Path(__file__).resolve().parents[2]
DEPTH = 2  # Columns between the page's own Column and the panel
HIDDEN_UNTIL_RUN = {"lab"}  # slots whose charts appear only once a sweep has run

# [width, height] of the plot frame of every figure on show
FRAMES_JS = """() => {
  const frames = [], seen = new Set();
  const walk = (view) => {
    if (view.frame !== undefined && !seen.has(view.model.id)) {
      seen.add(view.model.id);
      const box = view.el.getBoundingClientRect();
      if (box.width > 0 && box.height > 0)
        frames.push([view.frame.bbox.width, view.frame.bbox.height]);
    }
    for (const child of (view.child_views || [])) walk(child);
  };
  for (const view of Bokeh.index.all_views()) walk(view);
  return frames;
}"""

pytestmark = pytest.mark.browser


def nested_page(record):  # -> a page factory: the panel DEPTH Columns below the page
    def build():
        import panel as pn

        viewer = record.viewer_class()
        layout = viewer
        for _ in range(DEPTH):
            layout = pn.Column(layout, sizing_mode="stretch_width")
        return pn.Column(layout, sizing_mode="stretch_width")

    return build


def serve(port):
    import panel as pn

    pn.serve({f"/{r.slot}": nested_page(r) for r in registry.PANELS}, port=port,
             address="127.0.0.1", show=False, allow_websocket_origin=[f"127.0.0.1:{port}"])


@pytest.fixture(scope="module")
def nested_server():  # -> "http://127.0.0.1:PORT" serving every panel, nested
    from tests.browser import conftest

    port = conftest.free_port()
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    with tempfile.NamedTemporaryFile("w+", prefix="ae-nested-", suffix=".log",
                                     delete=False) as log:
        proc = subprocess.Popen([sys.executable, __file__, str(port)], cwd=ROOT, env=env,
                                stdout=log, stderr=subprocess.STDOUT)
        url = f"http://127.0.0.1:{port}"
        try:
            conftest.wait_until_answering(proc, f"{url}/{registry.PANELS[0].slot}", log.name)
            yield url
        finally:
            conftest.stop(proc)
    os.unlink(log.name)


@pytest.fixture
def nested_page_at(context, nested_server):  # open("/cost") -> (page, console errors)
    from tests.browser import conftest

    page = context.new_page()
    page.set_default_timeout(conftest.RENDER_TIMEOUT_MS)
    errors, off_host = [], []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(f"uncaught: {e}"))
    host = urlsplit(nested_server).netloc
    page.on("request", lambda r: off_host.append(r.url)
            if urlsplit(r.url).netloc not in ("", host) else None)

    def _open(path):
        page.goto(nested_server + path)
        return page

    yield _open
    page.close()
    assert not errors, f"console errors: {errors}"
    assert not off_host, f"requests off our server: {off_host}"


@pytest.mark.parametrize("slot", [r.slot for r in registry.PANELS])
def test_a_panel_two_columns_down_draws_every_figure(nested_page_at, slot):
    from tests.browser import conftest

    page = nested_page_at(f"/{slot}")
    try:
        page.wait_for_function(conftest.DOCUMENT_IDLE_JS, timeout=conftest.RENDER_TIMEOUT_MS)
    except Exception:  # noqa: BLE001 - say what it means, with the frames as they stand
        pytest.fail(f"{slot}, {DEPTH} Columns down: the page never finished rendering; "
                    f"plot frames {page.evaluate(FRAMES_JS)}")
    frames = page.evaluate(FRAMES_JS)
    if slot not in HIDDEN_UNTIL_RUN:
        assert frames, f"{slot}: no figure on show"
    assert all(w > 0 and h > 0 for w, h in frames), f"{slot}: a 0 × 0 plot frame: {frames}"


if __name__ == "__main__":
    serve(int(sys.argv[1]))
