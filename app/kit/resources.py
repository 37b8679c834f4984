"""Where the files the app reads at run time live.

The chapters' prose is inside the `app` package, found through `importlib.resources`. The
browser's files sit in `static/` at the top of the repository, beside `app/`: a checkout and an
editable install read them there, and a wheel carries them as `app/static` (setup.py maps
the folder), so pip and pipx installs find them as a checkout does. A build that `serve` makes
for itself goes into `.build/site` of a checkout, or into the user's cache folder when the app
is installed.
"""

import os
from importlib import metadata, resources
from pathlib import Path

import rcssmin

DIST = "attention-explorable"


def package_dir():  # -> Path of the installed (or checked-out) `app` package
    return Path(str(resources.files("app")))


SOURCE_ROOT = package_dir().parent  # the folder holding app/, attention_core/, kernels/


def static_dir():  # -> Path of the browser's files: static/ of a checkout, app/static of a wheel
    beside = SOURCE_ROOT / "static"
    if (SOURCE_ROOT / "pyproject.toml").is_file() and beside.is_dir():
        return beside
    return package_dir() / "static"


STATIC_DIR = static_dir()  # switcher.js, islands.js, the stylesheet, the course page


def static_file(name):  # -> Path of one file of static/; FileNotFoundError names it
    path = STATIC_DIR / name
    if not path.is_file():
        raise FileNotFoundError(f"{path}: the app's own file is missing (a broken install?)")
    return path


def stylesheet(name):  # -> the text of static/css/<name>: a component's own stylesheet, which
    # Panel places in its shadow root
    return static_file(f"css/{name}").read_text(encoding="utf-8")


def inline_script(name, stop=None):  # -> static/<name>'s text, for a page or a component to
    # carry inline (every page repeats it): its whole-line comments left out; `stop`: a line
    # (a comment marker) where the part to carry ends
    text = static_file(name).read_text(encoding="utf-8")
    if stop is not None:
        text = text.split(stop)[0]
    return "".join(line + "\n" for line in text.splitlines()
                   if line.strip() and not line.lstrip().startswith("//"))


def version():  # -> the installed distribution's version, or the checkout's
    try:
        return metadata.version(DIST)
    except metadata.PackageNotFoundError:
        return "0+checkout"


def is_checkout():  # -> True when `app` sits in the project's own folder (pyproject beside it)
    return (SOURCE_ROOT / "pyproject.toml").is_file() and (SOURCE_ROOT / ".git").exists()


def default_build_dir(environ=None):  # -> where `serve` builds when AE_BUILD_DIR is unset
    if is_checkout():
        return SOURCE_ROOT / ".build" / "site"
    env = os.environ if environ is None else environ
    cache = env.get("XDG_CACHE_HOME", "").strip() or str(Path.home() / ".cache")
    return Path(cache).expanduser() / "attention-explorable" / "site"


def site_dir(environ=None):  # -> where serve builds and serves the static site ($AE_BUILD_DIR,
    # else the default): the live chapters read their stills from it (app/chapters/live_stills.py)
    raw = (os.environ if environ is None else environ).get("AE_BUILD_DIR", "").strip()
    return Path(raw).expanduser().resolve() if raw else default_build_dir(environ)


def minify_css(text):  # the stylesheet, in every page's head: without comments and spacing.
    # rcssmin, not our own three regular expressions: measured on static/'s 26.3 KB of CSS
    # (2026-12-04) the two gave the same 20.8 KB (rcssmin 5 bytes less) and gzip 4.6 KB, and
    # rcssmin knows strings, escapes and comments inside values, which ours did not
    return rcssmin.cssmin(text).strip()
