"""Every number in the two documents is a row of the ledger or is listed as not a claim.

The documents' numbers are read by scripts/fingerprint_seeds.py's `number_tokens` (digits
with thousands separators, decimals, a Unicode or ASCII minus, a percent sign, LaTeX's
\\mathrm{\\%}, superscript digits; digits inside a name such as Qwen3-8B or GPT-2 are part of
the name). An occurrence is covered when it lies inside the quote of a row of
attention_core/claims.toml (a claim, a fitted row or an identity), or when an entry of the
same file's `not_a_claim` list names it: the number, a passage of the document around it that
occurs once, and the reason it is not a claim.

Where the documents are present (../shared/seeds) the numbers are read from them; in any clone
the same check runs on the committed fingerprint (tests/data/seed_fingerprint.json, "numbers":
the documents' numbers in order, and which of them each quoted passage holds), and the tests
where the documents are present say whether that fingerprint is still what they give.
"""

import copy
import tomllib

import pytest

from attention_core import claims
from tests.prose_check import FP, ROOT
from tests.test_claims_data import documents, need_documents

DATA = tomllib.loads(claims.data_text())
ROWS = DATA["row"]
NOT_A_CLAIM = DATA.get("not_a_claim", [])
DOCUMENTS = (claims.SDPA, claims.MATH)


def from_documents(texts, rows=ROWS, entries=NOT_A_CLAIM):  # -> {document: "numbers" data}
    quotes = {}
    for entry in rows + entries:
        quotes.setdefault(entry["document"], []).append(entry["quote"])
    return {name: FP.numbers_of(texts[name], quotes.get(name, [])) for name in DOCUMENTS}


def span(name, data, entry, out):  # -> the indices of the numbers in the entry's quote, or None
    tokens = data["tokens"]
    got = data["quotes"].get(FP.quote_digest(entry["quote"]))
    if got is None:
        out.append(f"{name}: the quote {entry['quote']!r} is not in the document "
                   "(or the fingerprint's numbers are out of date)")
        return None
    first, count = got
    own = [t for _, _, t in FP.number_tokens(" ".join(entry["quote"].split()))]
    if own != tokens[first:first + count]:
        out.append(f"{name}: the numbers of the quote {entry['quote']!r} are {own}, "
                   f"not the fingerprint's {tokens[first:first + count]}")
    return range(first, first + count)


def coverage_problems(numbers, rows=ROWS, entries=NOT_A_CLAIM, texts=None):
    # -> one line per number covered by nothing, and per quote or entry that does not hold
    out = []
    for name in DOCUMENTS:
        tokens = numbers[name]["tokens"]
        where = None
        if texts is not None:  # to say where an uncovered number stands
            text = " ".join(texts[name].split())
            where = FP.number_tokens(text)
        by_rows = set()
        for row in (r for r in rows if r["document"] == name):
            by_rows |= set(span(name, numbers[name], row, out) or ())
        listed = set()
        for entry in (e for e in entries if e["document"] == name):
            inside = span(name, numbers[name], entry, out)
            if inside is None:
                continue
            mine = {i for i in inside if tokens[i] == entry["number"]}
            if not mine:
                out.append(f"{name}: not a claim {entry['number']!r}: not a number of its "
                           f"quote {entry['quote']!r}")
            elif mine <= by_rows:
                out.append(f"{name}: not a claim {entry['number']!r} in {entry['quote']!r}: "
                           "already in a row's quote")
            listed |= mine
        for i, token in enumerate(tokens):
            if i not in by_rows | listed:
                if where is not None:
                    start, end, _ = where[i]
                    context = f"…{text[max(start - 50, 0):start]}[{token}]{text[end:end + 30]}…"
                else:
                    context = " ".join(tokens[max(i - 3, 0):i + 4])
                out.append(f"{name}: number {i} {token!r} is in no row's quote and not listed "
                           f"as not a claim: {context}")
    return out


def entry_problems(entries=NOT_A_CLAIM, rows=ROWS):  # -> what is wrong with the list itself
    out = []
    figures = {(r["document"], r["what"]): r for r in rows}
    for e in entries:
        name = f"{e.get('document')} / not a claim {e.get('number')!r}"
        if e.get("document") not in DOCUMENTS:
            out.append(f"{name}: unknown document")
        if e.get("reason") not in claims.NOT_A_CLAIM_REASONS:
            out.append(f"{name}: reason {e.get('reason')!r} is not one of "
                       f"{claims.NOT_A_CLAIM_REASONS}")
        if len(e.get("why", "")) < 10:
            out.append(f"{name}: no words for why it is not a claim")
        if e.get("reason") == "restated":  # the row whose figure it restates
            row = figures.get((e.get("document"), e.get("row")))
            if row is None:
                out.append(f"{name}: restates no row ({e.get('row')!r})")
            elif e["number"] not in [t for _, _, t in FP.number_tokens(row["figure"])]:
                out.append(f"{name}: is not the figure {row['figure']!r} of the row it restates")
        elif "row" in e:
            out.append(f"{name}: names a row but is not a restatement")
    keys = [(e.get("document"), e.get("number"), e.get("quote")) for e in entries]
    if len(keys) != len(set(keys)):
        out.append("an entry of not_a_claim is listed twice")
    return out


def test_the_not_a_claim_list_gives_a_reason_for_each_number():
    assert NOT_A_CLAIM and entry_problems() == []


def test_every_number_in_the_documents_is_covered():
    texts = need_documents()
    assert coverage_problems(from_documents(texts), texts=texts) == []


def test_every_number_is_covered_by_the_committed_fingerprint():  # any clone: no documents
    numbers = FP.load_numbers()
    assert set(numbers) == set(DOCUMENTS)
    assert all(len(numbers[name]["tokens"]) > 100 for name in DOCUMENTS)
    assert coverage_problems(numbers) == []


def test_the_numbers_fingerprint_is_what_the_documents_give():
    texts = need_documents()
    made = FP.build(FP.seeds_dir(ROOT))["numbers"]
    assert made == FP.load_numbers() == from_documents(texts), (
        "tests/data/seed_fingerprint.json is out of date: run scripts/fingerprint_seeds.py")


def test_each_not_a_claim_quote_is_the_documents_words_once():
    texts = need_documents()
    bad = [e["quote"] for e in NOT_A_CLAIM
           if " ".join(texts[e["document"]].split()).count(" ".join(e["quote"].split())) != 1]
    assert bad == []


# --- the check catches what it is for: on copies, with the documents or the fingerprint only


def sources():  # -> [(label, numbers, texts)]: the fingerprint always, the documents if here
    out = [("fingerprint", FP.load_numbers(), None)]
    texts = documents()
    if texts is not None:
        out.append(("documents", None, texts))
    return out


def check(numbers, texts, rows=ROWS, entries=NOT_A_CLAIM):
    if texts is not None:
        numbers = from_documents(texts, rows, entries)
    return coverage_problems(numbers, rows, entries)


@pytest.mark.parametrize("index", [0, len(NOT_A_CLAIM) // 2, len(NOT_A_CLAIM) - 1])
def test_a_number_dropped_from_the_list_is_found(index):
    entries = NOT_A_CLAIM[:index] + NOT_A_CLAIM[index + 1:]
    gone = NOT_A_CLAIM[index]
    for label, numbers, texts in sources():
        found = check(numbers, texts, entries=entries)
        assert found and all(f"{gone['number']!r} is in no row's quote" in p for p in found), (
            label, found)


def test_a_row_taken_out_uncovers_its_figure():
    row = next(r for r in ROWS if r["what"] == "GPT-2 small: parameters")
    rows = [r for r in ROWS if r is not row]
    for label, numbers, texts in sources():
        found = check(numbers, texts, rows=rows)
        assert any("'124' is in no row's quote" in p for p in found), (label, found)


def test_an_entry_whose_number_is_not_in_its_quote_or_is_a_rows_is_refused():
    entries = copy.deepcopy(NOT_A_CLAIM)
    entries[0]["number"] = "98765"
    rows_quote = next(r for r in ROWS if r["what"] == "GPT-2 small: parameters")["quote"]
    entries.append({"document": claims.SDPA, "number": "124", "quote": rows_quote,
                    "reason": "name", "why": "a row's figure, hidden as not a claim"})
    for label, numbers, texts in sources():
        found = check(numbers, texts, entries=entries)
        assert any("'98765': not a number of its quote" in p for p in found), (label, found)
        assert any("'124'" in p and "already in a row's quote" in p for p in found), found


def test_an_entry_without_a_reason_or_restating_nothing_is_refused():
    entries = copy.deepcopy(NOT_A_CLAIM)
    entries[0]["reason"] = "because"
    restated = next(i for i, e in enumerate(entries) if e["reason"] == "restated")
    entries[restated]["row"] = "no such row"
    found = entry_problems(entries)
    assert any("reason 'because'" in p for p in found)
    assert any("restates no row" in p for p in found)


def test_numbers_in_latex_names_and_superscripts_are_read_as_written():
    text = (r"$$2\times (8.03\mathrm{B}-0.53\mathrm{B})\approx 12\mathrm{\%}$$ e¹² ≈ 162,755, "
            "(2,-1,0.5)=6-4+1, → 0, −1, −1.9; Qwen3-8B, GPT-2, H100, FP16, n−2, 7.4%")
    got = [t for _, _, t in FP.number_tokens(text)]
    assert got == ["2", "8.03", "0.53", "12%", "¹²", "162,755", "2", "-1", "0.5", "6", "4", "1",
                   "0", "−1", "−1.9", "2", "7.4%"]
