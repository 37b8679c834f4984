"""Installed as a package, the explorable works: a wheel and an sdist built from this tree,
each pip-installed into a fresh virtual environment and run from an unrelated folder, and an
editable install of the same tree finds its browser files where the repository keeps them.

The browser's files sit in `static/` at the top of the repository, beside `app/`; the wheel
and the sdist carry them as `app/static`, an editable install reads them in place.

The wheel route runs what a new user would: `--version`, `numbers` (every claim), `build OUT`
and `serve` (which answers "/", "/heatmap" and "/live/heatmap"). OUT is the folder `serve`
keeps its build in (the user's cache folder), so `serve` must find that build up to date and
serve its pages rather than build the site a second time. The sdist route installs
through pip's own build and must install the same files as the wheel, then run `numbers`.

One virtual environment serves both: its dependencies come with the first install, and each
test then reinstalls its own distribution in it (`--force-reinstall --no-deps`, which removes
the other's files first), so each runs with only its distribution of ours installed. The file
runs on one worker (tests/conftest.py), which builds the distributions and the venv once.
"""

import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PIP_TIMEOUT_S = 600


def run(cmd, **kw):  # -> CompletedProcess; fails the test with its output when it fails
    out = subprocess.run(cmd, check=False, capture_output=True, text=True, **kw)
    assert out.returncode == 0, f"{cmd} exited {out.returncode}:\n{out.stdout[-3000:]}\n" \
                                f"{out.stderr[-3000:]}"
    return out


@pytest.fixture(scope="module")
def dists(tmp_path_factory):  # -> (wheel, sdist) built from a copy of the tracked tree
    src = tmp_path_factory.mktemp("src")
    files = run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                cwd=ROOT).stdout.split("\0")
    for name in filter(None, files):
        if (ROOT / name).is_file():
            (src / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, src / name)
    out = tmp_path_factory.mktemp("dist")
    for hook in ("build_wheel", "build_sdist"):  # one process each: setuptools keeps state
        code = f"import sys; from setuptools import build_meta as b; b.{hook}(sys.argv[1])"
        run([sys.executable, "-c", code, str(out)], cwd=src)
    return next(out.glob("*.whl")), next(out.glob("*.tar.gz")), src


@pytest.fixture(scope="module")
def venv(dists, tmp_path_factory):  # -> the bin folder of a fresh venv with our dependencies
    where = tmp_path_factory.mktemp("venv")
    run([sys.executable, "-m", "venv", str(where)])
    run([str(where / "bin" / "python"), "-m", "pip", "install", "-q", str(dists[0])],
        timeout=PIP_TIMEOUT_S)
    return where / "bin"


def install_only(bin_dir, target):  # -> bin_dir, with `target` our one installed distribution
    run([str(bin_dir / "python"), "-m", "pip", "install", "-q", "--force-reinstall",
         "--no-deps", str(target)], timeout=PIP_TIMEOUT_S)
    return bin_dir


def installed_files(bin_dir):  # -> sorted names of the files our distribution installed
    code = ("from importlib import metadata; "
            "print('\\n'.join(sorted(str(f) for f in metadata.files('attention-explorable') "
            "if not str(f).startswith('..') and '.dist-info' not in str(f) "
            "and '__pycache__' not in str(f))))")
    return run([str(bin_dir / "python"), "-c", code], cwd="/").stdout.split()


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(url, proc, timeout_s=240):  # -> once url answers 200; fails if the server dies
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        assert proc.poll() is None, f"the server exited with {proc.returncode}"
        try:
            with urllib.request.urlopen(url, timeout=5) as r:
                if r.status == 200:
                    return
        except OSError:
            pass
        time.sleep(0.5)
    pytest.fail(f"{url} did not answer within {timeout_s} s")


def test_the_wheel_carries_the_browser_files_and_the_content(dists):
    wheel = dists[0]
    names = set(zipfile.ZipFile(wheel).namelist())
    tracked = sorted(p.relative_to(ROOT / "static").as_posix()
                     for p in (ROOT / "static").rglob("*") if p.is_file())
    assert {"switcher.js", "islands.js", "chapter.css", "css/panel.css"} <= set(tracked)
    for name in tracked:  # every file of the top-level static/, mapped into the package
        assert f"app/static/{name}" in names, name
    assert {"app/chapters/content/attention.md", "app/chapters/content/math.md",
            "app/chapters/templates/chapter.html"} <= names


def test_a_wheel_installed_elsewhere_numbers_builds_and_serves(dists, venv, tmp_path):
    wheel = dists[0]
    bin_dir = install_only(venv, wheel)
    cli = str(bin_dir / "attention-explorable")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env = dict(os.environ, XDG_CACHE_HOME=str(elsewhere / "cache"), PYTHONPATH="")
    version = run([cli, "--version"], cwd=elsewhere, env=env).stdout
    assert version.startswith("attention-explorable ") and version.split()[1][0].isdigit()
    numbers = run([cli, "numbers"], cwd=elsewhere, env=env).stdout
    total = numbers.strip().splitlines()[-1]  # "76 of 76 claims match"
    got, _, of = total.partition(" of ")
    assert got == of.split()[0] and int(got) > 0, total
    # built where `serve` keeps its build (the user's cache folder), named as a relative OUT,
    # so `serve` below finds it up to date instead of building the same site again
    out = Path("cache", "attention-explorable", "site")
    run([cli, "build", str(out)], cwd=elsewhere, env=env, timeout=300)
    for page in ("index.html", "math/index.html", "heatmap/index.html", "embed.js",
                 "assets/states"):
        assert (elsewhere / out / page).exists(), page
    port = free_port()
    with open(tmp_path / "serve.log", "w+") as log:
        proc = subprocess.Popen([cli, "serve", "--port", str(port)], cwd=elsewhere, env=env,
                                stdout=log, stderr=subprocess.STDOUT)
        try:
            base = f"http://127.0.0.1:{port}"
            wait_for(base + "/health", proc)
            for route in ("/", "/heatmap", "/live/heatmap", "/assets/course-page.html"):
                with urllib.request.urlopen(base + route, timeout=60) as r:
                    assert r.status == 200, route
                    if route == "/":
                        first_page = r.read()
        finally:
            proc.terminate()
            proc.wait(timeout=30)
            log.seek(0)
            text = log.read()
    # serve kept its build in the user's cache folder, not in the installed package: it found
    # the one made there above, and serves its pages
    assert f"{elsewhere / out}: up to date" in text, text
    assert first_page == (elsewhere / out / "index.html").read_bytes()


def test_an_sdist_installs_the_same_files_and_counts(dists, venv, tmp_path):
    wheel, sdist, _ = dists
    from_sdist = install_only(venv, sdist)
    assert "site-packages" in run([str(from_sdist / "python"), "-c",
                                   "import app; print(app.__file__)"], cwd="/").stdout
    with zipfile.ZipFile(wheel) as z:
        in_wheel = sorted(n for n in z.namelist() if ".dist-info/" not in n)
    assert installed_files(from_sdist) == in_wheel
    out = run([str(from_sdist / "attention-explorable"), "numbers"], cwd=tmp_path,
              env=dict(os.environ, PYTHONPATH="")).stdout
    assert "claims match" in out


STATIC_DIR = "from app.kit import resources; print(resources.STATIC_DIR)"


def test_an_editable_install_reads_static_in_place(dists, venv, tmp_path):
    src = dists[2]
    run([str(venv / "python"), "-m", "pip", "install", "-q", "--force-reinstall", "--no-deps",
         "-e", str(src)], timeout=PIP_TIMEOUT_S)
    env = dict(os.environ, PYTHONPATH="")
    where = Path(run([str(venv / "python"), "-c", STATIC_DIR], cwd=tmp_path, env=env)
                 .stdout.strip())
    assert where == src / "static", where  # the repository's folder, not a copy
    # a file added to the folder is served at once, with no reinstall: it is read in place
    (src / "static" / "added.txt").write_text("in place")
    code = "from app.kit import resources; print(resources.static_file('added.txt').read_text())"
    assert run([str(venv / "python"), "-c", code], cwd=tmp_path, env=env).stdout.strip() \
        == "in place"
