"""The second chapter, at "/math": dot products, softmax and the arithmetic of one new token.

It follows the second lesson: a dot product as a measure of agreement and why the scores are
divided by √128; softmax and how float16 overflows unless the row's max is subtracted; what
one head does for one new token; the operations and bytes of one decoded token against a
GPU's ridge point; the memory bill of weights against keys and values; online softmax; two
misconceptions. Each panel sits under the paragraph that invites the reader to try it, and
the page shares the first chapter's chrome, URL plan and deferred loading (`app.chapters.article`).
"""

from app.chapters import article, content
from app.kit import registry

CHAPTER_FILE = "math.md"
CHAPTER = content.load(CHAPTER_FILE)  # the prose, from app/chapters/content/math.md
TITLE = CHAPTER.title

# slot -> registry.ChapterPanel, in page order. Two bills share `model`, `context` and
# `users`: the decode bill, first on the page, carries them plain, the memory bill as
# `memory_model`, `memory_context`, `memory_users`; the online softmax's `scores` becomes
# `online_scores`, since the overflow panel's came first.
PANELS = registry.chapter_panels(CHAPTER_FILE)
FOLLOWS = registry.follows(CHAPTER_FILE)  # none: every panel here keeps its own controls

BACK = ("← Scaled dot-product attention", article.ROUTE)

SECTIONS = CHAPTER.sections


def page(defer=True, shelf=None):  # a fresh chapter per session
    return article.render(SECTIONS, PANELS, title=TITLE, follows=FOLLOWS, back=BACK,
                          defer=defer, shelf=shelf)
