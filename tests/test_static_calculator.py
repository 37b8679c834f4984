"""Your own config.json on the static /cost page, without a browser: the build writes the
calculator's box into that page's own HTML, once, under the panel's island and outside its
Bokeh document (the mounted panel only points to it), loads static/cost_calculator.js on that
page alone (the twin of the cost core beside it, fetched on first use), and the calculator's
number formats are app/kit/fmt.py's. tests/browser/test_static_calculator.py drives it in
Chromium.
"""

import json
import random
import re
import shutil
import subprocess
from html.parser import HTMLParser

import pytest

from app.hosting import build, routes
from app.kit import fmt, states
from app.panels.cost import CostPanel
from app.panels.decode_bill import DecodeBillPanel
from app.panels.memory_bill import MemoryBillPanel
from app.panels.model_picker import CALCULATOR_CLASS, CALCULATOR_ID, CALCULATOR_POINTER

CALCULATOR_JS = build.STATIC_DIR / "cost_calculator.js"
SCRIPT = re.compile(r'<script src="([^"]*/cost_calculator\.js)" data-model="([^"]*)">')


def node():
    found = shutil.which("node") or shutil.which("nodejs")
    if not found:
        pytest.fail("node is not installed (Debian: apt-get install nodejs)")
    return found


def picker_html(viewer):  # -> the HTML of every pane of a viewer's picker, joined
    import panel as pn

    viewer.__panel__()
    return "".join(str(p.object) for p in viewer.picker._layout.select(pn.pane.HTML))


def test_no_panel_holds_the_box_and_only_the_cost_panels_own_static_page_points_to_it():
    with states.static_build():
        own = picker_html(CostPanel())
        others = [picker_html(CostPanel(in_chapter=True)),  # the chapter keeps the live button
                  picker_html(DecodeBillPanel()), picker_html(MemoryBillPanel())]
    live = picker_html(CostPanel())  # a live page takes an upload instead
    assert CALCULATOR_POINTER in own and f'href="#{CALCULATOR_ID}"' in own
    for text in [own, live, *others]:
        assert CALCULATOR_CLASS not in text  # the box is the page's: the build writes it
    assert not any(CALCULATOR_POINTER in text for text in [live, *others])


@pytest.fixture(scope="module")
def rendered():  # -> {route: (page text, {doc path: script})}, default theme, no files
    assets = build.Assets(build.site_files())
    titles = routes.titles({p.route: None for p in build.pages()})
    out = {}
    for page in build.pages():
        text, _, docs = build.render(page, titles[page.route], "default", assets)
        out[page.route] = (text, docs)
    return assets, out


def test_the_cost_page_loads_the_calculator_and_names_the_twin(rendered):
    assets, pages = rendered
    text, docs = pages["/cost"]
    assert not any(CALCULATOR_CLASS in script for script in docs.values())  # not Bokeh's
    assert text.count(CALCULATOR_CLASS) == 1 and text.count(f'id="{CALCULATOR_ID}"') == 1
    (src, model), = SCRIPT.findall(text)
    assert src == f"../{assets.calculator_out}/cost_calculator.js"
    assert model == f"../{assets.calculator_out}/cost_model.js"
    # right after the box, neither async nor deferred: it fills the box as the parser gets there
    assert re.search(r'<div class="ae-cost-calculator".*?</div>\n' + SCRIPT.pattern, text)
    assert "cost_model.js" not in SCRIPT.sub("", text)  # the twin: only named, not loaded


def test_other_pages_do_not_load_it(rendered):
    assets, pages = rendered
    for route, (text, docs) in pages.items():
        if route == "/cost":
            continue
        assert "cost_calculator" not in text and assets.calculator_out not in text, route
        assert CALCULATOR_CLASS not in text, route
        assert not any(CALCULATOR_CLASS in script for script in docs.values()), route


VOID = frozenset({"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta",
                  "source", "track", "wbr"})  # elements with no end tag


class Boxes(HTMLParser):
    """A page's calculator boxes: for each, the elements it sits in, as [(tag, {class})]."""

    def __init__(self):
        super().__init__()
        self.open, self.found = [], []

    def handle_starttag(self, tag, attrs):
        classes = set((dict(attrs).get("class") or "").split())
        if CALCULATOR_CLASS in classes:
            self.found.append(list(self.open))
        if tag not in VOID:
            self.open.append((tag, classes))

    def handle_endtag(self, tag):
        while self.open:  # an element left open by the page closes with its parent
            if self.open.pop()[0] == tag:
                break


def boxes_in(text):
    parser = Boxes()
    parser.feed(text)
    parser.close()
    return parser.found


@pytest.mark.parametrize("name", ["index.html", "index-dark.html"])
def test_the_built_cost_page_holds_the_box_once_in_its_main_outside_the_island(site_build,
                                                                                name):
    (around,) = boxes_in((site_build / "cost" / name).read_text(encoding="utf-8"))
    assert [tag for tag, _ in around] == ["html", "body", "main"]  # the article's own
    classes = set().union(*(c for _, c in around))
    # not in the island: neither Bokeh's root nor the still, which mounting removes
    assert not classes & {"ae-island", "ae-island-root", "ae-island-still"}, classes
    docs = sorted((site_build / "assets" / "docs").glob("cost-*.js"))
    assert docs and not any(CALCULATOR_CLASS in d.read_text(encoding="utf-8") for d in docs)
    for page in site_build.rglob("*.html"):  # no other page holds one
        if page.parent.name != "cost":
            assert not boxes_in(page.read_text(encoding="utf-8")), page


def test_the_shipped_files_are_the_calculator_and_the_twin_with_its_table(tmp_path):
    from app.hosting import cost_model_data

    files = build.calculator_files()
    assert files["cost_calculator.js"] == CALCULATOR_JS.read_bytes()
    twin = files["cost_model.js"].decode()
    parts = [(build.STATIC_DIR / name).read_text().rstrip() for name in build.COST_MODEL_PARTS]
    assert twin.startswith("\n".join(parts)) and parts[-1].rstrip().endswith("})();")
    assert twin.endswith(cost_model_data.table_script())
    probe = ("const vm = require('vm'), ctx = {}; ctx.window = ctx; vm.createContext(ctx);"
             "vm.runInContext(require('fs').readFileSync(process.argv[1], 'utf8'), ctx);"
             "const cm = ctx.AE.costModel.create(ctx.AE.costModel.table);"
             "console.log(String(cm.pair_flops(cm.preset('qwen3-8b'))));")
    path = tmp_path / "cost_model.js"
    path.write_text(twin)
    got = subprocess.run([node(), "-e", probe, str(path)], capture_output=True, text=True,
                         timeout=60, check=True).stdout
    assert got.strip() == "589824"


# the calculator in node, with no page: what it adds to window, and its formats
HARNESS = """
const vm = require("vm"), fs = require("fs");
const doc = {currentScript: null, readyState: "complete", addEventListener() {},
             querySelectorAll: () => []};
const ctx = {document: doc, URL, BigInt, console};
ctx.window = ctx;
vm.createContext(ctx);
const before = new Set(Object.keys(ctx));
vm.runInContext(fs.readFileSync(process.argv[1], "utf8"), ctx);
const f = ctx.AE.costCalculator.fmt;
const xs = JSON.parse(fs.readFileSync(0, "utf8"));
console.log(JSON.stringify({
  globals: Object.keys(ctx).filter((k) => !before.has(k)), ae: Object.keys(ctx.AE),
  out: xs.map(([s, v]) => [f.percent(s), f.significant(v, 2), f.significant(v, 3),
    f.gbAndGib(v), f.scaleWords(v), f.scaleWords(v, 2), f.thousands(v), f.fixed(v, 1, false),
    f.tokensOrNever(v)])}));
"""


def test_one_global_and_the_formats_are_app_fmts():
    r = random.Random(30)
    xs = [[0.5, 0.5], [0.125, 2.5], [0.995, 999.5], [0.0, 0.0], [0.99999, 125.0],
          [0.00496, 122.5], [0.0739, 15.009], [1 - 1e-9, 1e21]]
    for i in range(3000):  # shares near 0 and 1; sizes from 1 to 1e16, ties (x.5) among them
        share = (r.random() ** r.choice([1, 3, 8]) if i % 7
                 else 1 - r.random() * 10 ** -r.randint(1, 9))
        size = 10 ** r.uniform(0, 16) if i % 3 else r.randint(0, 10 ** r.randint(1, 12)) + 0.5
        xs.append([share, size])
    done = subprocess.run([node(), "-e", HARNESS, str(CALCULATOR_JS)], input=json.dumps(xs),
                          capture_output=True, text=True, timeout=60, check=True)
    got = json.loads(done.stdout)
    assert got["globals"] == ["AE"] and got["ae"] == ["costCalculator"]
    bad = []
    for (share, size), shown in zip(xs, got["out"]):
        want = [fmt.percent(share), fmt.significant(size, 2), fmt.significant(size, 3),
                fmt.gb_and_gib(size), fmt.scale_words(size), fmt.scale_words(size, 2),
                fmt.thousands(size), f"{size:.1f}", fmt.tokens_or_never(size)]
        if shown != want:
            bad.append((share, size, shown, want))
    assert not bad, f"{len(bad)} of {len(xs)} differ, e.g. {bad[:2]}"


def test_the_calculator_sends_nothing():
    source = CALCULATOR_JS.read_text()
    for word in ("fetch(", "XMLHttpRequest", "sendBeacon", "WebSocket", "localStorage"):
        assert word not in source, word
