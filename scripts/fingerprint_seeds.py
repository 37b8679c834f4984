"""Fingerprint the two source documents, so the copied-prose tests run in any clone.

The documents (seeds/*.txt) live beside the repository, in a `shared/` folder only this
project's CI lays out; their sentences must never be committed. What is committed instead,
in tests/data/seed_fingerprint.json, is a hash of every run of RUN consecutive words of each
document: enough to tell whether the article repeats a run, never enough to read one back.

Words are what `words()` keeps: lower-case letters and apostrophes, with HTML tags, digits
and punctuation dropped, so markup and number formatting cannot hide a copied run. Every run
is hashed with BLAKE2b (64 bits, keyed by PERSON); the runs of a document are sorted, so the
file says nothing about their order either.

    .venv/bin/python scripts/fingerprint_seeds.py            # rewrite the fingerprint
    .venv/bin/python scripts/fingerprint_seeds.py --check    # exit 1 if it is out of date
    .venv/bin/python scripts/fingerprint_seeds.py --seeds DIR

Without --seeds it looks for seeds/ in ./shared, ../shared (beside the checkout) and .

The same file holds, under "quotes", a hash of each passage the claims ledger quotes
(attention_core/claims.toml) that was found, word for word, in its document when the file was
made: in a clone without the documents, tests/test_claims_data.py checks the ledger's quotes
against these hashes instead of the documents. A quote not in its document gets no hash.

Under "numbers" it holds, for each document, every number in it as `number_tokens()` reads
them (the numbers alone, in order: no words), and for each passage the ledger quotes (its
rows and its list of numbers that are not claims) which of those numbers lie inside it: so
tests/test_document_numbers.py can check in any clone that every number is a row or is listed
as not a claim.
"""

import argparse
import hashlib
import json
import re
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FINGERPRINT = ROOT / "tests" / "data" / "seed_fingerprint.json"
CLAIMS = ROOT / "attention_core" / "claims.toml"  # the ledger's quotes of the documents
SEEDS = ("scaled-dot-product-attention.txt", "dot-products-softmax-attention-math.txt")
RUN = 7  # words per run: long enough that a shared run is a copied phrase, not an idiom
PERSON = b"ae-seed-runs-v1"  # BLAKE2b personalisation: these hashes mean nothing elsewhere


def words(text):  # -> lower-case words, markup and numbers dropped
    text = re.sub(r"<[^>]+>", " ", text)
    return re.findall(r"[a-z']+", text.lower())


def runs(ws, n=RUN):  # [word] -> {"w1 w2 ... wn"}: every run of n consecutive words
    return {" ".join(ws[i:i + n]) for i in range(len(ws) - n + 1)}


def digest(run):  # "w1 ... wn" -> 16 hex digits
    return hashlib.blake2b(run.encode("utf-8"), digest_size=8, person=PERSON).hexdigest()


def fingerprint_of(text):  # a document's text -> {"words": N, "runs": [sorted hashes]}
    ws = words(text)
    return {"words": len(ws), "runs": sorted({digest(r) for r in runs(ws)})}


def squash(text):  # whitespace runs -> one space: a quote may break where the document wraps
    return " ".join(text.split())


def quote_digest(quote):  # a quote of a document -> 16 hex digits (whitespace squashed)
    return digest("quote: " + squash(quote))


def quotes_of(text, claims_text):  # -> sorted hashes of the ledger's quotes found in text
    rows = tomllib.loads(claims_text)["row"]
    return sorted({quote_digest(r["quote"]) for r in rows if squash(r["quote"]) in squash(text)})


# a number as the documents write it: digits with thousands separators, a decimal part, a sign
# (a Unicode or ASCII minus where it is not a binary minus) and a percent sign (LaTeX's
# \mathrm{\%} too); or a run of superscript digits (e⁶⁸, 10²⁹, n²)
NUMBER = re.compile(r"(?P<sup>[⁰¹²³⁴⁵⁶⁷⁸⁹]+)"
                    r"|(?P<sign>[−-])?(?P<num>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?)"
                    r"(?P<pct>%|\\mathrm\{\\%\})?")
# what may stand before a sign for it to be a sign, not a binary minus (6-4, n−2, B}-0.53)
NOT_BEFORE_A_SIGN = re.compile(r"[\w)\]}]")
# digits that are part of a name: after a letter (Qwen3, H100, FP16) or a hyphen that follows a
# word with a letter in it (GPT-2, Qwen3-8B, FlashAttention-2)
NAME_PART = re.compile(r"(?:[A-Za-z_]|[A-Za-z][A-Za-z0-9]*-)$")


def number_tokens(text):  # text -> [(start, end, token)]: every number in it, in order
    out = []
    for m in NUMBER.finditer(text):
        if m.group("sup"):
            out.append((m.start(), m.end(), m.group()))
            continue
        start = m.start()
        if m.group("sign") and start and NOT_BEFORE_A_SIGN.match(text[start - 1]):
            start = m.start("num")  # a binary minus: not part of the number
        if NAME_PART.search(text[max(start - 40, 0):start]):
            continue
        token = text[start:m.end()].replace("\\mathrm{\\%}", "%")
        out.append((start, m.end(), token))
    return out


def numbers_of(text, quotes):  # a document, its quoted passages -> "numbers" (see above)
    text = squash(text)
    found = number_tokens(text)
    spans = {}
    for quote in quotes:
        q = squash(quote)
        at = text.find(q)
        if at < 0:
            continue  # not in the document: no entry, and the tests say so
        inside = [i for i, (a, b, _) in enumerate(found) if at <= a and b <= at + len(q)]
        spans[quote_digest(quote)] = [inside[0], len(inside)] if inside else [0, 0]
    return {"tokens": [t for _, _, t in found], "quotes": dict(sorted(spans.items()))}


def ledger_quotes(claims_text):  # claims.toml -> {document: [every passage it quotes]}
    data = tomllib.loads(claims_text)
    out = {}
    for entry in data["row"] + data.get("not_a_claim", []):
        out.setdefault(entry["document"], []).append(entry["quote"])
    return out


def seeds_dir(root=ROOT):  # -> the seeds/ folder beside (or in) this checkout, or None
    for base in (root / "shared", root.parent / "shared", root):
        if all((base / "seeds" / name).is_file() for name in SEEDS):
            return base / "seeds"
    return None


def build(folder, claims=CLAIMS):  # seeds folder -> the document written to FINGERPRINT
    texts = {name: (folder / name).read_text(encoding="utf-8") for name in SEEDS}
    claims_text = Path(claims).read_text(encoding="utf-8")
    return {
        "about": ("hashes of every run of words of the source documents, and of each passage "
                  "the claims ledger quotes from them; the documents' numbers (no words) and "
                  "which of them each quoted passage holds; made by scripts/fingerprint_seeds.py, "
                  "read by tests/test_article*.py, tests/test_claims_data.py and "
                  "tests/test_document_numbers.py"),
        "run": RUN,
        "hash": f"blake2b, 8 bytes, person={PERSON.decode()}",
        "documents": {name: fingerprint_of(text) for name, text in texts.items()},
        "quotes": {name.removesuffix(".txt"): quotes_of(text, claims_text)
                   for name, text in texts.items()},
        "numbers": {name.removesuffix(".txt"): numbers_of(
            text, ledger_quotes(claims_text).get(name.removesuffix(".txt"), []))
            for name, text in texts.items()},
    }


def dumps(data):  # one hash per line: a changed document shows as a readable diff of hashes
    return json.dumps(data, indent=1) + "\n"


def load(path=FINGERPRINT):  # -> {document name: frozenset of hashes}, plus the run length
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    return data["run"], {name: frozenset(doc["runs"]) for name, doc in data["documents"].items()}


def load_numbers(path=FINGERPRINT):  # -> {document (no .txt): {"tokens", "quotes"}}
    return json.loads(Path(path).read_text(encoding="utf-8")).get("numbers", {})


def load_quotes(path=FINGERPRINT):  # -> {document (no .txt): frozenset of quote hashes}
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    return {name: frozenset(hashes) for name, hashes in data.get("quotes", {}).items()}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=Path, help="folder holding the two seeds/*.txt documents")
    ap.add_argument("--out", type=Path, default=FINGERPRINT)
    ap.add_argument("--check", action="store_true", help="exit 1 if --out is out of date")
    args = ap.parse_args(argv)
    folder = args.seeds or seeds_dir()
    if folder is None:
        print("seeds/ not found in ./shared, ../shared or .; pass --seeds DIR", file=sys.stderr)
        return 2
    text = dumps(build(folder))
    if args.check:
        same = args.out.is_file() and args.out.read_text(encoding="utf-8") == text
        print(f"{args.out}: {'up to date' if same else 'OUT OF DATE'} with {folder}")
        return 0 if same else 1
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text, encoding="utf-8")
    data = json.loads(text)
    counts = ", ".join(f"{name}: {len(doc['runs'])} runs, {len(data['quotes'][name[:-4]])} quotes"
                       for name, doc in data["documents"].items())
    print(f"wrote {args.out} ({counts})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
