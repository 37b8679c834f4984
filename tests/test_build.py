"""`attention-explorable build OUT`: every page as files, every asset from here, no CDN.

One build into a temporary folder, with --live-url, serves the module (about 20 s); a second
run with the same inputs must be skipped, and an OUT that cannot hold a build is one line and
exit 2.
"""

import base64
import gzip
import html
import json
import os
import re
import struct
import subprocess
import sys
import zlib
from pathlib import Path
from urllib.parse import unquote

import pytest

from app.chapters import chapter_page
from app.hosting import build
from app.hosting.server import PANEL_ROUTES
from app.kit import island_documents, registry, states
from tests.test_panel_internals import PATCHES_ON

ROOT = Path(__file__).resolve().parents[1]
ROUTES = [*(c.route for c in registry.CHAPTERS), "/numbers", *PANEL_ROUTES]
URL = re.compile(r"(?:https?:)?//[A-Za-z0-9.-]+\.[A-Za-z]{2,}[^\s\"'<>()\\]*")
NAMESPACES = ("http://www.w3.org/",)  # XML namespace names: never fetched
HEAD_REFS = re.compile(r"<(?:script|link|img|iframe)\b[^>]*?\b(?:src|href)=\"([^\"]*)\"")
JSON_SCRIPT = re.compile(r'<script type="application/json" id="[^"]+">(.*?)</script>', re.DOTALL)
INLINE_SCRIPT = re.compile(r'<script(?: data-[\w-]+="[^"]*")*>.*?</script>', re.DOTALL)
CSS_REF = re.compile(r"""url\(\s*(['"]?)([^'")]+)\1\s*\)|@import\s+(['"])([^'"]+)\3""")


def run(*args, timeout=180):
    return subprocess.run([sys.executable, "-m", "app.hosting.cli", *args], capture_output=True,
                          text=True, timeout=timeout, cwd=ROOT, check=False)


LIVE_URL = "https://explorable.example.edu/live/"  # where the build's "open live" buttons lead


@pytest.fixture(scope="module")
def site(tmp_path_factory):  # -> (OUT, the first build's stdout)
    # The CLI as a user runs it, with --live-url, in a process that first imports the server
    # and lists the routes, and last prints which of Panel's patches are on: only a live
    # server may patch Panel (app/kit/panel_internals.py), and building the whole site is the
    # slow half of that check, so it is this build's last line, not a second build.
    out = tmp_path_factory.mktemp("build") / "site"
    done = subprocess.run([sys.executable, "-c", PATCHES_ON, "build", str(out),
                           "--live-url", LIVE_URL], capture_output=True, text=True,
                          timeout=180, cwd=ROOT, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    return out, done.stdout


def page_file(out, route):
    return out / ("index.html" if route == "/" else f"{route.strip('/')}/index.html")


def files(out, *suffixes):
    return sorted(p for p in out.rglob("*") if p.is_file() and p.suffix in suffixes)


def doc_jsons(text):  # a page -> its Bokeh documents, parsed
    return [json.loads(html.unescape(m)) for m in JSON_SCRIPT.findall(text)]


ISLANDS = re.compile(r'<script type="application/json" id="ae-islands">(.*?)</script>',
                     re.DOTALL)


def islands(text):  # a page -> its islands' config (app/chapters/chapter_page.py)
    return json.loads(ISLANDS.search(text).group(1))


def island_refs(text):  # -> every file the islands load: scripts, switcher, tables, documents
    config = islands(text)
    refs = [config["switcher"]]
    for group in config["groups"].values():
        refs += [*group["scripts"], *group["tables"], group["doc"]]
    return refs


def island_docs(path, text, out):  # -> each island's Bokeh document, parsed from its script
    docs = []
    for group in islands(text)["groups"].values():
        script = resolves(path, group["doc"], out).read_text(encoding="utf-8")
        docs.append(island_documents.read_doc_script(script)[1])
    return docs


def stylesheet_urls(value):  # every ImportedStyleSheet url in a document
    if isinstance(value, dict):
        if value.get("name") == "ImportedStyleSheet":
            yield value["attributes"]["url"]
        for v in value.values():
            yield from stylesheet_urls(v)
    elif isinstance(value, list):
        for v in value:
            yield from stylesheet_urls(v)


def resolves(base_file, ref, out):  # a relative reference from base_file -> the file, or None
    path = unquote(ref.split("#", 1)[0].split("?", 1)[0])
    target = (base_file.parent / path).resolve()
    if out.resolve() not in target.parents:
        return None
    if target.is_dir():
        target = target / "index.html"
    return target if target.is_file() else None


def test_every_route_has_its_page_and_the_build_says_so_page_by_page(site):
    out, stdout = site
    for route in ROUTES:
        assert page_file(out, route).is_file(), route
        assert re.search(rf"^\s+{re.escape(route)}\s+->", stdout,
                         re.MULTILINE), f"no line for {route}"
    for route in PANEL_ROUTES:
        assert (out / "embed" / f"{route.strip('/')}.html").is_file(), route


def test_nothing_is_fetched_from_another_host(site):
    out, _ = site
    checked = files(out, ".html", ".css", ".svg", ".json")
    checked += [p for p in files(out, ".js")  # our own scripts, the panels' documents
                if "site-" in p.parent.name or p.parent.name == "docs"]
    assert len(checked) > 20
    for path in checked:
        text = path.read_text(encoding="utf-8", errors="replace")
        text = build.LINK_TARGET.sub("<a>", text)  # a link's target is followed, never fetched
        found = [u for u in URL.findall(html.unescape(text))  # the live link is followed too
                 if not u.startswith((*NAMESPACES, LIVE_URL.rstrip("/")))]
        assert not found, f"{path.relative_to(out)} names {found[:5]}"
    # the libraries copied as they are must not point at the CDNs the pages were moved off
    for path in files(out, ".js"):
        text = path.read_text(encoding="utf-8", errors="replace")
        assert "cdn.holoviz.org" not in text and "cdn.bokeh.org" not in text, path


def test_every_reference_resolves_to_a_file_of_the_build(site):
    out, _ = site
    with_panels = 0
    for path in files(out, ".html"):
        text = path.read_text(encoding="utf-8")
        markup = INLINE_SCRIPT.sub("", text)  # an inline script's strings are not references
        refs = [r for r in HEAD_REFS.findall(markup) if r and not r.startswith(("data:", "#"))]
        if path.parent.name != "embed":
            refs += island_refs(text)
            for doc in island_docs(path, text, out):  # their URLs are the page's, relative
                refs += list(stylesheet_urls(doc))
        for ref in refs:
            assert not re.match(r"^[a-z]+:|^/", ref), f"{path}: {ref} is not relative"
            assert resolves(path, ref, out), f"{path.relative_to(out)}: {ref} is missing"
        if path.parent.name != "embed" and 'class="ae-island"' in text:  # a page with panels
            assert any("bokeh.min.js" in r for r in refs), path
            with_panels += 1
    assert with_panels == 2 * (len(ROUTES) - 1)  # every page in both themes but /numbers
    for path in files(out, ".css"):
        for match in CSS_REF.finditer(path.read_text(encoding="utf-8")):
            ref = match.group(2) or match.group(4)
            if ref.startswith("data:"):
                continue
            assert resolves(path, ref, out), f"{path.relative_to(out)}: {ref} is missing"


def test_every_page_loads_the_switcher_with_its_islands_and_no_script_in_its_head(site):
    # text first: a page's head holds no script file; Bokeh, Panel and the switcher load
    # when a panel mounts (static/islands.js, itself deferred at the end of the body)
    out, _ = site
    assert Path(states.SWITCHER_JS).is_file()
    source = Path(states.SWITCHER_JS).read_bytes()
    for route in ROUTES:
        path = page_file(out, route)
        text = path.read_text(encoding="utf-8")
        head, body = text.split("</head>", 1)
        assert not re.findall(r"<script[^>]*\bsrc=", head), route
        assert re.search(r'<script src="[^"]*islands\.js" defer>', body), route
        switcher = islands(text)["switcher"]
        assert resolves(path, switcher, out).read_bytes() == source, route
        # one stylesheet, inline: the text paints with the first response, no second request
        css = (ROOT / "static" / "chapter.css").read_text(encoding="utf-8")
        assert f"<style>{chapter_page.minify_css(css)}</style>" in head, route


def test_every_page_has_one_icon_a_small_png(site):
    # a PNG, not an SVG: Chromium reads the icon again on each address-bar change
    out, _ = site
    for route in ROUTES:
        head = page_file(out, route).read_text(encoding="utf-8").split("</head>", 1)[0]
        icons = re.findall(r'<link rel="[^"]*icon[^"]*"[^>]*href="([^"]*)"', head)
        assert len(icons) == 1, (route, icons)
        assert icons[0].startswith("data:image/png;base64,"), route
        png = base64.b64decode(icons[0].split(",", 1)[1])
        assert png[:8] == b"\x89PNG\r\n\x1a\n" and png[12:16] == b"IHDR", route
        assert struct.unpack(">II", png[16:24]) == (16, 16), route
        assert zlib.decompress(png[png.index(b"IDAT") + 4:-16]), route  # its pixels inflate


def test_chapters_link_to_each_other_as_folders(site):
    out, _ = site
    first, math = (page_file(out, r).read_text(encoding="utf-8") for r in ("/", "/math"))
    assert 'class="ae-chapter-link" href="math/"' in first
    assert 'class="ae-back-link" href="../"' in math


def test_embed_snippet_names_the_panel_and_frames_it(site):
    out, _ = site
    text = (out / "embed" / "heatmap.html").read_text(encoding="utf-8")
    assert "&lt;iframe src=" in text  # the snippet, as text to copy
    assert '<iframe id="demo" src="../heatmap/index.html"' in text  # and working


def test_gzip_copies_decompress_to_the_same_bytes(site):
    out, _ = site
    text_files = files(out, ".html", ".js", ".css", ".json", ".svg")
    assert text_files
    for path in text_files:
        packed = path.with_name(path.name + ".gz")
        assert packed.is_file(), path
        assert gzip.decompress(packed.read_bytes()) == path.read_bytes(), path
        import brotli

        assert brotli.decompress(path.with_name(path.name + ".br").read_bytes()) == \
            path.read_bytes(), path


def test_the_build_fits_its_budget(site):
    out, _ = site
    total = sum(p.stat().st_size for p in out.rglob("*")
                if p.is_file() and p.suffix not in (".gz", ".br"))  # before compression
    assert total <= build.MAX_BYTES, f"{total / 1e6:.2f} MB"  # the budget the build warns at


def test_a_second_build_with_the_same_inputs_is_skipped(site):
    out, _ = site
    again = run("build", str(out), "--live-url", LIVE_URL)  # the options are inputs too
    if "up to date" not in again.stdout:  # a source file changed since (a shared tree): once more
        again = run("build", str(out), "--live-url", LIVE_URL)
    before = page_file(out, "/heatmap").stat().st_mtime_ns
    again = run("build", str(out), "--live-url", LIVE_URL)
    assert again.returncode == 0, again.stderr
    assert "up to date" in again.stdout and "->" not in again.stdout
    assert page_file(out, "/heatmap").stat().st_mtime_ns == before
    marker = (out / build.MARKER).read_text().split("\n", 1)[0]
    # the CLI hands the build its --live-url without the closing slash
    assert marker == build.inputs_hash(LIVE_URL.rstrip("/")) != build.inputs_hash()


def test_the_hash_changes_with_an_input(monkeypatch, tmp_path):
    before = build.inputs_hash()
    inputs = build.input_files()
    assert any(p.name == "switcher.js" for p in inputs)
    assert any(p.parts[-3:] == ("app", "hosting", "build.py") for p in inputs)
    extra = tmp_path / "extra.py"
    extra.write_text("x = 1\n")
    monkeypatch.setattr(build, "input_files", lambda: [*inputs, extra])
    assert build.inputs_hash() != before


def test_out_is_a_file_one_line_exit_2(tmp_path):
    out = tmp_path / "a-file"
    out.write_text("not a folder")
    done = run("build", str(out), timeout=60)
    assert done.returncode == 2
    assert len(done.stderr.strip().splitlines()) == 1 and "is a file" in done.stderr
    assert "Traceback" not in done.stderr


def test_out_under_a_file_one_line_exit_2(tmp_path):
    (tmp_path / "a-file").write_text("x")
    done = run("build", str(tmp_path / "a-file" / "site"), timeout=60)
    assert done.returncode == 2
    assert len(done.stderr.strip().splitlines()) == 1 and "cannot create" in done.stderr


def test_out_not_writable_one_line_exit_2(tmp_path):
    if os.geteuid() == 0:  # root writes to any folder's mode; /proc refuses even root
        out = Path("/proc/self")
    else:
        out = tmp_path / "locked"
        out.mkdir()
        out.chmod(0o555)
    try:
        done = run("build", str(out), timeout=60)
    finally:
        if out != Path("/proc/self"):
            out.chmod(0o755)
    assert done.returncode == 2 and "not writable" in done.stderr, done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


def test_every_page_is_built_in_both_themes(site):
    out, _ = site
    for route in ROUTES:
        light = page_file(out, route)
        dark = light.with_name("index-dark.html")
        assert 'data-ae-theme="default"' in light.read_text(encoding="utf-8"), route
        text = dark.read_text(encoding="utf-8")
        assert 'data-ae-theme="dark"' in text and "#212529" in text, route


def test_each_panels_table_is_one_file_every_page_that_shows_it_names(site):
    out, _ = site
    tables = {p.name for p in (out / "assets" / "states").glob("*.js")}
    assert {t.split("-")[0] for t in tables} >= {"HeadPanel", "CostPanel", "OverflowPanel"}
    assert len({t.split("-")[0] for t in tables}) == len(tables)  # one file per panel class
    for route in ("/", "/heatmap"):  # the head's table: one file, named by both pages
        text = page_file(out, route).read_text(encoding="utf-8")
        names = set(re.findall(r'assets/states/([\w-]+\.js)"', text))
        assert any(n.startswith("HeadPanel-") for n in names), route
        assert names <= tables
        assert '"table":{' not in text and '\\"table\\":{' not in text  # not inlined again
    head = next((out / "assets" / "states").glob("HeadPanel-*.js")).read_text(encoding="utf-8")
    assert head.startswith('AE.states.register("HeadPanel-')


def test_building_the_whole_site_leaves_panel_as_shipped(site):
    # tests/test_panel_internals.py checks importing and listing alone
    _, stdout = site
    assert stdout.strip().splitlines()[-1] == "[]", stdout[-500:]


def test_live_url_goes_into_every_page_and_a_bad_one_exits_2(site, tmp_path):
    out, _ = site
    for route in ROUTES:
        for name in ("index.html", "index-dark.html"):
            text = page_file(out, route).with_name(name).read_text(encoding="utf-8")
            assert f'data-ae-live-url="{LIVE_URL.rstrip("/")}"' in text, (route, name)
    bad = run("build", str(tmp_path / "other"), "--live-url", "javascript:alert(1)")
    assert bad.returncode == 2 and "expected an http(s) address" in bad.stderr


def test_no_page_loads_webgl_it_does_not_draw_with(site):
    out, _ = site
    for route in ROUTES:
        text = page_file(out, route).read_text(encoding="utf-8")
        assert "bokeh-gl" not in text, route  # every figure draws on a canvas
    assert not list(out.rglob("bokeh-gl*"))


# a CSS variable Bokeh 3.9 would read for a visual property (--bk-<prefix>line-color: ...)
BOKEH_VISUAL_VARIABLE = re.compile(r"--bk-[\w-]*(?:fill|line|hatch|text)-[\w-]+\s*:")


def test_no_page_styles_a_figure_through_bokehs_css_variables(site):
    # The switcher skips Bokeh's per-repaint lookup of these variables (static/switcher.js,
    # "two Bokeh internals"); that is right only while no file of the build defines one.
    out, _ = site
    checked = 0
    for path in files(out, ".html", ".css", ".js"):
        text = path.read_text(encoding="utf-8", errors="replace")
        assert not BOKEH_VISUAL_VARIABLE.search(text), path
        checked += 1
    assert checked > 20


def test_a_document_keeps_the_model_definitions_its_models_use():
    # Panel writes every data model it knows into every document; the browser makes a class
    # of each as the document loads
    def model(name, **attributes):
        return {"type": "object", "name": name, "id": f"p-{name}", "attributes": attributes}

    defs = [{"type": "model", "name": "Base1"},
            {"type": "model", "name": "Used1", "extends": {"id": "Base1"}},
            {"type": "model", "name": "Inner1"},  # used only inside another model
            {"type": "model", "name": "Unused1"}]
    docs = {"d": {"roots": [model("Used1", child=model("Inner1"))], "defs": defs},
            "e": {"roots": [model("Column")]}}
    group = chapter_page.Group(name="g0", slots=["head"], docs_json=json.dumps(docs))
    _, shipped = island_documents.read_doc_script(island_documents.doc_script(group))
    assert [d["name"] for d in shipped["d"]["defs"]] == ["Base1", "Used1", "Inner1"]
    assert shipped["d"]["roots"] == docs["d"]["roots"] and shipped["e"] == docs["e"]


def test_every_shipped_documents_model_definitions_are_used(site):
    out, _ = site
    checked = 0
    for path in (out / "assets" / "docs").glob("*.js"):
        _, docs = island_documents.read_doc_script(path.read_text(encoding="utf-8"))
        for doc in docs.values():
            names = set(re.findall(r'"name": ?"([^"]+)"', json.dumps(doc["roots"])))
            refs = set(re.findall(r'"id": ?"([^"]+)"', json.dumps(doc["defs"])))
            for d in doc["defs"]:
                assert d["name"] in names | refs, (path.name, d["name"])
                checked += 1
    assert checked > 0


def test_a_documents_recurring_stylesheets_stand_once_and_come_back_whole():
    sheet, other = ":host { color: red; }", ".x { margin: 0; }"
    docs = {"d": {"roots": [{"attributes": {"stylesheets": [sheet, other]}},
                            {"attributes": {"stylesheets": [sheet, {"id": "p1"}]}},
                            {"attributes": {"text": sheet, "stylesheets": [sheet]}}]}}
    group = chapter_page.Group(name="g0", slots=["head"], docs_json=json.dumps(docs))
    script = island_documents.doc_script(group)
    assert script.count(sheet) == 2  # once among the shared sheets, once as the text field
    assert script.count(other) == 1
    assert island_documents.read_doc_script(script) == ("g0", docs)


def test_a_document_loads_only_the_bundles_its_models_need():
    from bokeh.document import Document
    from bokeh.models import ColumnDataSource, DataTable, Div, Slider, TableColumn
    from bokeh.plotting import figure

    cdn = "https://cdn.bokeh.org/bokeh/release/"
    names = ["bokeh", "bokeh-gl", "bokeh-widgets", "bokeh-tables", "bokeh-mathjax"]
    scripts = [f"{cdn}{n}-3.9.2.min.js" for n in names] + [
        "https://cdn.holoviz.org/panel/1.9.4/dist/panel.min.js",
        "https://cdn.holoviz.org/panel/1.9.4/dist/bundled/es-module-shims.min.js"]

    def needed(*roots):
        doc = Document()
        for root in roots:
            doc.add_root(root)
        return [build.bundle_of(s) for s in build.scripts_needed(scripts, doc)]

    assert needed(figure()) == ["bokeh"]  # a canvas figure: no gl, no mathjax
    assert needed(figure(output_backend="webgl")) == ["bokeh", "bokeh-gl"]
    assert needed(Slider(start=0, end=1, value=0)) == ["bokeh", "bokeh-widgets"]
    table = DataTable(source=ColumnDataSource({"a": [1]}), columns=[TableColumn(field="a")])
    assert needed(table) == ["bokeh", "bokeh-widgets", "bokeh-tables"]
    import panel as pn

    assert needed(pn.pane.Markdown("x").get_root(Document())) == [
        "bokeh", "bokeh-widgets", "panel"]  # Panel's bundle extends bokeh-widgets' models
    assert needed(Div(text="x")) == ["bokeh", "bokeh-widgets"]  # Div is a Bokeh widget
    assert build.bundle_of(scripts[-1]) == "es-module-shims"


def test_a_page_loads_panel_after_bokeh_tables_or_its_stand_in():
    group = lambda *names: chapter_page.Group(
        name="g", slots=[], scripts=[f"{n}.min.js" for n in names])
    plain = [group("bokeh", "bokeh-widgets", "panel"), group("bokeh")]
    build.page_scripts(plain, "no-tables.js")
    assert plain[0].scripts == ["bokeh.min.js", "bokeh-widgets.min.js", "no-tables.js",
                                "panel.min.js"] and plain[1].scripts == ["bokeh.min.js"]
    mixed = [group("bokeh", "bokeh-widgets", "panel"),
             group("bokeh", "bokeh-widgets", "bokeh-tables", "panel")]
    build.page_scripts(mixed, "no-tables.js")  # one table on the page: the real bundle for all
    assert mixed[0].scripts == mixed[1].scripts == [
        "bokeh.min.js", "bokeh-widgets.min.js", "bokeh-tables.min.js", "panel.min.js"]


def test_the_page_template_escapes_every_value_it_is_given():
    from app.chapters import chapter_page, content
    urls = {"islands": "i.js?a=1&b=2", "questions": "q.js", "terms": "t.js", "switcher": "s.js",
            "css": "p{color:red}", "doc": lambda g: "d.js", "table": lambda ref: ref}
    page = chapter_page.page_html(content.load("math.md"), [], title='<script>x</script>"',
                                  theme="dark", page_folder="", back=None, urls=urls,
                                  canonical="https://e.example/?q=<b>",
                                  live_url='https://e.example/"live"')
    assert "<script>x</script>" not in page and "&lt;script&gt;x&lt;/script&gt;&#34;" in page
    assert 'href="https://e.example/?q=&lt;b&gt;"' in page and 'src="i.js?a=1&amp;b=2"' in page
    assert 'data-ae-live-url="https://e.example/&#34;live&#34;"' in page  # an attribute
    assert "<style>p{color:red}</style>" in page  # our own stylesheet, as it is


def test_every_page_names_its_oembed_response_and_its_embed_page(site):
    out, _ = site
    for route in ROUTES:
        for name in ("index.html", "index-dark.html"):
            path = page_file(out, route).with_name(name)
            text = path.read_text(encoding="utf-8")
            found = re.search(r'<link rel="alternate" type="application/json\+oembed" '
                              r'href="([^"]+)"', text)
            assert found, path
            body = json.loads((path.parent / found.group(1)).read_text(encoding="utf-8"))
            assert body["type"] == "rich" and body["version"] == "1.0", path
            assert all(body[f] for f in ("html", "width", "height", "title", "provider_name"))
            embed = re.search(r'class="ae-embed-link" href="([^"]+)"', text)
            assert embed and (path.parent / embed.group(1)).is_file(), path
