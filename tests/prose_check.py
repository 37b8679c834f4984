"""The copied-prose check both chapters run: our prose against the committed fingerprint of
their source document (scripts/fingerprint_seeds.py), never against its sentences.

`ProseCheck(seed, names, min_words)` holds one chapter's document and the names it must use
as they are (a paper's title, control labels); its three checks are the chapter's tests.
"""

import importlib.util
import json
import os
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def fingerprint_script():  # scripts/fingerprint_seeds.py: words, runs, hashes, the saved file
    path = ROOT / "scripts" / "fingerprint_seeds.py"
    spec = importlib.util.spec_from_file_location("fingerprint_seeds", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


FP = fingerprint_script()


def chapter_prose(model):  # a page_model chapter -> its Markdown blocks and figure captions,
    # joined, whitespace collapsed: the text a prose test looks for a quoted figure in
    from app.chapters import content

    texts = [i if isinstance(i, str) else i.caption for i in model.sections
             if isinstance(i, (str, content.FigureMarker))]
    return re.sub(r"\s+", " ", "\n".join(texts))


def assert_quoted(figure, prose, claim, where):  # the prose (of `where`) quotes the figure, and
    # the ledger's claim for it holds
    assert figure in prose, f"{where} no longer quotes {figure!r}"
    assert claim.ok, f"{figure}: attention_core computes {claim.shown}, not {claim.document}"


class ProseCheck:
    def __init__(self, seed, names, min_words):
        self.seed, self.names, self.min_words = seed, list(names), min_words

    def prose_runs(self, text):  # -> every run of FP.RUN words of text not part of a name
        joined = " ".join(FP.words(text))
        for i, name in enumerate(self.names):
            joined = joined.replace(name, f" | {i} | ")
        out = set()
        for part in joined.split("|"):
            out |= FP.runs([w for w in part.split() if not w.isdigit()])
        return out

    def copied_runs(self, text):  # -> our runs whose hash is one of the document's
        run, seeds = FP.load()
        assert run == FP.RUN, "the fingerprint was made with another run length: regenerate it"
        return sorted(r for r in self.prose_runs(text) if FP.digest(r) in seeds[self.seed])

    def tests(self, text):  # -> a chapter's three tests, which its module binds to their
        # names: its prose (text(), read when the test runs) is in our own words; the
        # fingerprint is whole; the fingerprint matches the document where it is present
        def test_the_prose_is_in_our_own_words():  # in any clone: it reads the fingerprint
            self.in_our_own_words(text())

        def test_the_fingerprint_is_of_a_whole_document():  # a truncated or empty file
            self.fingerprint_is_whole()  # would pass everything

        def test_the_fingerprint_matches_the_lesson_where_it_is_present():
            self.fingerprint_matches_the_document()

        return (test_the_prose_is_in_our_own_words, test_the_fingerprint_is_of_a_whole_document,
                test_the_fingerprint_matches_the_lesson_where_it_is_present)

    def in_our_own_words(self, text):  # runs in any clone: it reads the fingerprint only
        copied = self.copied_runs(text)
        assert not copied, f"runs of {FP.RUN} words copied from the lesson: {copied}"

    def fingerprint_is_whole(self):  # a truncated or empty file would pass everything
        doc = json.loads(FP.FINGERPRINT.read_text(encoding="utf-8"))["documents"][self.seed]
        most = doc["words"] - FP.RUN + 1
        assert doc["words"] > self.min_words and 0.95 * most <= len(doc["runs"]) <= most

    def fingerprint_matches_the_document(self):
        folder = FP.seeds_dir(ROOT)
        if folder is None:
            # CI lays shared/ beside the checkout: there a missing folder is a failure; only
            # .ci/run's plain-clone step (AE_SEEDS_ABSENT=1), like a user's clone, lacks it
            if os.environ.get("CI") and not os.environ.get("AE_SEEDS_ABSENT"):
                pytest.fail("CI=true but ../shared/seeds is not beside this checkout")
            pytest.skip("../shared/seeds is not beside this checkout, so the committed "
                        "fingerprint cannot be compared with the documents here (CI has them); "
                        "the copied-prose test still ran against the fingerprint")
        text = (folder / self.seed).read_text(encoding="utf-8")
        _, seeds = FP.load()
        assert seeds[self.seed] == frozenset(FP.fingerprint_of(text)["runs"]), (
            f"tests/data/seed_fingerprint.json is out of date with {folder / self.seed}: "
            "run scripts/fingerprint_seeds.py")
        lesson = self.prose_runs(text)  # and the document itself, run through the check, is caught
        assert set(self.copied_runs(text)) == lesson and len(lesson) > self.min_words
