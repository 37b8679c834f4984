"""The ledger's expected side (attention_core/claims.toml) quotes its documents.

Every row's quote is the document's words: found once in the document where the documents
are present (../shared/seeds, as tests/prose_check.py finds them), and otherwise among the
hashes of the quotes committed in tests/data/seed_fingerprint.json, which
scripts/fingerprint_seeds.py makes only of quotes it found in the documents. Every row's
figure stands in its quote and parses to the row's value, in the row's unit. A figure changed
in the data file (in its quote, or in its value alone) fails both checks: the tests below do
that on a copy in memory.
"""

import copy
import math
import os
import re

import numpy as np
import pytest

from attention_core import claims
from tests.prose_check import FP, ROOT

ROWS = claims.load_rows(claims.data_text())
DOCUMENTS = (claims.SDPA, claims.MATH)
# a unit as the documents write it -> that unit in the computed value's units (here, not in
# the data file: a row's `scale` must agree with its unit)
UNITS = {"": 1, "%": 0.01, "B": 1e9, "GB": 1e9, "GiB": 2 ** 30, "KB": 1024, "M": 1e6, "k": 1e3,
         "million": 1e6, "power of ten": 1, "yes": 1, "1/x": 1}
# the rows that only test arithmetic: a square root, e¹², 8192², exp(−∞) (each computed with
# `math` or an operator, nothing of attention_core's): counted apart from the claims
IDENTITIES = {(claims.SDPA, "√5, the divisor of a d_k = 5 head"), (claims.SDPA, "√4"),
              (claims.SDPA, "√128"), (claims.SDPA, "√512"), (claims.MATH, "√128"),
              (claims.MATH, "e¹²"), (claims.MATH, "8,192-token prompt: scores per head"),
              (claims.SDPA, "exp(−∞), a masked score's exponential")}
# the rows the worked example's vectors are fitted to (scripts/fit_worked_example.py targets
# their figures), and the 0.07 again as a percentage: they agree by construction
FITTED = {(claims.SDPA, w) for w in (
    "row 2 (sat), mask on: weight on cat", "row 2, mask on: weight on the",
    "row 2, mask on: weight on the, as a percentage", "row 2, mask on: effective tokens attended",
    "row 2, mask off: weight on mat", "row 2, divisor off: weight on cat",
    "row 2, divisor off: effective tokens attended")}
# the rules that allow a tolerance, each needing a reason from claims.REASONS
TOLERANT = ("abs", "sampled")
SUPERSCRIPT = str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹", "0123456789")


def squash(text):
    return " ".join(text.split())


def documents():  # -> {document: its text}, or None where the documents are not here
    folder = FP.seeds_dir(ROOT)
    if folder is None:
        return None
    return {name: (folder / f"{name}.txt").read_text(encoding="utf-8") for name in DOCUMENTS}


def number_text(figure, unit):  # "≈ 4.3 GB", "GB" -> "4.3": the figure without its unit
    text = figure
    for tex, plain in (("\\mathrm{\\%}", "%"), ("\\approx", "≈"), ("\\mathrm{", ""), ("}", "")):
        text = text.replace(tex, plain)
    text = text.strip().lstrip("~≈±=").strip()
    if unit and unit not in ("yes", "power of ten", "1/x"):
        if not text.endswith(unit):
            return None
        text = text.removesuffix(unit).strip()
    return text


def parse(figure, unit):  # the figure as quoted -> its number (or list of numbers), or None
    text = number_text(figure, unit)
    if text is None:
        return None
    if unit == "power of ten":
        match = re.fullmatch(r"10([⁰¹²³⁴⁵⁶⁷⁸⁹]+)", text)
        return int(match.group(1).translate(SUPERSCRIPT)) if match else None
    if unit == "1/x":  # "1/8" -> 8
        match = re.fullmatch(r"1/(\d+)", text)
        return int(match.group(1)) if match else None
    if re.fullmatch(r"\d+(, \d+)+", text):
        return [int(x) for x in text.split(", ")]
    if re.fullmatch(r"[−-]?(\d{1,3}(,\d{3})*(\.\d+)?|\d+(\.\d+)?)", text):
        return float(text.replace(",", "").replace("−", "-"))
    return None


def row_problems(row):  # -> what is wrong with one row on its own (no documents needed)
    name = f"{row.get('document')} / {row.get('what')}"
    out = []
    if row.get("document") not in DOCUMENTS:
        out.append(f"{name}: unknown document")
    if row.get("kind") not in claims.KINDS:
        out.append(f"{name}: kind {row.get('kind')!r}")
    if not row.get("why"):
        out.append(f"{name}: no reason given for its rule")
    figure, quote, unit = row.get("figure", ""), row.get("quote", ""), row.get("unit", "")
    if not figure or figure not in quote:
        out.append(f"{name}: the figure {figure!r} is not in its quote")
    if UNITS.get(unit) is None or not math.isclose(row.get("scale", 1), UNITS[unit]):
        out.append(f"{name}: scale {row.get('scale', 1)} is not that of unit {unit!r}")
    rule = row.get("rule")
    need = {"rounds": ("digits",), "abs": ("tolerance",),
            "sampled": ("sigmas", "digits"), "exact": ()}
    if rule not in need or any(field not in row for field in need[rule]):
        out.append(f"{name}: rule {rule!r} without what it needs")
    if rule in TOLERANT and row.get("reason") not in claims.REASONS:
        out.append(f"{name}: a tolerance ({rule}) without a reason from {claims.REASONS}")
    if rule == "sampled" and row.get("reason") != "standard-error":
        out.append(f"{name}: a sampled row's bound is a standard-error bound")
    if rule not in TOLERANT and "reason" in row:
        out.append(f"{name}: a reason for a tolerance its rule ({rule}) does not have")
    if (row.get("kind") == "fitted") != bool(row.get("fitted")):
        out.append(f"{name}: a fitted row says what fitted it, and only a fitted row")
    parsed = parse(figure, unit)
    if row.get("derived"):  # words, not a number: the derivation is said, and is no parse
        if parsed is not None:
            out.append(f"{name}: the figure {figure!r} is a number: it needs no derivation")
    elif parsed is None:
        out.append(f"{name}: the figure {figure!r} is not a number in {unit or 'no unit'}")
    elif parsed != row.get("value"):
        out.append(f"{name}: the figure {figure!r} is {parsed}, not {row.get('value')}")
    if rule in ("rounds", "sampled") and parsed is not None and not row.get("derived"):
        text = number_text(figure, unit)
        shown = len(text.rpartition(".")[2]) if "." in text else 0
        if row["digits"] < 0:  # to tens, hundreds, ...: the figure ends in that many zeros
            if "." in text or len(text) - len(text.rstrip("0")) < -row["digits"]:
                out.append(f"{name}: rounds to 10^{-row['digits']}; the figure does not end "
                           "in that many zeros")
        elif shown != row["digits"]:
            out.append(f"{name}: rounds to {row['digits']} dp; the document shows {shown}")
    return out


def quote_problems(rows, texts=None, hashes=None):
    # -> each quote not found once in its document (texts), or not among the committed
    # hashes of quotes found there (hashes)
    out = []
    for row in rows:
        name, quote = f"{row['document']} / {row['what']}", squash(row["quote"])
        if texts is not None and squash(texts[row["document"]]).count(quote) != 1:
            out.append(f"{name}: the quote is not once in the document: {row['quote']!r}")
        if hashes is not None and FP.quote_digest(row["quote"]) not in hashes[row["document"]]:
            out.append(f"{name}: the quote is not one the fingerprint found in the document: "
                       f"{row['quote']!r}")
    return out


def problems(rows, texts=None, hashes=None):
    return [p for row in rows for p in row_problems(row)] + quote_problems(rows, texts, hashes)


def need_documents():
    texts = documents()
    if texts is None:
        if os.environ.get("CI") and not os.environ.get("AE_SEEDS_ABSENT"):
            pytest.fail("CI=true but ../shared/seeds is not beside this checkout")
        pytest.skip("the documents are not beside this checkout: the quotes are checked "
                    "against the committed fingerprint instead")
    return texts


def test_every_row_parses_to_its_figure_in_its_quote():
    assert problems(ROWS) == []


def test_every_quote_is_the_documents_words_once():
    assert quote_problems(ROWS, texts=need_documents()) == []


def test_every_quote_is_in_the_committed_fingerprint():  # any clone: no documents needed
    assert quote_problems(ROWS, hashes=FP.load_quotes()) == []


def test_the_quotes_fingerprint_is_what_the_documents_give():
    need_documents()
    made = FP.build(FP.seeds_dir(ROOT))["quotes"]
    assert {k: frozenset(v) for k, v in made.items()} == FP.load_quotes(), (
        "tests/data/seed_fingerprint.json is out of date: run scripts/fingerprint_seeds.py")


def changed_figure(row):  # -> a copy with its figure one unit higher in the last place shown
    figure = row["figure"]
    if row.get("unit") == "power of ten":  # 10²⁹ -> 10³⁰
        new = "10" + str(row["value"] + 1).translate(str.maketrans("0123456789", "⁰¹²³⁴⁵⁶⁷⁸⁹"))
        return {**row, "figure": new, "quote": row["quote"].replace(figure, new, 1),
                "value": row["value"] + 1}
    match = list(re.finditer(r"\d+", figure))[-1]
    step = 10 ** max(-row.get("digits", 0), 0)  # "~300" rounded to tens -> "~310"
    bumped = str((int(match.group()) + step) % 10 ** len(match.group())).zfill(len(match.group()))
    new = figure[:match.start()] + bumped + figure[match.end():]
    out = copy.deepcopy(row)
    out["figure"] = new
    out["quote"] = row["quote"].replace(figure, new, 1)
    out["value"] = parse(new, row.get("unit", ""))
    return out


NUMERIC = [r for r in ROWS if not r.get("derived")]


@pytest.mark.parametrize("index", range(len(NUMERIC)),
                         ids=[f"{r['document'][:4]}-{r['what']}" for r in NUMERIC])
def test_a_figure_changed_in_quote_and_value_fails(index):
    rows = copy.deepcopy(ROWS)
    i = rows.index(NUMERIC[index])
    rows[i] = changed_figure(rows[i])
    assert row_problems(rows[i]) == []  # consistent in itself: only the documents can tell
    name = f"{rows[i]['document']} / {rows[i]['what']}"
    found = quote_problems(rows, hashes=FP.load_quotes())
    assert found and all(name in p for p in found), found
    texts = documents()
    if texts is not None:
        found = quote_problems(rows, texts=texts)
        assert found and all(name in p for p in found), found


@pytest.mark.parametrize("index", range(len(NUMERIC)),
                         ids=[f"{r['document'][:4]}-{r['what']}" for r in NUMERIC])
def test_a_value_changed_alone_fails(index):
    rows = copy.deepcopy(ROWS)
    i = rows.index(NUMERIC[index])
    value = rows[i]["value"]
    rows[i]["value"] = [*value[:-1], value[-1] + 1] if isinstance(value, list) else (
        value * 1.01 if value else 1)
    found = problems(rows)
    assert len(found) == 1 and rows[i]["what"] in found[0], found


def test_a_derived_row_says_what_it_derives_from_and_its_words_are_quoted():
    derived = [r for r in ROWS if r.get("derived")]
    assert derived, "the words-not-numbers rows are marked derived"
    for row in derived:
        assert row["figure"] in row["quote"] and f'"{row["figure"]}"' in row["derived"], \
            row["what"]
    bad = copy.deepcopy(derived[0])
    bad["figure"] = "something the document does not say"
    assert any("not in its quote" in p for p in row_problems(bad))


def test_every_row_is_computed_once_and_every_computation_has_a_row():
    keys = [(r["document"], r["what"]) for r in ROWS]
    assert len(keys) == len(set(keys))
    computed = [key for section in claims.SECTIONS for key in section()]
    assert len(computed) == len(set(computed)) and set(computed) == set(keys)


def test_identities_and_fitted_rows_are_marked_and_counted_apart():
    kinds = {(r["document"], r["what"]): r["kind"] for r in ROWS}
    assert {k for k, v in kinds.items() if v == "identity"} == IDENTITIES
    assert {k for k, v in kinds.items() if v == "fitted"} == FITTED
    ledger = claims.all_claims()
    checked = len(ROWS) - len(IDENTITIES) - len(FITTED)
    assert claims.counts(ledger) == (checked, len(FITTED), len(IDENTITIES))
    text = claims.table(ledger)
    assert (f"{checked} claims checked, {len(FITTED)} fitted, {len(IDENTITIES)} identities"
            in text)
    assert text.splitlines()[-1] == (f"{checked} of {checked} claims match, {len(FITTED)} of "
                                     f"{len(FITTED)} fitted rows hold, {len(IDENTITIES)} of "
                                     f"{len(IDENTITIES)} identities hold")
    for c in ledger:  # each line of the table says its row's kind
        line = next(x for x in text.splitlines() if f" {c.what} " in x)
        assert line.endswith(claims.KIND_SHOWN[c.kind]) and (
            ("(fitted)" in line) == (c.kind == "fitted")), line


def test_the_fitted_rows_are_the_figures_the_fit_targets():
    # scripts/fit_worked_example.py's own list of targets, run on the committed constants
    import importlib.util

    from attention_core import worked_example_constants as wec

    path = ROOT / "scripts" / "fit_worked_example.py"
    spec = importlib.util.spec_from_file_location("fit_for_ledger", path)
    fit = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(fit)
    emb = np.array([wec.EMBEDDINGS[w] for w in fit.VOCAB])
    targets = {round(t, 6) for _, t, _ in fit.checks(emb, np.array(wec.W_Q), np.array(wec.W_K),
                                                     np.array(wec.W_V)).values()}
    assert len(targets) == 6
    fitted = [r for r in ROWS if r["kind"] == "fitted"]
    assert {round(r["value"] * r.get("scale", 1), 6) for r in fitted} == targets
    claimed = {round(r["value"] * r.get("scale", 1), 6) for r in ROWS
               if r["kind"] == "claim" and r["document"] == claims.SDPA
               and isinstance(r["value"], float)}
    assert not claimed & targets, "a row with a fitted figure is counted as a checked claim"


def test_the_ledger_judges_by_the_data_file():  # a changed expected value flips the verdict
    row = next(r for r in ROWS if r["what"] == "row 2 (sat), mask on: weight on cat")
    value = claims.head_values()[claims.SDPA, row["what"]]
    assert claims.judge(row, value).ok
    assert not claims.judge({**row, "value": 0.78}, value).ok
    assert claims.judge(row, value).quote == row["quote"]


def test_every_claim_agrees():
    bad = [f"{c.source} / {c.what}: {c.shown} vs {c.document}" for c in claims.all_claims()
           if not c.ok]
    assert not bad, bad
