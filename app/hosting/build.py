"""The explorable as files: every page, and every script and stylesheet it loads, from here.

    attention-explorable build OUT [--force]

writes

    OUT/index.html                 the first chapter ("/")
    OUT/math/index.html            the second chapter ("/math")
    OUT/<route>/index.html         each panel alone ("/heatmap", "/cost", ...)
    OUT/embed/<route>.html         how to embed that panel: the <iframe> to copy, and a demo
    OUT/assets/bokeh-<v>/...       the BokehJS files the pages load (from the bokeh package)
    OUT/assets/panel-<v>/...       the Panel files they load (from panel/dist)
    OUT/assets/site-<hash>/...     static/switcher.js, islands.js, questions.js, terms.js
    OUT/assets/calculator-<hash>/  the cost page's calculator and the cost model it loads
    OUT/assets/docs/...            each panel document of a page, a script loaded as it mounts
    OUT/.build-inputs              a hash of every input; the same hash skips the next build

and a gzip and a brotli copy (`.gz`, `.br`, for servers that send them precompressed) beside
every text file.
Every reference is relative, so the folder works from `file://`, on any static host and
under any URL prefix; nothing comes from a CDN. Each page is built inside
`states.static_build()`: its panels carry their table of states and the browser-side
switcher, and no page needs a server session.

A page is text first (app/chapters/chapter_page.py): its panels' Bokeh documents are saved by Panel
with CDN resources and then pointed at local copies: the CDN URLs name the exact files (the
scripts a panel loads as it mounts, and the stylesheets its document names), so only what a
page references is copied, plus what those stylesheets' url()s name in turn.
"""

from __future__ import annotations

import base64
import contextlib
import dataclasses
import gzip
import hashlib
import html
import io
import os
import re
import shutil
import sys
import tempfile
import time
from pathlib import Path

from app.hosting import routes
from app.kit import registry, resources
from app.kit.panel_internals import BOKEH_CDN, bokeh_cdn_file

ROOT = resources.SOURCE_ROOT
STATIC_DIR = resources.STATIC_DIR
INPUT_DIRS = ("app", "attention_core", "kernels")  # packages whose files count, and STATIC_DIR
MARKER = ".build-inputs"
STATES_OUT = "assets/states"  # each panel's table of states, one file shared by every page
DOCS_OUT = "assets/docs"  # a chapter's panel documents, each a script loaded as it mounts
# the pages' icon: a small square of our own, inline, instead of Panel's two image files. A
# PNG, not an SVG: Chromium reads the icon again on every address-bar change (each control
# change on a static page), and an SVG icon costs a whole SVG document, 2-3 ms, each time.
ICON_RGB = (0x00, 0x72, 0xB2)  # the palette's blue


def icon_png(size=16, radius=3):  # -> bytes of a size x size PNG: a rounded blue square
    # drawn and encoded by Pillow (a dependency of Bokeh's)
    from PIL import Image, ImageDraw

    image = Image.new("RGBA", (size, size), (0, 0, 0, 0))
    ImageDraw.Draw(image).rounded_rectangle((0, 0, size - 1, size - 1), radius=radius,
                                            fill=(*ICON_RGB, 255))
    out = io.BytesIO()
    image.save(out, format="PNG", optimize=True)
    return out.getvalue()


ICON = ('<link rel="icon" type="image/png" href="data:image/png;base64,'
        f'{base64.b64encode(icon_png()).decode()}">')
FORMAT = "ae-static-build 2"  # bump when the layout of a build changes
TEXT_SUFFIXES = (".html", ".js", ".css", ".json", ".svg", ".map", ".webmanifest", ".txt")
# the whole build before compression: 8.50 MB with eleven panels, the small figures and the
# oEmbed responses (2026-12-04); Bokeh's and Panel's files are 2.7 MB of it. 9.5 MB with the
# third chapter and its two panels (2026-12-06): each chapter and panel page ships a Bokeh
# document per theme, about 50-110 kB each

MAX_BYTES = 11 * 10**6
BROTLI_QUALITY = 10  # 11 saves 2% more and takes 2.5x as long (8 s for a build here)
EMBED_HEIGHT = 900  # px, the demo iframe's height

URL = re.compile(r"https?://[^\s\"'<>()\\]+")
NAMESPACE = re.compile(r"^https?://www\.w3\.org/")  # XML namespaces: names, never fetched
# a link's target (<a href="...">, a chapter's references): followed by the reader, never fetched
LINK_TARGET = re.compile(r'<a\s[^>]*?href="(https?://[^"]+)"')
CSS_REF = re.compile(r"""url\(\s*(['"]?)([^'")]+)\1\s*\)|@import\s+(['"])([^'"]+)\3""")

# On file:// a link to a folder opens a listing, not its index.html; add it on the way out.
FILE_LINKS_JS = f"<script>{resources.inline_script('file_links.js')}</script>"


class BuildError(Exception):
    """The build cannot go on; the message is one line for the person who ran it."""


class BadOutput(BuildError):
    """OUT cannot hold a build (a file, not writable, ...)."""


@dataclasses.dataclass(frozen=True)
class Page:
    route: str  # "/", "/math", "/heatmap", ...
    factory: str  # "module:function" building the page

    @property
    def folder(self):  # "" for "/", "heatmap" for "/heatmap"
        return self.route.strip("/")

    @property
    def file(self):  # "index.html", "heatmap/index.html"
        return f"{self.folder}/index.html" if self.folder else "index.html"

    @property
    def dark_file(self):  # the same page in the dark theme, beside it
        return self.file.replace("index.html", "index-dark.html")

    @property
    def up(self):  # the relative way from this page back to OUT
        return "../" * (self.folder.count("/") + 1) if self.folder else ""


@dataclasses.dataclass
class Result:
    out: Path
    skipped: bool
    pages: list = dataclasses.field(default_factory=list)  # [(route, file, bytes, seconds)]
    seconds: float = 0.0
    total_bytes: int = 0  # every file, before compression (.gz copies not counted)
    gz_bytes: int = 0  # the .gz copies
    warnings: list = dataclasses.field(default_factory=list)


def pages():  # -> [Page]: the chapters, then each panel alone
    return [Page(route, target) for route, target in routes.ALL_ROUTES.items()]


def panel_routes():  # -> ["/heatmap", ...]: the pages that are one panel (embeddable)
    return list(routes.PANEL_ROUTES)


# --- inputs -------------------------------------------------------------------------------

def versions():  # -> {name: version} of what the pages are built with
    import bokeh
    import panel

    out = {"python": sys.version.split()[0], "panel": panel.__version__,
           "bokeh": bokeh.__version__}
    from importlib import metadata

    for name in ("param", "numpy", "torch"):
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = "absent"
    return out


def input_files():  # -> sorted [Path] of every source file a build depends on
    files = []
    bases = [ROOT / name for name in INPUT_DIRS]
    bases += [] if any(b in STATIC_DIR.parents for b in bases) else [STATIC_DIR]  # wheel: in app
    for base in bases:
        if not base.is_dir():
            continue
        for path in base.rglob("*"):
            if path.is_file() and "__pycache__" not in path.parts and path.suffix != ".pyc":
                files.append(path)
    return sorted(files)


def inputs_hash(live_url=None, site_url=None):  # -> hex sha256 of the format, versions,
    # options, input files
    h = hashlib.sha256(FORMAT.encode())
    h.update(f"\0live_url={live_url or ''}".encode())
    if site_url:
        h.update(f"\0site_url={site_url}".encode())
    for name, version in sorted(versions().items()):
        h.update(f"\0{name}={version}".encode())
    for path in input_files():
        name = path.relative_to(ROOT) if ROOT in path.parents else path
        h.update(b"\0" + name.as_posix().encode() + b"\0")
        h.update(path.read_bytes())
    return h.hexdigest()


def marker_text(digest):
    lines = [digest, FORMAT, *(f"{k} {v}" for k, v in sorted(versions().items()))]
    return "\n".join(lines) + "\n"


def is_current(out, digest):  # -> True when OUT holds a complete build of these inputs
    marker = Path(out) / MARKER
    try:
        recorded = marker.read_text().split("\n", 1)[0].strip()
    except OSError:
        return False
    return recorded == digest and all((Path(out) / p.file).is_file() for p in pages())


# --- where the assets come from -------------------------------------------------------------

class Assets:
    """Maps the CDN URLs a saved page names onto files of the installed packages, and
    records which files the build must copy: {path in OUT: source file}."""

    def __init__(self, site_files, calculator=None):
        import bokeh
        import panel
        from bokeh.util.paths import bokehjs_path
        from panel.io.resources import CDN_DIST

        self.panel_cdn = CDN_DIST  # https://cdn.holoviz.org/panel/<js version>/dist/
        self.panel_dir = Path(panel.__file__).resolve().parent / "dist"
        self.panel_out = f"assets/panel-{panel.__version__}"
        self.bokeh_cdn = BOKEH_CDN
        self.bokeh_js = Path(bokehjs_path()) / "js"
        self.bokeh_out = f"assets/bokeh-{bokeh.__version__}"
        self.bokeh_name = bokeh_cdn_file(bokeh.__version__)
        self.copies = {}  # "assets/panel-1.9.4/css/x.css" -> Path
        self.site_files = site_files  # {name: bytes}: the app's own scripts (SITE_SCRIPTS)
        digest = hashlib.sha256()
        for name, data in sorted(site_files.items()):
            digest.update(name.encode() + b"\0" + data + b"\0")
        self.site_out = f"assets/site-{digest.hexdigest()[:10]}"
        self.calculator_files = calculator_files() if calculator is None else calculator
        digest = hashlib.sha256()
        for name, data in sorted(self.calculator_files.items()):
            digest.update(name.encode() + b"\0" + data + b"\0")
        self.calculator_out = f"assets/calculator-{digest.hexdigest()[:10]}"

    def local(self, url):  # CDN URL -> path in OUT, or None when it is not a CDN file
        path = url.split("#", 1)[0].split("?", 1)[0]
        if path.startswith(self.panel_cdn):
            rel = path[len(self.panel_cdn):]
            return self._add(f"{self.panel_out}/{rel}", self.panel_dir / rel, url)
        if path.startswith(self.bokeh_cdn):
            match = self.bokeh_name.match(path[len(self.bokeh_cdn):])
            if match:
                name = f"{match.group(1)}{match.group(2) or ''}.js"
                return self._add(f"{self.bokeh_out}/{name}", self.bokeh_js / name, url)
        return None

    def _add(self, out_path, source, url):
        source = source.resolve()
        if not source.is_file():
            raise BuildError(f"a page loads {url}, and the installed package has no {source}")
        if out_path not in self.copies:
            self.copies[out_path] = source
            if source.suffix == ".css":
                self._css(out_path, source)
        return out_path

    def _css(self, out_path, source):  # the files a stylesheet's url()s and @imports name
        text = source.read_text(encoding="utf-8", errors="replace")
        for match in CSS_REF.finditer(text):
            ref = (match.group(2) or match.group(4) or "").strip()
            if not ref or ref.startswith(("data:", "#")):
                continue
            if URL.match(ref) or ref.startswith("//"):
                raise BuildError(f"{source.name} loads {ref} from another host")
            rel = ref.split("#", 1)[0].split("?", 1)[0]
            target = (source.parent / rel).resolve()
            target_out = os.path.normpath(f"{os.path.dirname(out_path)}/{rel}")
            inside = target_out.startswith((self.panel_out + "/", self.bokeh_out + "/"))
            if not target.is_file() or not inside:
                raise BuildError(f"{source.name} names {ref}, which is not a file of its package")
            self._add(target_out, target, ref)


# the app's own scripts the pages load, each made of static/'s modules in this order: classic
# scripts one after the other (a page opened from file:// runs no ES module), one request a
# script as before the modules. islands.js carries the fence, the address and the readouts'
# heights, which the switcher (loaded alone as a panel mounts) needs; docs/architecture.md.
# questions.js carries embedding.js (frame height, answers to a course page, "Embed")
# Concatenation, not a JavaScript bundler: the modules are classic scripts that import
# nothing (a page opened from file:// runs no ES module), so there is nothing to resolve, and
# `attention-explorable serve` builds the site where only Python is installed (a wheel), so
# the build cannot call node. Minifying them would save little after brotli.
NO_TABLES = "no-tables.js"  # the site script standing in for bokeh-tables
SITE_SCRIPTS = {"islands.js": ("bokeh_fence.js", "page_url.js", "readout_heights.js",
                               "islands.js"),
                "switcher.js": ("switcher.js",),
                NO_TABLES: ("no_tables.js",),
                "questions.js": ("questions.js", "embedding.js"),
                "terms.js": ("terms.js",),
                # a page whose stills have native controls (registry's still_controls)
                "stills.js": ("stills.js", "still_controls.js"),
                # a live chapter's stills until its session takes over (app/chapters/live_stills.py)
                "live-stills.js": ("page_url.js", "stills.js", "still_controls.js",
                                   "live_stills.js")}


def site_files():  # -> {name: bytes}: the app's own browser files the pages load
    out = {}
    for name, modules in SITE_SCRIPTS.items():
        parts = [resources.static_file(module).read_bytes() for module in modules]
        for module, data in zip(modules, parts):
            if not data.rstrip().endswith(b";"):  # else the next module's "(" would call it
                raise BuildError(f"static/{module} must end with a semicolon")
        out[name] = b"".join(parts)
    return out


def calculator_files():  # -> {name: bytes}: the cost page's calculator of your own config.json
    # (static/cost_calculator.js) and the JavaScript twin of the cost core it loads on first
    # use: its three parts (COST_MODEL_PARTS) and its table (app/hosting/cost_model_data.py) as
    # one file. A folder of their own, so the other pages' references (assets/site-<hash>) stay
    # as they were.
    from app.hosting import cost_model_data

    twin = b"\n".join(resources.static_file(name).read_bytes().rstrip()
                      for name in COST_MODEL_PARTS)
    return {"cost_calculator.js": resources.static_file("cost_calculator.js").read_bytes(),
            "cost_model.js": twin + b"\n" + cost_model_data.table_script().encode()}


# the cost core's JavaScript twin, by concern, in the order it runs: Python's text and the
# parser, a config read by its family's rules, the closed forms (and AE.costModel)
COST_MODEL_PARTS = ("cost_model_text.js", "cost_model_families.js", "cost_model.js")


def holds_calculator(page):  # -> whether the page is the own page of a panel that counts
    # your config.json in the browser (its class says `calculator`, app/panels/cost_base.py:
    # read off the class, as making a viewer builds its whole panel)
    record = None if page.route in routes.CHAPTER_ROUTES else registry.by_route(page.route)
    return record is not None and getattr(record.viewer_class, "calculator", False) is True


def with_calculator(text, page, assets):  # a page -> the same with the calculator's box under
    # its island, in the page's own HTML (it works before and without Bokeh), and right after
    # it the calculator that fills it, a plain script: it runs as the parser reaches it (the
    # preload scanner has fetched it by then), not after the page's deferred scripts (an
    # async one ran after them in 3 of 4 slowed-phone loads). The twin's address rides along
    # in data-model, fetched only when the reader first uses the calculator
    from app.panels.model_picker import CALCULATOR

    folder = f"{page.up}{assets.calculator_out}"
    tag = (f'<script src="{folder}/cost_calculator.js" data-model="{folder}/cost_model.js">'
           "</script>\n")
    head, main_end, tail = text.rpartition("</main>")
    if not main_end:
        raise ValueError(f"{page.route}: no <main> to hold the calculator's box")
    return head + CALCULATOR + "\n" + tag + main_end + tail


# --- one page --------------------------------------------------------------------------------

def render(page, title, theme, assets, live_url=None, site_url=None):
    # Page -> (its text-first HTML, {ref: table} its panels ship, {path: script} of its
    # panels' documents); chapters/chapter_page.py. A panel's own page is a chapter of one island,
    # with no prose, that mounts at once. site_url: where the site is published, for each
    # page's canonical link (none without it: a wrong one is worse than none)
    import importlib

    from app.chapters import chapter_page, content, live_chapter, page_model
    from app.hosting import oembed
    from app.kit import island_documents, url_state

    back = None
    if page.route in routes.CHAPTER_ROUTES:
        model = page_model.at(page.route)
        shelf = live_chapter.Shelf(model.panels, static=True)
        plan = url_state.chapter_plan(model.panels, model.follows)
        groups = [dataclasses.replace(g, still_controls=True)
                  for g in chapter_page.groups_of(model.panels, model.follows)]
        builds = [chapter_page.chapter_blocks(g, shelf, plan) for g in groups]
        chapter, about, back = model.chapter, None, model.back
    else:
        module = importlib.import_module(page.factory.split(":")[0])
        factory = routes.page_factory(page.factory)
        slot, asked = chapter_page.asked_questions(registry.by_route(page.route))  # ?ask=<id>
        groups = [chapter_page.Group(name="g0", slots=[slot], still_controls=True,
                                     own_page=True)]
        builds = [lambda: [(slot, [factory(static=True)])]]
        chapter = content.Chapter(title=title, sections=[
            *(chapter_page.Asked(q) for q in asked), content.PanelMarker(slot)])
        about = chapter_page.panel_description(module, title)
    tables = {}
    for group, build_group in zip(groups, builds):
        chapter_page.save_group(group, build_group, theme, scripts_used=scripts_needed)
        tables.update(group.tables)
    page_scripts(groups, f"{page.up}{assets.site_out}/{NO_TABLES}")
    docs = {}  # assets path -> a group's document as a script (named by its content)
    for group in groups:
        script = island_documents.doc_script(group)
        digest = hashlib.sha256(script.encode()).hexdigest()[:10]
        docs[f"{DOCS_OUT}/{page.folder or 'index'}-{group.name}-{digest}.js"] = script
    doc_src = {g.name: path for g, path in zip(groups, docs)}
    urls = {"doc": lambda g: f"{page.up}{doc_src[g.name]}",
            "switcher": f"{page.up}{assets.site_out}/switcher.js",
            "islands": f"{page.up}{assets.site_out}/islands.js",
            "questions": f"{page.up}{assets.site_out}/questions.js",
            "terms": f"{page.up}{assets.site_out}/terms.js",
            "stills": f"{page.up}{assets.site_out}/stills.js",
            "css": resources.static_file("chapter.css").read_text(encoding="utf-8"),
            "table": lambda ref: f"{page.up}{STATES_OUT}/{ref}.js"}
    text = chapter_page.page_html(chapter, groups, title=title,
                                  theme=theme, page_folder=page.folder,
                                  back=back, urls=urls,
                                  live_url=live_url, about=about,
                                  top=page.route in routes.CHAPTER_ROUTES,
                                  canonical=f"{site_url}{page.route}" if site_url else None,
                                  oembed=oembed.static_href(page.route, page.up, site_url),
                                  embed=(f"{page.up}embed/{oembed.name(page.route)}.html",
                                         page.up or "./"))
    if holds_calculator(page):
        text = with_calculator(text, page, assets)
    return text, tables, docs


def finish_page(text, page, assets, warnings):  # its scripts and styles from OUT only
    text = localize(text, page, assets, warnings)
    return text.replace("</head>", ICON + "\n" + FILE_LINKS_JS + "\n</head>", 1)


def localize(text, page, assets, warnings):  # a page or script -> the same, from OUT only
    followed = {m.start(1) for m in LINK_TARGET.finditer(text)}

    def swap(match):
        url = match.group(0)
        if NAMESPACE.match(url) or match.start() in followed:
            return url
        local = assets.local(url)
        if local is None:
            warnings.append(f"{page.route} names {url}, which the build cannot ship")
            return url
        return page.up + local

    return URL.sub(swap, text)


def bundles_needed(models):  # a document's models -> {bundle name} its island must load
    # Panel lists every Bokeh bundle for every page; which one a document needs follows from
    # its models' types, as Bokeh's own bundling decides it (bokeh.embed.bundle), in public
    # classes. panel.min.js extends bokeh-widgets' models as it loads, so a Panel model needs
    # bokeh-widgets; it also imports bokeh-tables, for one class, which a stand-in gives
    # (static/no_tables.js, see page_scripts).
    from bokeh.models import Plot, TableWidget, Widget
    from bokeh.models.glyphs import MathTextGlyph
    from bokeh.models.text import MathText

    kinds = {type(m) for m in models}
    panel = any(k.__module__.startswith("panel.") for k in kinds)
    need = {"bokeh"}
    if panel:
        need |= {"panel", "bokeh-widgets"}
    if any(k.__module__.startswith("panel.models.esm") for k in kinds):
        need.add("es-module-shims")
    if any(issubclass(k, TableWidget) or k.__module__.startswith(TABLE_MODELS) for k in kinds):
        need |= {"bokeh-tables", "bokeh-widgets"}
    if any(issubclass(k, Widget) for k in kinds):
        need.add("bokeh-widgets")
    if any(isinstance(m, Plot) and m.output_backend == "webgl" for m in models):
        need.add("bokeh-gl")
    if any(issubclass(k, (MathText, MathTextGlyph)) for k in kinds):
        need.add("bokeh-mathjax")
    return need


TABLE_MODELS = "bokeh.models.widgets.tables"  # DataTable, TableColumn, formatters, editors


def page_scripts(groups, stand_in):  # the page's groups, each with its scripts -> the same,
    # Panel's bundle never loaded without bokeh-tables or the stand-in (stand_in: its URL)
    # before it. One rule for the whole page: panel.min.js runs once, binding whichever came
    # first, so where any group mounts a table every group that loads Panel loads the real one.
    tables = next((s for g in groups for s in g.scripts if bundle_of(s) == "bokeh-tables"),
                  None)
    for g in groups:
        at = next((i for i, s in enumerate(g.scripts) if bundle_of(s) == "panel"), None)
        if at is None or any(bundle_of(s) == "bokeh-tables" for s in g.scripts):
            continue
        g.scripts = [*g.scripts[:at], tables or stand_in, *g.scripts[at:]]
    return groups


SCRIPT_NAME = re.compile(r"(?:^|/)([a-z][a-z-]*?)(?:-\d[\w.]*?)?(?:\.min)?\.js$")
KNOWN_BUNDLES = {"bokeh", "bokeh-widgets", "bokeh-tables", "bokeh-gl", "bokeh-mathjax",
                 "panel", "es-module-shims"}


def bundle_of(url):  # a script URL -> its bundle's name ("bokeh-widgets", "panel"), or None
    match = SCRIPT_NAME.search(url.split("?", 1)[0].split("#", 1)[0])
    return match.group(1) if match else None


def scripts_needed(scripts, doc):  # -> of Panel's scripts, those a group's Document needs,
    # in Panel's order; a script this build does not know stays (it may be needed)
    need = bundles_needed(doc.models)
    return [s for s in scripts if bundle_of(s) not in KNOWN_BUNDLES or bundle_of(s) in need]


# --- embed snippets ---------------------------------------------------------------------------

EMBED_PAGE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Embed {name} · {title}</title>
<link rel="icon" href="data:,">
<style>
  body {{ font-family: system-ui, -apple-system, "Segoe UI", Roboto, "Noto Sans", Arial,
         sans-serif; max-width: 56rem; margin: 0 auto; padding: 1rem 1.25rem 3rem;
         line-height: 1.5; }}
  pre {{ background: #f3f3f3; padding: 0.8em 1em; border-radius: 6px; overflow-x: auto;
        white-space: pre-wrap; word-break: break-all; }}
  iframe {{ width: 100%; border: 1px solid #d0d4da; border-radius: 8px; }}
</style>
</head>
<body>
<h1>Embedding {what}</h1>
<p>Copy this into your course page. The address is where this folder is served; add a query
to start the page at a state, as its own address bar shows after a change (with scripts on,
its "Embed" button writes this code for the state it is in). <code>embed=1</code> drops the
page's header. The README's section "Hosting a course" says more: frames that size
themselves, oEmbed, and the answers a course can collect.</p>
<pre><code id="snippet">{snippet}</code></pre>
<p>Or as a script, which puts the same frame where the script stands (data-query is the deep
link; the frame takes its content's height):</p>
<pre><code id="script">{script}</code></pre>
<h2>What it looks like</h2>
<iframe id="demo" src="{demo}" title="{name}" height="{height}" loading="lazy"></iframe>
{page_script}
</body>
</html>
"""


EMBED_PAGE_JS = resources.inline_script("embed_page.js")  # inline: the page is one file


def embed_page(route, title):  # "/heatmap" -> OUT/embed/heatmap.html; "/" -> embed/index.html
    folder = route.strip("/")
    name = folder or "index"
    panel = route in routes.PANEL_ROUTES
    what = f"the {name} panel" if panel else f"the page {route}"
    attr, target = ("data-panel", folder) if panel else ("data-page", folder)
    rel = f"{folder}/" if folder else ""
    snippet = html.escape(f'<iframe src="[this site]/{rel}?embed=1" title="{name}" '
                          f'width="100%" height="{EMBED_HEIGHT}" loading="lazy"></iframe>')
    script = html.escape(f'<script src="[this site]/embed.js" {attr}="{target}" '
                         f'data-query="embed=1"></script>')
    data = {"page": f"../{rel}", "name": name, "height": EMBED_HEIGHT, "attr": attr,
            "target": target}  # static/embed_page.js writes the snippets from them
    attrs = " ".join(f'data-{k}="{html.escape(str(v))}"' for k, v in data.items())
    return EMBED_PAGE.format(name=html.escape(name), title=html.escape(title),
                             what=html.escape(what), snippet=snippet, script=script,
                             demo=f"../{rel}index.html", height=EMBED_HEIGHT,
                             page_script=f"<script {attrs}>{EMBED_PAGE_JS}</script>")


# --- writing ----------------------------------------------------------------------------------

def write(out_dir, rel, data):  # -> bytes written (the .gz copy not counted)
    path = out_dir / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(data, str):
        data = data.encode("utf-8")
    path.write_bytes(data)
    return len(data)


def compress_beside(out_dir):  # -> bytes of the .gz copies written beside every text file
    # and a .br copy beside it (Brotli: every browser takes it, about a sixth smaller; the
    # server sends it to a client that accepts br, .gz to the others)
    import brotli

    total = 0
    for path in sorted(out_dir.rglob("*")):
        if path.is_file() and path.suffix in TEXT_SUFFIXES:
            data = path.read_bytes()
            packed = gzip.compress(data, compresslevel=9, mtime=0)
            (path.parent / (path.name + ".gz")).write_bytes(packed)
            (path.parent / (path.name + ".br")).write_bytes(
                brotli.compress(data, quality=BROTLI_QUALITY))
            total += len(packed)
    return total


def check_out(out):  # -> Path; raises BadOutput when OUT cannot hold a build
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise BadOutput(f"{out} is a file, not a folder")
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise BadOutput(f"cannot create {out}: {e.strerror or e}") from None
    probe = out / f".write-test-{os.getpid()}"
    try:
        probe.write_bytes(b"")
        probe.unlink()
    except OSError as e:
        raise BadOutput(f"{out} is not writable: {e.strerror or e}") from None
    return out.resolve()


@contextlib.contextmanager
def locked(out):  # one build of OUT at a time (several servers may start together)
    import fcntl

    lock_path = out.parent / f".{out.name}.lock"
    with contextlib.ExitStack() as stack:
        try:
            handle = stack.enter_context(open(lock_path, "a"))
        except OSError:
            handle = None  # a parent we cannot write to: no lock, build anyway
        if handle is not None:
            fcntl.flock(handle, fcntl.LOCK_EX)
            stack.callback(fcntl.flock, handle, fcntl.LOCK_UN)
        yield


def build(out, force=False, log=print, live_url=None, site_url=None):  # -> Result; raises
    # BuildError. live_url: where the pages' "open live" buttons lead (default: live/ beside
    # the site); site_url: the address the site is published at, for canonical links
    started = time.perf_counter()
    out = check_out(out)
    digest = inputs_hash(live_url, site_url)
    with locked(out):
        if not force and is_current(out, digest):
            log(f"{out}: up to date (inputs unchanged since the last build); --force rebuilds")
            return Result(out=out, skipped=True, seconds=time.perf_counter() - started)
        parent_writable = os.access(out.parent, os.W_OK)
        tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.building-",
                                    dir=out.parent if parent_writable else None))
        tmp.chmod(0o755)  # mkdtemp's 0700 would hide the build from a web server's workers
        try:
            result = _build_into(tmp, log, live_url, site_url)
            (tmp / MARKER).write_text(marker_text(digest))
            _put_in_place(tmp, out, parent_writable)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    result.out = out
    result.seconds = time.perf_counter() - started
    for warning in result.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    log(f"built {len(result.pages)} pages into {out} in {result.seconds:.1f} s: "
        f"{result.total_bytes / 1e6:.2f} MB, {result.gz_bytes / 1e6:.2f} MB gzipped copies")
    return result


def _build_into(tmp, log, live_url=None, site_url=None):  # -> Result for a fresh build
    from app.hosting import oembed
    from app.kit import states

    result = Result(out=tmp, skipped=False)
    assets = Assets(site_files())
    all_pages = pages()
    titles = routes.titles({p.route: None for p in all_pages})
    total, shipped = 0, set()
    for page in all_pages:
        for theme, file in (("default", page.file), ("dark", page.dark_file)):
            t0 = time.perf_counter()
            text, tables, docs = render(page, titles[page.route], theme, assets, live_url,
                                        site_url)
            text = finish_page(text, page, assets, result.warnings)
            for rel, script in docs.items():  # Bokeh's URLs in them point at OUT's copies
                total += write(tmp, rel, localize(script, page, assets, result.warnings))
            for ref, table in tables.items():  # each panel's table: one file, for every page
                if ref not in shipped:
                    shipped.add(ref)
                    total += write(tmp, f"{STATES_OUT}/{ref}.js", states.table_script(ref, table))
            size = write(tmp, file, text)
            total += size
            seconds = time.perf_counter() - t0
            result.pages.append((page.route, file, size, seconds))
            log(f"  {page.route:<16} -> {file:<28} {size / 1000:8.1f} kB  {seconds:5.2f} s")
    for page in all_pages:  # how to embed each page (its "Embed" link without scripts)
        total += write(tmp, f"embed/{oembed.name(page.route)}.html",
                       embed_page(page.route, routes.SITE_TITLE))
    for rel, data in oembed.static_files(site_url).items():  # oEmbed: one response a route
        total += write(tmp, rel, data)
    total += write(tmp, "embed.js", (STATIC_DIR / "embed.js").read_bytes())  # script embeds
    for name, data in assets.site_files.items():
        total += write(tmp, f"{assets.site_out}/{name}", data)
    for name, data in assets.calculator_files.items():
        total += write(tmp, f"{assets.calculator_out}/{name}", data)
    for rel, source in sorted(assets.copies.items()):
        total += write(tmp, rel, source.read_bytes())
    if total > MAX_BYTES:  # a warning, not a failure: `serve` must still start
        result.warnings.append(f"the build holds {total / 1e6:.2f} MB, over its "
                               f"{MAX_BYTES / 1e6:.0f} MB budget (tests/test_build.py fails)")
    result.total_bytes = total
    result.gz_bytes = compress_beside(tmp)
    return result


def _put_in_place(tmp, out, parent_writable):
    ours = (out / MARKER).is_file() or not any(out.iterdir())
    if ours and parent_writable:
        old = out.parent / f".{out.name}.old-{os.getpid()}"
        os.rename(out, old)
        os.rename(tmp, out)
        shutil.rmtree(old, ignore_errors=True)
        return
    # a folder holding files of someone else's, or one whose parent we cannot write: copy in
    shutil.copytree(tmp, out, dirs_exist_ok=True)
