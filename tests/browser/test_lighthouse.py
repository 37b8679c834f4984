"""One Lighthouse 12 run (mobile defaults) of the first chapter, in CI: accessibility, best
practices and SEO at 100 and no layout shift to speak of. Performance is a benchmark figure
(benchmarks/lighthouse.py, median of three), too noisy on a shared machine to assert here.
Lighthouse comes from npm (installed into a cache folder when missing), Chromium is Debian's.
"""

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.append(str(ROOT / "benchmarks"))  # after the packages: never shadow `kernels`
import lighthouse  # benchmarks/lighthouse.py


def test_the_first_chapter_scores_100_where_it_can_and_does_not_shift(server):
    report = lighthouse.run_lighthouse(lighthouse.lighthouse_bin(), server + "/")
    got = lighthouse.figures(report)
    assert (got["accessibility"], got["best-practices"], got["seo"]) == (100, 100, 100), got
    assert got["CLS"] <= 0.1, got
    assert not got["failing"], got["failing"]
