"""The article at "/": scaled dot-product attention, walked through with live panels.

The prose follows the lesson's sections: what attention is, the formula, one real head,
what the causal mask masks, where the n² lives, how much of the bill attention is, why the
√d_k, and how to check it on a real system. Each panel sits under the paragraph that
invites the reader to try it. All panels on the page share one query string, so each
URL key is carried by exactly one panel (see `url_plan`).

The machinery here is shared with the second chapter (`app.article_math`): a chapter is a
list of sections and a table of panels, and `render` turns it into a page. Every panel
sits below the first screenful of prose, so by default each is built after the page has
appeared (`Later`, on `pn.state.onload`, the hook under Panel's own `defer_load`): opening
the page costs the prose alone (a GET of "/" fell from about 450-650 ms to under 60 ms of
server time here), and the panels arrive over the open websocket a moment later, each
restoring its URL state as it lands. A per-panel `pn.panel(fn, defer_load=True)` was tried
first: it nests each panel one layout deeper, where the decode bill's roofline never draws,
and it sends one message per panel, which the browser took about a second longer to lay out.
"""

import functools
import html
import logging

import panel as pn
from panel.io.state import set_curdoc

from app import chrome
from app.panels.cost import CostPanel
from app.panels.heatmap import HeadPanel
from app.panels.kernel_lab import KernelLabLink, KernelLabPanel
from app.panels.ladder import LadderPanel
from app.panels.sqrt_dk import SqrtDkPanel
from app.states import is_static

log = logging.getLogger(__name__)

TITLE = "Scaled dot-product attention, worked"
MATH_TITLE = "Dot products, softmax and attention math"

# the chapters link to each other by relative address, so a prefix the host adds survives
ROUTE = "./"
MATH_ROUTE = "math"

# Query keys the page itself uses; no panel may take them.
PAGE_KEYS = frozenset({"theme"})

# slot -> (Viewer class, builder). The class says which URL keys the slot carries before
# anything is built; the builder makes a fresh viewer from `get` (slot -> that slot's
# viewer, built on first use), so a follower can reach its leader in any order.
PANELS = {
    "head": (HeadPanel, lambda get: HeadPanel()),
    "ladder": (LadderPanel, lambda get: LadderPanel(head=get("head"), in_article=True)),
    "cost": (CostPanel, lambda get: CostPanel(in_article=True)),
    "sweep": (SqrtDkPanel, lambda get: SqrtDkPanel(in_article=True)),
    # the lab runs PyTorch on the server: a static page links to the live one instead
    "lab": (KernelLabPanel, lambda get: (KernelLabLink(in_article=True, route="/")
                                         if is_static() else KernelLabPanel(in_article=True))),
}

# slot -> the slot whose controls it follows; a follower never carries those keys itself
FOLLOWS = {"ladder": "head"}

# a deferred panel's box before it lands: tall enough that the page barely moves when it does
PLACEHOLDER_HEIGHT = 360


class Shelf:
    """One session's viewers: each slot is built on first request, then always the same."""

    def __init__(self, panels):  # {slot: (class, builder)}
        self._panels = panels
        self.built = {}

    def __call__(self, slot):  # -> the slot's viewer
        if slot not in self.built:
            self.built[slot] = self._panels[slot][1](self)
        return self.built[slot]


def build_panels(panels=PANELS):  # -> {slot: Viewer}, one fresh set, built now, in page order
    shelf = Shelf(panels)
    return {slot: shelf(slot) for slot in panels}


def url_plan(panels, follows=FOLLOWS, page_keys=PAGE_KEYS):
    # {slot: Viewer or Viewer class} -> {slot: {query key: parameter}}, no key twice: a name
    # two panels share goes plain to the first and as `<slot>_<name>` to the later one
    taken, plan = set(page_keys), {}
    for slot, viewer in panels.items():
        leader = plan.get(follows.get(slot), {})
        keys = {}
        for name in viewer.url_keys:
            if name in leader.values():  # the leader's URL already sets it
                continue
            key = name if name not in taken else f"{slot}_{name}"
            keys[key] = name
            taken.add(key)
        plan[slot] = keys
    return plan


def chapter_plan(panels=PANELS, follows=FOLLOWS):  # the URL plan from the classes alone
    return url_plan({slot: cls for slot, (cls, _) in panels.items()}, follows)


# The prose, in order. A string is a block of markdown; ("panel", slot) places a panel;
# ("link", text, route) a link to the other chapter; ("placeholder", title, text) a box for
# something still to come. A slot with no panel in the table shows a placeholder instead.
SECTIONS = [
    f"# {TITLE}",
    """<p class="ae-lede">Inside a transformer, attention is the step where each token
collects information from the others. It behaves like a lookup with no single answer: every
position broadcasts what it is looking for and what it can provide, and each position ends up
with a blend of everyone's contributions, mixed in proportion to how well each one fits.</p>

Because the result is a blend and not a choice, three things follow, and this page traces
each of them: a whole training sentence can be processed in one parallel pass; the cost of
reading a prompt grows quadratically with the prompt's length; and once the prompt is read, each
further token is cheap by comparison.

For every token, three learned matrices turn its input vector into three new ones:

- the **query** describes what the token is seeking;
- the **key** describes what the token can offer to a seeker;
- the **value** is the content passed along when some token attends here.

Since the query and the key of one token come from different matrices, what a token
advertises and what it asks for can differ. So the weight position 3 places on position 1 is
usually not equal to the weight position 1 places on position 3.""",
    """## The formula

In the 2017 paper by Vaswani et al. the whole operation fits on one line:

<div class="ae-formula">Attention(Q, K, V) = softmax( Q K<sup>T</sup> / √d<sub>k</sub> ) V</div>

Reading from the innermost part outward:

1. **Q K<sup>T</sup>**: every query is dotted with every key, producing one raw score per
   (query, key) pair. The score is high when the two vectors are aligned.
2. **÷ √d<sub>k</sub>**: d<sub>k</sub> is the length of a key vector. Dividing by its square
   root stops the scores from growing so large that the softmax saturates; the last section
   shows that failure.
3. **softmax**: applied to each row on its own, it makes the scores positive and normalises
   them so that every row totals 1.
4. **× V**: each row of weights then averages the value vectors. The result at position
   *i* mixes together the values of every position *i* was allowed to see.""",
    """## One head, every number shown

The panel below holds a single attention head with every quantity on display. Its input is the
sentence *the
cat sat on the mat and purred*. Each word has a fixed 8-component vector, and three fixed
matrices map it to a query, a key and a value of size d<sub>k</sub> = 5. The heatmap is not
an illustration: each cell is a computed weight, recomputed the moment a control changes.

**Try it:** move **inspect query** to 2 (it starts there) and read the breakdown under the
heatmap, then turn the **causal mask** off.""",
    ("panel", "head"),
    """With the default settings, query 2 is *sat*. Of its weight, 0.77 lands on *cat* and
0.07 on *the*, so the verb has found its subject. Nothing searched for *cat*: the head
computed three dot products, exponentiated each, and divided by their total. That is all
attention does. It also explains the word "soft": *the* is not excluded, it keeps a 7%
share.

Turning the mask off lets row 2 reach ahead: it now gives 0.23 to *mat*, three tokens later.
Compare rows 0 and 4 too, which are both *the*. Unmasked, they become identical to the last
digit, because each can see exactly the same tokens and the operation has no idea of
position. Transformers get word order from positional encodings, added to the inputs before
attention runs; attention on its own is blind to it.""",
    """## What the causal mask masks

The causal mask changes scores, not weights. Before the softmax runs, each score that would
let a query look at a later key is set to −∞. Because exp(−∞) is 0, those entries add
nothing to the denominator, and the remaining weights still total exactly 1. Doing it in
the other order, zeroing weights after normalising, would leave each row totalling less
than 1 and quietly scale down every output. The 2017 paper puts the mask in the same spot:
the softmax inputs for forbidden connections become −∞.

The reward is an exact identity. Under the mask, row *i* from a pass over *n* tokens
matches, bit for bit, row *i* from a pass over the first *i* + 1 tokens alone. The head
panel verifies this each time it redraws. Its **truncate line** reruns the inspected row on a
sequence cut short after that position and compares: the results match while the mask is
on, and with the mask off the line reports a mismatch and the biggest gap between the two.

Thanks to that identity, one forward pass over a training sentence trains next-token
prediction at all of its positions together. The same identity means **prefill**,
processing a whole prompt in one pass, leaves the model in the state it would reach after
consuming the prompt one token at a time. Lose it, and training would need a pass per token.

In a plain implementation the mask costs as much arithmetic as no mask. Every score above
the diagonal is still calculated, then replaced by −∞, then exponentiated to 0. The readout
**pairs computed then discarded** tallies this waste. Switch the causal mask on again and
raise the sequence length to 8: 28 of the 64 pairs are computed only to be thrown out. With
the mask off the readout says 0 of 64, since nothing is thrown out. Kernels written for a
triangular mask never compute the blocks above the diagonal, so they do get the saving.
FlashAttention is such a kernel, and it also avoids storing the full grid of scores, one
entry for each ordered pair of positions, in memory.

The mask has no work to do in **decode** either. Change **phase** to decode and toggle the
causal mask: no weight moves, and the log gives the reason. The newly generated token is the
last in the sequence. Every existing key is already behind it, so there is nothing ahead to
conceal. Masking is a prefill and training concern; a single-token decode step runs without
any mask.""",
    """## Where the n² lives

In prefill, drag **sequence length** from 3 to 8 and watch the dot-product count at the top
of the head panel: 9, 16, 25, 36, 49, 64. Switch the phase to decode and drag again: 3, 4,
5, 6, 7, 8. Between those two runs nothing about the model, the mask or the context
changed; only the number of queries processed together did. The square belongs to that
number, not to how long the context is.

Let *n* be the sequence length. Prefill pits *n* queries against *n* keys, for *n*² dot
products. A decode step pits a single query against *n* keys, for *n*. What lets decode get
away with *n* is the **KV cache**: earlier steps already computed the keys and values for
positions 0 through *n* − 2 and stored them, so the only new projection needed is the new
token's own.

Over an entire response the total is still quadratic. The steps cost *n*, then *n* + 1, then
*n* + 2, and so on, and adding up such a run gives a total proportional to the square of its
length. Each individual step, though, is linear, which is exactly what you see when you time
a decode loop one step at a time.

The next panel follows the head panel's **sequence length** and **phase**, shows the two
counts next to each other, and then carries the same sums out to real context lengths:
choose a prompt and a response length and it totals the decode steps for you.""",
    ("panel", "ladder"),
    """## How much of the bill is attention?

People also tend to overestimate how much of the work attention is. The cost panel tallies
floating-point operations for an actual model (one multiply-add counts as 2) in two piles.
Attention: the scores and the weighted sum of the values. The rest: the four projection
matrices (query, key, value, output), the MLP, and the output layer (lm_head), all of which
scale linearly with *n*.""",
    ("panel", "cost"),
    """Take Qwen3-8B and a 4,096-token prompt: attention accounts for 7.4% of the prefill
arithmetic, the projections and MLP for the other 93%. At 32,768 tokens attention's share is
39%; at 131,072 it is 72%. The **crossover**, the prompt length where the quadratic part
matches all the rest, comes at 51,324 tokens if the kernel skips masked blocks, and at
25,662, half as many, if it computes them. For shorter prompts, calling attention quadratic
is accurate but is not what decides the cost.

Where the crossover falls depends on the architecture: divide the matmul parameter count by
2 × layers × heads × `head_dim`, and double the result for a triangular kernel. Pick GPT-2
small and it falls to 13,404 tokens, 3.8 times sooner, since a model of 124M parameters has
little non-attention work to hide behind. But GPT-2 only handles 1,024 positions, and at that
length attention's share of prefill is just 7.1%. Its design always contained the quadratic
term; the model could never get far enough to feel it.

Counting operations is not the same as measuring time. Select Qwen3-8B again
(the previous paragraph left GPT-2 chosen), and set **prompt tokens** to 256 and **tokens
to generate** to 4,096. Attention takes 0.50% of the prefill work and 0.99% of each decode step,
under 1% either way. Yet most of that request's time goes to decoding, for a reason no
operation count
captures: every decode step has to stream all the weights and the entire cache in from
memory. Arithmetic and memory bandwidth are two different ceilings, and bandwidth is usually
the lower one. The KV cache lesson picks up that thread.""",
    """## Why divide by √d<sub>k</sub>?

Return the head panel to prefill, sequence length 6, inspect query 2 and causal mask on (you
left it in decode at length 8 in the section on n²), and then switch **divide scores by
√d_k** off. Row 2's
weight on *cat* climbs from 0.77 to 0.97, while **effective tokens attended** drops from 1.98
to 1.17: the weight has collapsed onto one token. Here the change is gentle, because in a
5-dimensional head removing the divisor just multiplies each score by √5 ≈ 2.24.

At realistic head sizes it is anything but gentle. The paper argues from variance. Suppose
*q* and *k* have independent components, each with mean 0 and variance 1. Multiplying one
component of *q* by one of *k* gives a term with mean 0 and variance 1; adding d<sub>k</sub>
of those terms gives a total whose variance is d<sub>k</sub>, so its typical size is
√d<sub>k</sub>. Qwen3 and Llama both use a `head_dim` of 128, and
there three standard deviations of unscaled score reach about ±34. Between the two ends of
that range the exponentials differ by a factor of e<sup>68</sup>, about 10<sup>29</sup>. A
softmax across such scores is indistinguishable from one-hot, its gradients are practically
zero, and training grinds to a halt; the paper describes large dot products driving the
softmax into a region of vanishing gradients.

The sweep puts that argument into numbers. Using a fixed seed, it samples a query and 16
keys whose components are independent draws with variance 1 (the paper's very assumption), computes
their actual dot products, and runs the softmax twice: once on the scores as they are, once
on the scores divided by √d<sub>k</sub>. **Move d_k** and see the two rows separate.""",
    ("panel", "sweep"),
    """On average over many samples, the undivided softmax over 16 keys covers 6.68 effective
keys when d<sub>k</sub> = 4, 2.84 at 16, 1.44 at 128 and 1.19 at 512, closing in on a single
key as the width grows. Divide the same scores by √d<sub>k</sub> and the count holds steady:
11.19, 10.96, 10.71, 10.76. (The panel's one sample scatters around those averages; its
mean curve is the one to line them up against.) The steadiness is the real result. With the
divisor in place, the sharpness of a head's attention no longer depends on its width, so
heads can be made wider without their attention also becoming more peaked. Across the sweep
the sampled vectors stay fixed; only the number of components summed into each dot product
changes.

Measured as a standard deviation, the spread of the scores follows √d<sub>k</sub> closely: 1.82
versus
2.00 at d<sub>k</sub> = 4, 10.72 versus 11.31 at 128, 21.48 versus 22.63 at 512. It comes
out a few percent under, simply because each value is estimated from just 16 scores; the
theory is not at fault.

The same reasoning accounts for a failure that is easy to mistake for a bug. When a head's
scores drift large, it attends almost like an argmax, gradients reach only the winning key,
and the head stops learning. Clipping the weights does not fix this; keeping the scores
small does, and that is why the divisor is built into the operation itself instead of being
left to the training recipe.""",
    """## Checking it on a real system

Everything the cost panel shows comes from four fields of `config.json`, so a quick
calculation covers your own model too. Per (query, key) pair, attention needs
4 × `num_hidden_layers` × `num_attention_heads` × `head_dim` floating-point operations;
Qwen3-8B gives 4 × 36 × 32 × 128 = 589,824. Multiply that by *n*² for a prefill, or by *n*
for a single decode step. Note which head count appears: `num_attention_heads`, the number of
query heads, whereas the size of the KV cache uses `num_key_value_heads`. Grouped-query
attention lets several query heads share one set of keys, yet the dot products are still
computed separately for each query head: the cache gets smaller and this count stays put.

To watch the split on a live inference server, vary only the prompt length and compare time
to first token with the time between tokens. If a 4k prompt takes about twice as long to
produce its first token as a 2k prompt, the linear work still dominates prefill. Once each
doubling costs nearer to four times, you have passed the crossover. For vLLM users that is
also around where chunked prefill starts to cost something, since every chunk merged into a
decode step now brings substantial arithmetic along.

In PyTorch, the question worth asking is which kernel you are really running.
`torch.nn.functional.scaled_dot_product_attention` dispatches to one of three
implementations: FlashAttention-2, a memory-efficient kernel, or a reference C++ version
(`SDPBackend.MATH` in the backend enum). The choice is made automatically from your inputs.
The fused kernels each accept only some inputs; if yours fit none of them, you land on the
math version, which keeps every one of the *n* × *n* scores in memory at once. A fallback does
trigger a warning, but only the first time, and one line is easily lost in a busy log.

Two further points about the call. Supplying your own triangular mask in place of
`is_causal=True` often pushes you off the fast path, and you lose the
block skipping as well, since an arbitrary mask gives the kernel no hint about which blocks
are all zero. And do not count on the documented error when both `attn_mask` and
`is_causal=True` are given: on CPU we measured the flash path silently combining them. If you
need certainty, run the call inside `torch.nn.attention.sdpa_kernel` and leave
`SDPBackend.MATH` out of
the allowed list, as the PyTorch docs recommend; a slow fallback then raises instead of passing
unnoticed.

Last, inspecting the attention weights means abandoning fused kernels altogether, because
they never materialise the matrix you want. With Hugging Face transformers, you load the
model with `attn_implementation="eager"`. Be aware of the cost: the score matrix takes
batch × heads × *n*² × bytes per value in each layer. One 4,096-token sequence on a 32-head
model needs 1 GiB per layer in bfloat16, and because the eager path does its softmax in
float32 the peak goes higher. Requesting attention weights for a long prompt brings back
precisely the quadratic memory cost FlashAttention was created to avoid.""",
    """**Try it:** the lab below runs on the machine that is serving you this page. Read
**Before you run** to see which kernel PyTorch will choose for the shapes shown, then press
**Run**. Change **backend** to math and run again, and compare the peak memory of the two.
Then pick the explicit **triangular mask** under masking: the answer hardly changes, but the
kernel loses its block skipping and the run slows down. **Sweep prompt length** times
prefills at doubling prompt lengths, fused kernel against math, on log-log axes.""",
    ("panel", "lab"),
    """## Where to go next

- **The KV cache**: the stored keys and values that make each decode step linear, and why
  memory rather than arithmetic usually limits generation speed.
- **FlashAttention**: the same computation done tile by tile, never holding the *n* × *n*
  matrix.
- **Multi-head attention**: many copies of this head working in parallel, each on its own
  slice of the model's vector.
- **Vector retrieval**: a lookup that keeps only the top k matches and drops the rest.
- **Linear attention**: designs that avoid the *n* × *n* matrix entirely.""",
    ("link", "Next: dot products, softmax and attention math →", MATH_ROUTE),
]


def chapter_href(route):  # the other chapter's address, keeping this session's theme
    return route + ("?theme=dark" if chrome.theme() == "dark" else "")


def chapter_link(text, route):  # a link to the other chapter, set in the reading column
    return pn.pane.HTML(f'<a class="ae-chapter-link" href="{html.escape(chapter_href(route))}">'
                        f"{html.escape(text)}</a>", sizing_mode="stretch_width",
                        stylesheets=[chrome.CSS, chrome.PROSE_CSS, LINK_CSS, chrome.link_css()])


def back_link(text, route):  # the same, small, at the left of the header row
    return pn.pane.HTML(f'<a class="ae-back-link" href="{html.escape(chapter_href(route))}">'
                        f"{html.escape(text)}</a>", align="center", margin=(5, 10),
                        stylesheets=[chrome.CSS, LINK_CSS, chrome.link_css()])


LINK_CSS = """
a { color: var(--primary-bg-color, #0072b5); text-underline-offset: 0.15em; }
.ae-chapter-link { display: inline-block; margin: 1.4em 0 0.4em; font-weight: 600;
                   font-size: 1.1rem; }
.ae-back-link { font-size: 0.95rem; }
"""


class Later:
    """Panels built once the page has appeared: a placeholder with a spinner now, the panel
    a moment later. All of a page's panels are built in one go, on the next turn of the
    server's loop after the browser reports the page ready, with the document held, so the
    model graph is walked once and they reach the browser in a single message. Each panel
    then takes its placeholder's spot in the page's column, exactly where an eager page puts
    it (one Column deeper and the decode bill's roofline never draws)."""

    def __init__(self):
        self.pending = []  # [(placeholder, build)]
        self.frame = None  # the page's column, which holds the placeholders

    def place(self, build):  # build: () -> [viewable]; -> the placeholder that stands in
        holder = pn.Column(sizing_mode="stretch_width", min_height=PLACEHOLDER_HEIGHT, margin=0,
                           loading=True)
        self.pending.append((holder, build))
        return holder

    def start(self, frame):  # once the page is built: ask for the fill when it is ready
        self.frame = frame
        if self.pending:
            pn.state.onload(self._schedule)

    def _schedule(self):  # document ready: build on the next tick, when the session is live
        doc = pn.state.curdoc
        if doc is None or doc.session_context is None:  # no server: tests, notebooks
            self.fill()
            return
        doc.add_next_tick_callback(functools.partial(self._fill_in, doc))

    def _fill_in(self, doc):
        with set_curdoc(doc):
            self.fill()

    def fill(self):  # build every pending panel in place of its placeholder
        pending, self.pending = self.pending, []
        built = {id(holder): build for holder, build in pending}
        with pn.io.hold(freeze=True):
            objects = []
            for obj in self.frame.objects:
                objects.extend(built[id(obj)]() if id(obj) in built else [obj])
            self.frame.objects = objects


def panel_block(slot, get, keys, later=None):  # -> the slot's URL note and viewer, or a
    # placeholder that `later` replaces with them once the page has appeared
    def build():
        try:
            viewer = get(slot)
            notes = chrome.with_url_state(viewer, keys)  # restores first, then mirrors
        except Exception:  # one broken panel must not keep the others from loading
            log.exception("the %s panel could not be built", slot)
            return [chrome.placeholder("This panel could not be loaded",
                                       "Something went wrong on the server while building it. "
                                       "The rest of the page works; reloading may help.")]
        return [notes, viewer]

    return build() if later is None else [later.place(build)]


def block(item, get, plan, later=None):  # one SECTIONS item -> list of viewables
    if isinstance(item, str):
        return [chrome.prose(item)]
    if item[0] == "placeholder":
        return [chrome.placeholder(item[1], item[2])]
    if item[0] == "link":
        return [chapter_link(item[1], item[2])]
    slot = item[1]
    if slot not in plan:
        return [chrome.placeholder("A panel is coming here", f"The {slot} panel is on its way.")]
    return panel_block(slot, get, plan[slot], later)


def header(link=None):  # the top row: a link back to the other chapter (if any), the theme
    left = [back_link(*link)] if link else []
    return pn.Row(*left, pn.layout.HSpacer(), chrome.theme_button(), sizing_mode="stretch_width",
                  margin=0, stylesheets=[chrome.HEADER_CSS])


def render(sections, panels, *, title, follows=FOLLOWS, back=None, defer=True, shelf=None):
    # a chapter -> its page. panels: {slot: (class, builder)}; back: (text, route) of a link
    # shown above the title; defer: build panels after the page appears; shelf: the Shelf
    # to build into (tests pass one to look at the viewers)
    shelf = Shelf(panels) if shelf is None else shelf
    plan = chapter_plan(panels, follows)
    later = Later() if defer and not is_static() else None  # a static page has every panel
    objects = [header(back)]
    for item in sections:
        objects.extend(block(item, shelf, plan, later))
    frame = chrome.article_frame(*objects, title=title)
    if later is not None:
        later.start(frame)
    return frame


def page(defer=True, shelf=None):  # a fresh article per session
    return render(SECTIONS, PANELS, title=TITLE, defer=defer, shelf=shelf)
