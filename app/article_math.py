"""The second chapter, at "/math": dot products, softmax and the arithmetic of one new token.

It follows the second lesson: a dot product as a measure of agreement and why the scores are
divided by √128; softmax and how float16 overflows unless the row's max is subtracted; what
one head does for one new token; the operations and bytes of one decoded token against a
GPU's ridge point; the memory bill of weights against keys and values; online softmax; two
misconceptions. Each panel sits under the paragraph that invites the reader to try it, and
the page shares the first chapter's chrome, URL plan and deferred loading (`app.article`).
"""

from app import article, content
from app.panels.agreement import AgreementPanel
from app.panels.decode_bill import DecodeBillPanel
from app.panels.memory_bill import MemoryBillPanel
from app.panels.online_softmax import OnlineSoftmaxPanel
from app.panels.overflow import OverflowPanel

CHAPTER = content.load("math.md")  # the prose, from app/content/math.md
TITLE = CHAPTER.title

# slot -> (Viewer class, builder), in page order. Two bills share `model`, `context` and
# `users`: the decode bill, first on the page, carries them plain, the memory bill as
# `memory_model`, `memory_context`, `memory_users`; the online softmax's `scores` becomes
# `online_scores`, since the overflow panel's came first.
PANELS = {
    "agreement": (AgreementPanel, lambda get: AgreementPanel(in_article=True)),
    "overflow": (OverflowPanel, lambda get: OverflowPanel(in_article=True)),
    "decode": (DecodeBillPanel, lambda get: DecodeBillPanel(in_article=True)),
    "memory": (MemoryBillPanel, lambda get: MemoryBillPanel(in_article=True)),
    "online": (OnlineSoftmaxPanel, lambda get: OnlineSoftmaxPanel(in_article=True)),
}
FOLLOWS = {}  # every panel here keeps its own controls

BACK = ("← Scaled dot-product attention", article.ROUTE)

SECTIONS = CHAPTER.sections


def page(defer=True, shelf=None):  # a fresh chapter per session
    return article.render(SECTIONS, PANELS, title=TITLE, follows=FOLLOWS, back=BACK,
                          defer=defer, shelf=shelf)
