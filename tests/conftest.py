"""What the whole suite shares: one static build of the site.

`site_build` is the folder `attention-explorable serve` builds and serves ($AE_BUILD_DIR, by
default .build/site). app/hosting/build.py locks the folder while it builds and skips a build whose
inputs are unchanged, so every pytest-xdist worker and every server the tests start finds the
same build, made once for the run (or kept from the last run when nothing it reads changed).
Tests read it and never write into it; test_build.py makes its own builds, since it tests the
build itself.
"""

import functools
from pathlib import Path

import pytest

try:
    from _pytest.nodeid import NodeId  # pytest >= 9.2: a node's id is a NodeId in `_id`
except ImportError:
    NodeId = None

from app.hosting import build, static_site


@pytest.fixture(scope="session")
def site_build():  # -> Path of the built static site
    return build.build(static_site.site_dir(), log=lambda line: None).out



# The parallel pass runs these first, longest first as measured (docs/benchmarks.md, "The
# suite's time"): each takes half a minute to three (a wheel built and installed, a site built,
# processes forked, nginx, Transformers models built, a benchmark's own server), so started
# last they would leave one worker running alone at the end. Whole files move, in this order
# (paths under tests/); the rest keep theirs.
LONG_FIRST = ("test_hf_oracle.py", "test_install.py", "test_hosting.py",
              "test_families_derived.py", "test_nginx.py", "browser/test_frames.py",
              "test_build.py", "test_benchmark_scripts.py", "test_throwaway_contract.py",
              "test_hostile_input.py", "browser/test_embed.py", "test_serve.py",
              "test_lecture_hall.py", "test_stills_js.py", "test_panel_contract.py",
              "test_panel_internals.py")
# Files whose module (or session) fixture starts servers, builds a site or renders every page:
# each runs on one worker (`--dist loadgroup`), so its fixture is made once, not once per worker.
ONE_WORKER = ("test_install.py", "test_build.py", "test_hosting.py", "test_nginx.py",
              "test_panel_internals.py", "test_serve.py", "test_hostile_input.py",
              "browser/test_embed.py", "browser/test_nesting.py", "browser/test_static_build.py",
              "browser/test_frames.py", "test_static_calculator.py",
              "browser/test_static_sweep.py", "browser/test_static_math.py",
              "browser/test_static_costs.py")
TESTS = Path(__file__).resolve().parent


def _under_tests(item):  # -> the test file's path under tests/, "browser/test_embed.py"
    return Path(item.path).resolve().relative_to(TESTS).as_posix()


@pytest.hookimpl(tryfirst=True)  # before xdist reads the groups
def pytest_collection_modifyitems(session, config, items):
    says_serial = functools.cache(lambda path: "mark.serial" in path.read_text())
    for item in items:
        if item.get_closest_marker("serial") and not says_serial(item.path):
            # make test's serial pass collects only the files that say `mark.serial`
            raise pytest.UsageError(f"{item.nodeid} is serial by a mark its file does not "
                                    "write: mark it with @pytest.mark.serial in its file")
        if _under_tests(item) in ONE_WORKER:
            item.add_marker(pytest.mark.xdist_group(item.path.stem))

    def rank(item):
        name = _under_tests(item)
        return LONG_FIRST.index(name) if name in LONG_FIRST else len(LONG_FIRST)

    items.sort(key=rank)  # stable: the order within each file, and of the rest, is kept


def _groups(item):  # -> the xdist_group names on a test, as xdist reads them
    return sorted({str(m.args[0] if m.args else m.kwargs.get("name", "default"))
                   for m in item.iter_markers("xdist_group")})


# `--dist loadgroup` keeps a group on one worker by the "@group" xdist appends to each test's
# id. pytest-xdist 3.8 writes it into `item._nodeid`, which pytest 9.2 no longer reads (a
# node's id is `item._id`): the suffix was silently lost, every group was spread over both
# workers and each worker made the group's module fixture (a wheel installed, nginx, the
# Transformers oracle) for itself. This puts the suffix where this pytest reads it, after
# xdist's own hook, and fails the run when no way works, rather than run ungrouped.
@pytest.hookimpl(trylast=True, specname="pytest_collection_modifyitems")
def pytest_collection_modifyitems_name_the_groups(config, items):
    if not getattr(config.option, "loadgroup", False) or not hasattr(config, "workerinput"):
        return  # not a pytest-xdist worker of --dist loadgroup
    for item in items:
        groups = _groups(item)
        if not groups or "@" in item.nodeid:
            continue
        named = f"{item.nodeid}@{'_'.join(groups)}"
        if NodeId is not None and isinstance(getattr(item, "_id", None), NodeId):
            item._id = NodeId.parse(named)
        else:
            item._nodeid = named
        if item.nodeid != named:
            raise pytest.UsageError(f"{item.nodeid}: cannot name its xdist group {groups} in "
                                    "its id, so --dist loadgroup would spread the group")


def pytest_configure(config):
    # The workers take units (a group, or one test) in collection order, which the sort above
    # makes long files first; xdist's default reorders the units by test count, which put
    # a group of many quick tests before a one-test file of two minutes.
    if hasattr(config.option, "loadscopereorder"):
        config.option.loadscopereorder = False
