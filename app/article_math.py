"""The second chapter, at "/math": dot products, softmax and the arithmetic of one new token.

It follows the second lesson: a dot product as a measure of agreement and why the scores are
divided by √128; softmax and how float16 overflows unless the row's max is subtracted; what
one head does for one new token; the operations and bytes of one decoded token against a
GPU's ridge point; the memory bill of weights against keys and values; online softmax; two
misconceptions. Each panel sits under the paragraph that invites the reader to try it, and
the page shares the first chapter's chrome, URL plan and deferred loading (`app.article`).
"""

from app import article
from app.panels.agreement import AgreementPanel
from app.panels.decode_bill import DecodeBillPanel
from app.panels.memory_bill import MemoryBillPanel
from app.panels.online_softmax import OnlineSoftmaxPanel
from app.panels.overflow import OverflowPanel

TITLE = article.MATH_TITLE

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

SECTIONS = [
    f"# {TITLE}",
    """<p class="ae-lede">Producing a single token with Llama 3 8B, 4,096 tokens into a
conversation, costs its attention about 4.2 million dot products, some 2.1 billion
arithmetic operations. Before any of that arithmetic can start, roughly half a gigabyte of
cached keys and values has to come in from memory.</p>

Divide the two and you get about 4 operations for every byte fetched. An H100 only keeps its
arithmetic units fed at around 295 operations per byte, so generating tokens is a wait on
memory, not on math. The stored keys and values also keep growing, one entry per token for
every conversation being served, until they weigh more than the model. And because a softmax
cannot finish any weight until it has seen the entire row, fast kernels compute it as they
go, with a running maximum and a running total. This chapter builds each of those claims up
from a single dot product.""",
    """## The dot product measures agreement

Take two lists of the same length, multiply the entries that sit in the same position, and
sum what comes out:

<div class="ae-formula">(2, −1, 0.5) · (3, 4, 2) = 6 − 4 + 1 = 3</div>

The total tells you how far the two vectors face the same direction. When they line up, it
is large and positive; at right angles, it is zero; when they face away from each other, it
turns negative. Attention reads the number as a measure of relevance. The newest token's
**query** states
what it wants, each earlier token's **key** states what it has, and q · k scores the fit.

A real attention head works with vectors of 128 entries, so one score takes 128
multiplications and 127 additions. Counting a multiply-add as two operations, as every
figure in this chapter does, that is 256 operations per dot product.""",
    """### Why divide by √128?

Suppose every entry of a query and a key is drawn at random, centred on 0 with variance 1.
Each product of two entries then has variance 1 too, and a sum of 128 of them has variance
128. That is the argument of a footnote in *Attention Is All You Need*. The scores therefore
wander about √128 ≈ 11.3 away from zero: a typical spread of ±11. Fed scores that far apart,
softmax hands nearly the whole weight to whichever key scored highest, and attention has
stopped mixing values and started choosing one. Divide every score by √128 first and the
spread shrinks to about ±1, where the weights are shared out.

For inference the division costs next to nothing: one multiplication per score, which
fused kernels merge into a step they perform anyway.

**Try it:** in the panel below, type **1, 2, 0** as vector b. The products become 2, −2 and
0, the score is 0, and the gauge calls the pair perpendicular. Then type **−3, −4, −2**: the
score flips to −3. Lower down, the same panel draws 8 random keys of 128 numbers. Compare the
red bars (raw scores and their softmax) with the blue ones (divided by √128). Then set
**d** to 4: the raw scores stay small and still blend over about four keys. At 128 or 4096
the raw softmax gives one key everything, while the divided row keeps spreading its weight.""",
    ("panel", "agreement"),
    """## Softmax turns scores into weights

Softmax makes every score positive and makes the row add up to 1. It raises e to the power
of each score, then divides each result by their sum. For the scores 2, 1 and 0.1 the
exponentials are about 7.39, 2.72 and 1.11. Their total is about 11.2, so the weights come
out at 66%, 24% and 10%. The top score takes the largest share, yet no score is left with
nothing.

Half precision hides a trap in that first step. The biggest number float16 can hold is
65,504, and e<sup>12</sup> is already about 162,755. One score of 12 is enough: its
exponential becomes infinity, so does the sum, every other weight collapses to 0, and the
overflowing entry becomes infinity over infinity, which is not a number at all. The row is
garbage.

The cure is to subtract the row's largest score from every score before exponentiating.
For 2, 1 and 0.1 that gives 0, −1 and −1.9. The weights are unchanged, because the shift
cancels between numerator and denominator, and no exponent can now exceed 0, so no
exponential can exceed 1.

**Try it:** the panel starts in **float16** with the scores 2, 1, 0.1. Type **12, 1, 0.1**
as the scores: the table fills with inf and nan and the panel calls the row garbage. Turn on
**subtract the max** and every weight is finite again. Switch **precision** to float32 with
the max not subtracted: 12 now fits, because float32 only overflows past a score of about
88.72.""",
    ("panel", "overflow"),
    """One more property of softmax matters later. No weight is settled until both the row's
largest score and the sum of all its exponentials are known, and both depend on every score
in the row. That single requirement decides how fast attention kernels are put together, as
the section on online softmax shows.""",
    """## One head, one new token

Follow a single head through a single decode step, with 4,096 tokens of context already
cached. The new token's query is dotted with all 4,096 cached keys; the scores are divided
by √128 and passed through softmax; the 4,096 weights then average the 4,096 cached value
vectors. What comes out is one vector of 128 numbers: the context as the new token sees it.

The scores take 4,096 dot products of 256 operations each, about a million operations.
The weighted sum of the values costs about another million. One head, for one token,
therefore does about two million operations.""",
    """## The bill for one decoded token

A whole model multiplies that by its layers and heads. Llama 3 8B has 32 layers of 32 query
heads, so at 4,096 tokens of context a new token needs 32 × 32 × 4,096 = 4,194,304 dot
products. The total splits into two equal halves of about 1.07 billion operations: one for
the scores (4,194,304 × 256), one for the weighted sum of the values. The division by √128
and the softmax itself come to a few million more, small change next to those halves. That
makes about 2.1 billion operations for attention.

The model's weight matrices cost far more. Every weight that takes part in a matrix product
is used in one multiply-add for each token, which counts as two operations per parameter. Of
Llama 3 8B's 8.03
billion parameters, the input embedding (a table of 128,256 × 4,096, about 0.53 billion) is
only looked up, never multiplied, so about 7.5 billion parameters do the work: roughly 15
billion operations per token. At this context length attention is 2.1 out of 17.1 billion,
about 12%, or one eighth of the arithmetic.

Now count the bytes attention has to read. Llama 3 uses grouped-query attention: its 32
query heads draw on just 8 key/value heads, so each key/value head serves four query heads.
Each layer therefore
caches, for each token, 8 heads × 128 numbers × 2 (a key and a value) × 2 bytes =
4,096 bytes (4 KiB). Over 32 layers that is 131,072 bytes (128 KiB) per token, and over 4,096
tokens about 0.54 GB (0.5 GiB).

2.1 billion operations on 0.54 billion bytes is about 4 operations per byte: the
**arithmetic intensity**. A GPU's **ridge point** is the intensity at which its arithmetic
and its memory run out at the same moment: peak operations per second over bytes per
second. For an H100 SXM that is 989 TFLOP/s ÷ 3.35 TB/s ≈ 295. Below the ridge the math
units sit idle while data arrives. Decode attention, at 4, is not even close: it is
**memory-bound**.

**Try it:** the panel opens on these very numbers: Llama-3-8B, 4,096 tokens of context, one
user, an H100 SXM. Raise **users / batch** to 64: the intensity stays at 4, because every user
streams a cache of their own, while the weight matmuls' square climbs the roofline, since
each weight fetched now serves 64 tokens. Then try the other GPUs: every ridge point lies in
the hundreds.""",
    ("panel", "decode"),
    """## The memory bill grows

Serving the model keeps two things in GPU memory:

- the **weights**: 16 GB in bf16, a fixed cost, all of it read on every decode step no
  matter how long the conversation has grown;
- the **keys and values**: another 128 KiB for every token of every user's conversation.

A single conversation's cache reaches the size of the weights at about 120,000 tokens
(122,532 by the panel's count). Many users get there far sooner: 32 conversations of 4,096
tokens each already hold about 17 GB of keys and values, more than the model itself.

Prefill runs into a different wall. There every token of the prompt is a query at the same
time, so a kernel that writes its scores out builds a square of *n* × *n* of them per head. A
prompt of 8,192 tokens means about 67 million scores per head; with 32 heads at 2 bytes each
that is about 4.3 GB of scratch space, for one layer.

**Try it:** set **users** to 32 and leave the context at 4,096: the cache line rises past the
weights. Then put users back to 1 and drag the context toward a million tokens to find where
one conversation crosses over. The prefill figures sit at the bottom of the panel, for a
prompt of 8,192 tokens; compare the 4.3 GB square with the single tile a fused kernel
keeps.""",
    ("panel", "memory"),
    """## Online softmax: the square is never written

Fast attention kernels such as FlashAttention never build that square. They read the keys
a block at a time and carry two numbers along: the **running max** of the scores so far and
the **running sum** of their exponentials, each taken relative to that max. When a new block
brings a larger max, the sum collected so far is multiplied by e<sup>(old max − new
max)</sup> to put it on the new footing, and then the block's own terms are added.

Take the row 2, 1, 3, 0 in blocks of two. After [2, 1] the max is 2 and the sum is
e<sup>0</sup> + e<sup>−1</sup> ≈ 1.368. The block [3, 0] raises the max to 3, so the old
sum is scaled by e<sup>−1</sup> and the new terms e<sup>0</sup> + e<sup>−3</sup> are added:
about 1.55 in all, exactly what a single pass over the whole row gives. Nothing had to be
stored, and nothing was lost.

The trick was published in 2018 by Maxim Milakov and Natalia Gimelshein, two engineers at
NVIDIA, and it is what FlashAttention is built on. Attention carries one more accumulator
through the same loop, the weighted sum of the values, rescaled by the same factor, which is
how it gets its output without ever holding the full matrix of scores.

**Try it:** press **Next block** twice to read the scores 2, 1, 3, 0 a block at a time,
and watch the earlier bars shrink when the max rises. At the end the running sum, 1.553,
equals the whole-row sum. Change **block size** to 1 or 4; the answer never changes.""",
    ("panel", "online"),
    """## Two misconceptions

At short contexts and small batches it is the weights that dominate the bytes a GPU moves.
Attention's share grows with context length times batch size, and it grows mostly through
memory, not arithmetic.

- *"Attention is always what costs the most."* Not for short contexts and small batches.
  With one user at 4,096 tokens, the memory bill above shows 0.54 GB of keys and values next
  to 16 GB of weights.
- *"Softmax is cheap, so it does not matter."* Its arithmetic is indeed cheap. But the fact
  that it needs the whole row before any weight is final is what every fast kernel is
  designed around.""",
    """## Recap

- A dot product scores agreement; with 128 entries it costs 256 operations, and dividing by
  √128 keeps softmax blending instead of picking.
- In float16, any score above about 11.09 (the log of 65,504) overflows the softmax unless
  the row's max is subtracted first.
- One decoded token of Llama 3 8B at 4,096 tokens: about 2.1 billion attention operations
  against about 0.54 GB of keys and values, near 4 operations per byte, far under an H100's
  295. Decode attention waits on memory.
- The weights are fixed; keys and values grow with every token and every user.
- Online softmax keeps a running max and sum, so no kernel has to store the whole row of
  scores, let alone the square.""",
    ("link", "← Back to scaled dot-product attention", article.ROUTE),
]


def page(defer=True, shelf=None):  # a fresh chapter per session
    return article.render(SECTIONS, PANELS, title=TITLE, follows=FOLLOWS, back=BACK,
                          defer=defer, shelf=shelf)
