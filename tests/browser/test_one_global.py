"""window.AE is the only global our scripts define (issue 39, item 3), on a static chapter
("/"), a static panel's page ("/heatmap") and a live one ("/live/heatmap"): what a page's
window holds once it is ready, less what a blank page's holds in the same browser, is AE and
the libraries' own globals listed here. Every island is mounted and the head switched once
(a deep link and a control), so the switcher and the documents' scripts have run too.
"""

import pytest

from tests.browser.conftest import wait_for_render

# globals of the libraries our pages load, each with who defines it
LIBRARIES = {
    "Bokeh": "BokehJS (bokeh.min.js)",
    "Panel": "Panel's bundle, should a version name itself (3.9 / 1.9 do not)",
    "sprintf": "sprintf-js, inside bokeh.min.js",
    "vsprintf": "sprintf-js, inside bokeh.min.js",
    "flatpickr": "flatpickr, the date picker inside bokeh-widgets.min.js",
    "UnderscoreTemplate": "SlickGrid, inside bokeh-tables.min.js (a live page loads it)",
    "importShim": "es-module-shims, which Panel loads on a live page",
}

ROUTES = ["/", "/heatmap", "/live/heatmap"]

WAIT_HEAD_JS = """() => window.AE !== undefined && (AE.states === undefined
  || [...AE.states.panels.values()].every((p) => p.booted))"""


def new_globals(page, blank):  # -> the names the page's window has that a blank page's lacks
    return sorted(set(page.evaluate("() => Object.keys(window)")) - blank)


@pytest.mark.parametrize("route", ROUTES)
def test_window_ae_is_the_only_global_our_scripts_define(page, route):
    page.goto("/health")  # a page of the same origin with no script (about:blank is not a
    blank = set(page.evaluate("() => Object.keys(window)"))  # secure context: fewer names)
    page.goto(route + ("&" if "?" in route else "?") + "mask=off")
    wait_for_render(page)
    page.wait_for_function(WAIT_HEAD_JS)
    # one control switched in the browser (static) or in the session (live)
    page.get_by_role("button", name="causal mask").first.click()
    page.wait_for_function("() => location.search.includes('mask=on')")  # the change is done
    wait_for_render(page)
    found = new_globals(page, blank)
    assert "AE" in found, found
    ours = [name for name in found if name != "AE" and name not in LIBRARIES]
    assert not ours, f"globals besides AE and the libraries' on {route}: {ours}"


def test_the_comparison_sees_a_global_a_script_adds(page):  # positive control
    page.goto("/health")
    blank = set(page.evaluate("() => Object.keys(window)"))
    page.add_script_tag(content="window.AE_PROBE = 1; var aeProbe = 2;")
    assert new_globals(page, blank) == ["AE_PROBE", "aeProbe"]
