"""What the whole suite shares: one static build of the site.

`site_build` is the folder `attention-explorable serve` builds and serves ($AE_BUILD_DIR, by
default .build/site). app/hosting/build.py locks the folder while it builds and skips a build whose
inputs are unchanged, so every pytest-xdist worker and every server the tests start finds the
same build, made once for the run (or kept from the last run when nothing it reads changed).
Tests read it and never write into it; test_build.py makes its own builds, since it tests the
build itself.
"""

import functools

import pytest

from app.hosting import build, static_site


@pytest.fixture(scope="session")
def site_build():  # -> Path of the built static site
    return build.build(static_site.site_dir(), log=lambda line: None).out



# The parallel pass runs these first: each takes half a minute to two minutes (a wheel built and
# installed, a site built, processes forked, nginx), so started last they would leave one
# worker running alone at the end. Whole files move, in this order; the rest keep theirs.
LONG_FIRST = ("test_install.py", "test_build.py", "test_hosting.py", "test_nginx.py",
              "test_panel_internals.py")
# Files whose module fixture starts servers or builds a site: each runs on one worker
# (`--dist loadgroup`), so its fixture is made once, not once per worker.
ONE_WORKER = ("test_install.py", "test_build.py", "test_hosting.py", "test_nginx.py",
              "test_panel_internals.py", "test_serve.py", "test_hostile_input.py",
              "test_embed.py", "test_nesting.py", "test_static_build.py")


@pytest.hookimpl(tryfirst=True)  # before xdist reads the groups
def pytest_collection_modifyitems(session, config, items):
    says_serial = functools.cache(lambda path: "mark.serial" in path.read_text())
    for item in items:
        if item.get_closest_marker("serial") and not says_serial(item.path):
            # make test's serial pass collects only the files that say `mark.serial`
            raise pytest.UsageError(f"{item.nodeid} is serial by a mark its file does not "
                                    "write: mark it with @pytest.mark.serial in its file")
        if item.path.name in ONE_WORKER:
            item.add_marker(pytest.mark.xdist_group(item.path.stem))

    def rank(item):
        name = item.path.name
        return LONG_FIRST.index(name) if name in LONG_FIRST else len(LONG_FIRST)

    items.sort(key=rank)  # stable: the order within each file, and of the rest, is kept
