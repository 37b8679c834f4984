"""What the whole suite shares: one static build of the site.

`site_build` is the folder `attention-explorable serve` builds and serves ($AE_BUILD_DIR, by
default .build/site). app/build.py locks the folder while it builds and skips a build whose
inputs are unchanged, so every pytest-xdist worker and every server the tests start finds the
same build, made once for the run (or kept from the last run when nothing it reads changed).
Tests read it and never write into it; test_build.py makes its own builds, since it tests the
build itself.
"""

import pytest

from app.hosting import build, static_site


@pytest.fixture(scope="session")
def site_build():  # -> Path of the built static site
    return build.build(static_site.site_dir(), log=lambda line: None).out
