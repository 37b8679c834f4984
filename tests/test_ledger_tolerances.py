"""Every tolerance in the ledger has a stated reason, and the sampled rows' bound is tight
enough to notice a wrong statistic.

A row whose rule allows a tolerance ("abs", "sampled") names its reason
(attention_core.claims.REASONS). The √d_k sweep's rows are "sampled": the document's figure
must lie within 4 standard errors of the mean of 2,000 draws, each standard error measured
from the draws themselves. The mutation below measures the scores' spread with ddof=1 (the
sample standard deviation, 3.3% larger over 16 keys) instead of ddof=0: the ledger must then
fail a row, and pass without it.
"""

import math
import tomllib

import numpy as np
import pytest

from attention_core import claims, costs, sqrt_dk

ROWS = tomllib.loads(claims.data_text())["row"]
TOLERANT = ("abs", "sampled")


def test_every_row_with_a_tolerance_states_its_reason():
    tolerant = [r for r in ROWS if r["rule"] in TOLERANT]
    assert tolerant
    bad = [r["what"] for r in tolerant if r.get("reason") not in claims.REASONS or not r["why"]]
    assert bad == []
    # and no rule is a bare percentage: the old "within 5%" rule is gone from the ledger
    assert not [r["what"] for r in ROWS if r["rule"] == "within"]


def test_the_sampled_rows_are_the_sweeps_and_their_bound_is_four_standard_errors():
    sampled = {r["what"]: r for r in ROWS if r["rule"] == "sampled"}
    assert len(sampled) == 11 and all(r["reason"] == "standard-error" for r in sampled.values())
    values = claims.sqrt_dk_values()
    for (_, what), value in values.items():
        if what not in sampled:
            continue
        row = sampled[what]
        assert isinstance(value, claims.Sampled) and row["sigmas"] == 4
        # the standard error of a 2,000-draw mean: 0.3-1.5% of the mean, not 5%
        assert 0.003 < value.se / value.mean < 0.015, (what, value)
        claim = claims.judge(row, value)
        bound = 4 * value.se + 0.5 * 10 ** -row["digits"]
        assert claim.ok == (abs(value.mean - row["value"]) <= bound)
        assert claim.rule == f"within 4 SE (±{bound:.2f})"


def test_a_standard_error_is_what_the_draws_give():  # the sum-of-squares form, checked
    rng = np.random.default_rng(7)
    mean = sqrt_dk.expectation((8,), draws=300, seed=7)
    spreads = []
    for _ in range(3):  # the same draws, in the same chunks of 100
        q = rng.standard_normal((100, 1, 8))
        k = rng.standard_normal((100, sqrt_dk.DEFAULT_KEYS, 8))
        spreads.append((k * q).sum(-1).std(axis=-1))
    spreads = np.concatenate(spreads)
    assert math.isclose(mean.spread[0], spreads.mean(), rel_tol=1e-9)
    assert math.isclose(mean.spread_se[0], spreads.std(ddof=1) / math.sqrt(300), rel_tol=1e-6)


@pytest.fixture
def fresh_sweep():  # the sweep's means are cached: start and end without the cache
    sqrt_dk._expectation.cache_clear()
    yield
    sqrt_dk._expectation.cache_clear()


def test_the_spread_measured_with_ddof_1_fails_the_ledger(monkeypatch, fresh_sweep):
    assert all(c.ok for c in claims.sqrt_dk_claims())
    before = sqrt_dk.expectation((512,), draws=2000).spread[0]
    monkeypatch.setattr(sqrt_dk, "spread", lambda raw: raw.std(axis=-1, ddof=1))
    sqrt_dk._expectation.cache_clear()
    after = sqrt_dk.expectation((512,), draws=2000).spread[0]
    n = sqrt_dk.DEFAULT_KEYS
    assert math.isclose(after / before, math.sqrt(n / (n - 1)), rel_tol=1e-9)  # +3.3%
    failed = [c.what for c in claims.sqrt_dk_claims() if not c.ok]
    assert failed and all("measured spread" in what for what in failed), failed
    assert not all(c.ok for c in claims.all_claims())


def test_the_12_percent_is_the_documents_own_rounded_fraction():
    # the document writes 2.1 / (15 + 2.1) ≈ 12%: of its rounded figures. The unrounded share
    # (12.52%) would round to 13%, so the row computes the rounded fraction, and the "≈ 1/8"
    # beside it is held, unrounded, to the nearest one-in-a-whole-number
    llama = costs.preset("llama-3-8b")
    exact = costs.decode_attention_share(llama, 4096)
    assert round(exact * 100) == 13 and round(1 / exact) == 8
    values = {what: v for (_, what), v in claims.cost_values().items()}
    assert round(values["Llama-3-8B, 4,096: attention share of a decode step"] * 100) == 12
    assert values["Llama-3-8B, 4,096: attention share of a decode step, as 1 in x"] == 1 / exact
    what = "Llama-3-8B, 4,096: attention share of a decode step"
    row = next(r for r in ROWS if r["what"] == what)
    assert row["rule"] == "rounds" and row["digits"] == 0


# --- an "abs" tolerance is capped by its reason ----------------------------------------------
#
# A reason names where the slack comes from, so it also bounds how much slack there can be:
# - "floating-point" (the document says exactly; float64 rounds): a few dozen roundings of at
#   most one machine epsilon each, relative to the figure (or to 1 where the figure is 0):
#   64 ε ≈ 1.4e-14;
# - "rounding" (the figure is rounded): half a unit in the last digit the figure shows.
# A reason with no cap here may not widen an "abs" row: add its cap first.
EPS = float(np.finfo(np.float64).eps)
ABS_CAPS = {
    "floating-point": lambda row: 64 * EPS * max(1.0, abs(row["value"])),
    "rounding": lambda row: 0.5 * 10.0 ** -row["digits"],
}


def abs_rows():
    rows = [r for r in ROWS if r["rule"] == "abs"]
    assert rows  # the test means something only while the ledger has such rows
    return rows


def test_every_abs_tolerance_is_within_its_reasons_cap():
    assert 64 * EPS < 1.5e-14
    too_wide = {}
    for row in abs_rows():
        assert row["reason"] in ABS_CAPS, (row["what"], row["reason"])
        cap = ABS_CAPS[row["reason"]](row)
        if not 0 < row["tolerance"] <= cap:
            too_wide[row["what"]] = (row["tolerance"], cap)
    assert too_wide == {}


def test_a_value_off_by_more_than_its_reason_allows_fails_its_row():
    values = {}
    for section in (claims.head_values, claims.cost_values, claims.math_values):
        values.update(section())
    for row in abs_rows():
        key = (row["document"], row["what"])
        if key not in values:  # only the √d_k sweep is slow; read it only if a row needs it
            values.update(claims.sqrt_dk_values())
        computed = values[key]
        assert claims.judge(row, computed).ok, row["what"]
        scale = row.get("scale", 1)
        cap = ABS_CAPS[row["reason"]](row)
        for off in (2 * cap, -2 * cap):  # the figure, moved twice the cap in its unit
            moved = (row["value"] + off) * scale
            assert not claims.judge(row, moved).ok, (row["what"], off)
