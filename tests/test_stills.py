"""A still picture of each chart (app/chapters/stills.py), the canonical link and the inline
stylesheet.

- Every panel's every Bokeh figure, in its default state, draws as an SVG with role="img",
  an accessible name, and the numbers its figure holds (the head's weights, the cost's
  crossover); a glyph the still cannot draw fails loudly, not silently.
- `build --site-url URL` gives every page `<link rel="canonical" href="URL + route">` and an
  absolute og:url; without it a page names no canonical (a wrong one is worse than none).
- The stylesheet is inlined without comments and spacing, and keeps every rule.
"""

import importlib
import re

import panel as pn
import pytest
from bokeh.document import Document
from panel.io.state import set_curdoc

from app.chapters import chapter_page, stills
from app.hosting import build, cli, routes
from app.kit import chrome, resources, states


def figures(route):  # -> the Bokeh figures of a panel page, as built in a static build
    with states.static_build(), set_curdoc(Document()):
        chrome.apply_figure_theme()
        obj = routes.page_factory(routes.PANEL_ROUTES[route])(static=True)  # the build's page
        layout = obj.__panel__() if isinstance(obj, pn.viewable.Viewer) else obj
        return [fig for pane in layout.select(pn.pane.Bokeh) if pane.visible
                for fig in stills.plots_of(pane.object) if fig.visible]


@pytest.mark.parametrize("route", list(routes.PANEL_ROUTES))
def test_every_chart_draws_as_a_named_svg(route):
    for fig in figures(route):
        svg = stills.figure_svg(fig)
        assert svg.startswith('<svg class="ae-chart" viewBox="0 0 ') and svg.endswith("</svg>")
        assert ' role="img" aria-label="' in svg
        name = re.search(r'aria-label="([^"]+)"', svg).group(1)
        assert len(name) > 20, name
        assert "font-size" not in svg  # 12 px type from chapter.css, never smaller
        assert len(svg) < 5000, f"{route}: a still of {len(svg)} bytes"
        width = float(re.search(r'viewBox="0 0 ([\d.]+)', svg).group(1))
        assert width <= stills.W  # a phone's still box shows it at 1:1 or larger


def test_the_heads_still_writes_its_default_weights():
    (fig,) = figures("/heatmap")
    svg = stills.figure_svg(fig)
    for weight in ("1.00", "0.85", "0.77", "0.16", "0.37"):
        assert f">{weight}</text>" in svg
    assert svg.count("−∞") == 15  # the masked cells of six tokens
    # a label's ink is the one its cell's shade gives, in either theme: not the page's ink
    def ink_of(label):  # -> the fill of the <g> around a cell's label
        group = r'<g fill="(#[0-9a-f]{6})"[^>]*>(?:<text[^>]*>[^<]*</text>)*?<text[^>]*>'
        return re.search(group + re.escape(label) + "<", svg).group(1)

    assert ink_of("0.07") == "#ffffff" and ink_of("1.00") == "#000000"
    assert "Heat map" in svg


def test_the_cost_still_marks_its_crossover():
    (fig,) = figures("/cost")
    svg = stills.figure_svg(fig)
    assert "crossover 51,324" in svg and "max position 40,960" in svg
    assert "prompt length, tokens (log scale)" in svg
    assert "triangular (n²/2 pairs)" in svg  # the legend


def test_a_glyph_the_still_cannot_draw_fails_the_build():
    from bokeh.plotting import figure

    fig = figure(width=300, height=200, x_range=(0, 1), y_range=(0, 1))
    fig.hex_tile(q=[0], r=[0])
    with pytest.raises(stills.StillError, match="HexTile"):
        stills.figure_svg(fig)
    with pytest.raises(stills.StillError, match="DataRange1d"):
        stills.figure_svg(figure(width=300, height=200))


def test_a_still_keeps_the_numbers_and_drops_what_only_the_live_panel_uses():
    text = ('<div class="ae-note" role="status" data-s="url"></div><p aria-live="polite">'
            '<b data-s="n">36</b><span data-s="x"></span></p><table><tr><td>1</td>'
            '<td></td><td>2</td><td></td></tr><tr><td></td></tr></table>')
    assert chapter_page.still_html(text) == ("<p><b>36</b></p><table><tr><td>1</td><td></td>"
                                             "<td>2</td></tr></table>")


def test_a_still_drops_a_line_its_panels_stylesheet_hides_while_its_hole_is_empty():
    # online softmax's "All n scores read" line before the last block, agreement's angle of a
    # zero vector: the live panel hides them by CSS (:has(> b:empty)); a still has no such rule
    end = ('<div class="ae-end">All <span data-s="n">{n}</span> read, sum <b data-s="s">{s}</b>'
           '.</div><div class="ae-if">angle <b data-s="a">{a}</b></div>'
           '<div class="ae-if">tiled <span data-s="t">{t}</span></div><p>next</p>')
    assert chapter_page.still_html(end.format(n="", s="", a="", t="")) == "<p>next</p>"
    assert chapter_page.still_html(end.format(n="4", s="2.1", a="", t="")) == (
        '<div class="ae-end">All <span>4</span> read, sum <b>2.1</b>.</div><p>next</p>')
    assert chapter_page.still_html(end.format(n="", s="", a="90°", t="[1]")) == (
        '<div class="ae-if">angle <b>90°</b></div><div class="ae-if">tiled <span>[1]</span>'
        '</div><p>next</p>')


def test_the_inline_stylesheet_keeps_every_rule():
    css = resources.static_file("chapter.css").read_text(encoding="utf-8")
    small = chapter_page.minify_css(css)
    assert len(small) < 0.85 * len(css)
    assert "/*" not in small and "\n" not in small
    bare = re.sub(r"/\*.*?\*/", "", css, flags=re.DOTALL)
    assert small.count("{") == bare.count("{") and small.count("}") == bare.count("}")
    assert ".ae-article>:not(.ae-island){" in small  # a selector's colon keeps its place
    assert 'font-family:system-ui,-apple-system,"Segoe UI"' in small


def rendered(route, site_url):
    page = next(p for p in build.pages() if p.route == route)
    assets = build.Assets(build.site_files())
    text, _, _ = build.render(page, routes.title(route), "dark", assets, site_url=site_url)
    return text.split("</head>", 1)[0]


def test_with_a_site_url_every_page_names_its_canonical_address():
    head = rendered("/heatmap", "https://explorable.example.edu/attention")
    assert ('<link rel="canonical" href="https://explorable.example.edu/attention/heatmap">'
            in head)  # the dark page names the same address as the light one
    assert ('<meta property="og:url" content="https://explorable.example.edu/attention/heatmap">'
            in head)
    assert 'href="https://explorable.example.edu/attention/"' in rendered(
        "/", "https://explorable.example.edu/attention")


def test_without_a_site_url_a_page_names_no_canonical():
    head = rendered("/cost", None)
    assert "canonical" not in head and "og:url" not in head


def test_the_site_url_option_takes_an_http_address_only():
    args = cli.parser().parse_args(["build", "out", "--site-url", "https://x.example/a/"])
    assert args.site_url == "https://x.example/a"
    with pytest.raises(SystemExit):
        cli.parser().parse_args(["build", "out", "--site-url", "javascript:alert(1)"])
    help_text = cli.parser()._subparsers._group_actions[0].choices["build"].format_help()
    assert "no canonical link" in " ".join(help_text.split())
    assert build.inputs_hash() != build.inputs_hash(site_url="https://x.example")


def described(route):  # -> a panel page's description, as the build writes it
    module = importlib.import_module(routes.PANEL_ROUTES[route].split(":")[0])
    return chapter_page.panel_description(module, routes.title(route))


@pytest.mark.parametrize("route", sorted(routes.PANEL_ROUTES))
def test_a_panel_pages_description_is_a_sentence_for_readers(route):
    # the first paragraph of the panel module's docstring is what a link preview shows: a
    # sentence about the panel, not a note to the code's maintainer
    about = described(route)
    assert 30 <= len(about) <= 260, about
    assert about[0].isupper() and about.endswith("."), about
    for code_word in ("`", "()", "Viewer", "module", "docstring", "session", "param", ".py"):
        assert code_word not in about, (code_word, about)
    others = {described(r) for r in routes.PANEL_ROUTES if r != route}
    assert about not in others  # each page says what is on it
