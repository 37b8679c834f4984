"""What the tests of a JavaScript twin of Python code share: node, which a missing install
fails rather than skips, and a copy of the script with one change (a mutant), which the
comparison must catch."""

import shutil

import pytest


def node(script_name) -> str:  # -> the node binary; fails naming what could not be tested
    found = shutil.which("node") or shutil.which("nodejs")
    if not found:
        pytest.fail("node is not installed: install Node.js (Debian: apt-get install nodejs; "
                    f"`make system-packages` does it) to test static/{script_name}")
    return found


def mutant(script, tmp_path, old, new):  # -> a copy of script in tmp_path, old made new
    source = script.read_text()
    assert source.count(old) == 1, f"{old!r} is no longer in {script.name}: update MUTANTS"
    copy = tmp_path / script.name
    copy.write_text(source.replace(old, new))
    return copy
