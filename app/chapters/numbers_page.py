"""The ledger as a page, at "/numbers": every figure the two source documents quote, checked.

What `attention-explorable numbers` prints, for readers: each row of the claims ledger
(attention_core.claims) with the document's figure, how the site computes it, the value it
computed when the page was made, the rule by which the two agree, and a link to the panel
that shows it, in the state that shows it. A page of text alone: a chapter with no panels,
so the build and the live server make it as they make the chapters.
"""

import functools
import html
import re

from app.chapters import content
from attention_core import claims

TITLE = "Every number, checked"

# the ledger's row (its `what`) -> (how it is computed, the panel page and query showing it)
HEAD = "heatmap/"
ROWS = {
    "row 2 (sat), mask on: weight on cat": ("softmax over row 2's scores q₂·kⱼ/√5, j ≤ 2",
                                            HEAD + "?query=2"),
    "row 2, mask on: weight on the": ("the same row, key 0", HEAD + "?query=2"),
    "row 2, mask on: weight on the, as a percentage": ("the same weight, × 100",
                                                       HEAD + "?query=2"),
    "row 2, mask on: effective tokens attended": ("e to the entropy of row 2's weights",
                                                  HEAD + "?query=2"),
    "row 2, mask off: weight on mat": ("softmax over all six keys of row 2",
                                       HEAD + "?query=2&mask=off"),
    "mask off: largest |row 0 − row 4| (both 'the')": ("max |w₀ⱼ − w₄ⱼ| without the mask",
                                                        HEAD + "?query=4&mask=off"),
    "row 2, divisor off: weight on cat": ("softmax of q₂·kⱼ, not divided by √5",
                                          HEAD + "?query=2&divide=off"),
    "row 2, divisor off: effective tokens attended": ("e to the entropy of that row",
                                                      HEAD + "?query=2&divide=off"),
    "length 8, mask on: pairs computed then discarded": ("pairs above the diagonal: n(n − 1)/2",
                                                         HEAD + "?length=8"),
    "length 8: dot products": ("n² queries by keys", HEAD + "?length=8"),
    "length 8, mask off: pairs discarded": ("nothing is masked", HEAD + "?length=8&mask=off"),
    "prefill ladder, lengths 3..8": ("n² for n = 3 … 8", "ladder/?phase=prefill"),
    "decode ladder, lengths 3..8": ("one query against n keys: n", "ladder/?phase=decode"),
    "decode: outputs with mask on vs off differ by": (
        "max |change| of the newest row's weights and output", HEAD + "?phase=decode&mask=off"),
    "mask on: truncate mismatches over lengths 1-8, every row, ±divisor": (
        "row i of n tokens against a pass over i + 1 tokens, summed in a fixed order",
        HEAD + "?query=2"),
    "mask off: truncate mismatches (lengths 2-8, rows before the last)": (
        "the same comparison without the mask", HEAD + "?query=2&mask=off"),
    "√5, the divisor of a d_k = 5 head": ("√d_k", HEAD + "?divide=off"),
    "exp(−∞), a masked score's exponential": ("exp of −∞ in floating point", HEAD + "?query=2"),
    **{f"d_k = {d}: {kind} effective keys (mean of 2000 draws)": (
        (f"e to the entropy of softmax(q·k{'/√d_k' if kind == 'scaled' else ''}), 16 keys, "
         "mean of 2,000 draws"), f"sqrt-dk/?d_k={d}")
       for d in (4, 16, 128, 512) for kind in ("unscaled", "scaled")},
    **{f"d_k = {d}: measured spread of 16 scores (mean of draws)": (
        "standard deviation of the 16 raw scores, mean of 2,000 draws", f"sqrt-dk/?d_k={d}")
       for d in (4, 128, 512)},
    **{f"√{d}": ("the theory's spread, √d_k", f"sqrt-dk/?d_k={d}") for d in (4, 512)},
    "√128": ("the theory's spread, √d_k", "sqrt-dk/?d_k=128"),
    "d_k = 128: three standard deviations of unscaled scores": ("3√d_k", "sqrt-dk/?d_k=128"),
    "e^68 ≈ 10^x: x (whole part)": ("68 / ln 10, the exponentials across ±3√128",
                                    "sqrt-dk/?d_k=128"),
    "Qwen3-8B: FLOPs per (query, key) pair": ("4 × layers × heads × head_dim",
                                              "cost/?model=qwen3-8b"),
    **{f"Qwen3-8B, {n:,} prompt: attention share of prefill": (
        "pair FLOPs × n²/2 over that plus 2 × matmul parameters × n",
        f"cost/?model=qwen3-8b&prompt={n}") for n in (256, 4096, 32768, 131072)},
    "Qwen3-8B, 4,096 prompt: everything but attention, share of prefill": (
        "1 − the attention share", "cost/?model=qwen3-8b&prompt=4096"),
    "GPT-2 small: parameters": ("every weight stored, the embeddings included", "cost/?model=gpt2"),
    "Qwen3-8B, 256: both shares under 1%": ("the larger of the two shares, against 1%",
                                            "cost/?model=qwen3-8b&prompt=256"),
    "Qwen3-8B: head_dim": ("the model's config.json", "cost/?model=qwen3-8b"),
    "Llama-3-8B: head_dim": ("the model's config.json", "cost/?model=llama-3-8b"),
    "Qwen3-8B crossover, triangular kernel (tokens)": (
        "4 × matmul parameters / pair FLOPs", "cost/?model=qwen3-8b"),
    "Qwen3-8B crossover, naive kernel (tokens)": ("2 × matmul parameters / pair FLOPs",
                                                  "cost/?model=qwen3-8b&kernel=naive"),
    "GPT-2 small crossover, triangular (tokens)": ("4 × matmul parameters / pair FLOPs",
                                                   "cost/?model=gpt2"),
    "Qwen3-8B / GPT-2 crossover": ("the two crossovers' ratio", "cost/?model=gpt2"),
    "GPT-2 at its 1,024 maximum: attention share of prefill": (
        "the prefill share at n = 1,024", "cost/?model=gpt2&prompt=1024"),
    "Qwen3-8B, context 256: attention share of a decode step": (
        "pair FLOPs × n over that plus 2 × matmul parameters", "cost/?model=qwen3-8b&prompt=256"),
    "eager score matrix, 4,096 tokens, 32 heads, bf16 (GiB per layer)": (
        "heads × n² × 2 bytes", "memory-bill/?prompt=4096"),
    "note: dot products per decoded token at 4,096 (millions)": (
        "layers × query heads × context", "decode-bill/"),
    "note: keys and values read at 4,096 tokens": ("bytes per token × 4,096", "decode-bill/"),
    "note: the ridge point an H100 needs": ("989 TFLOP/s ÷ 3.35 TB/s, to the nearest ten",
                                            "decode-bill/?gpu=h100-sxm"),
    "one head, one decoded token: score operations": ("context × 2 × head_dim", "decode-bill/"),
    "one head, one decoded token: weighted-sum operations": (
        "context × 2 × the values' head_dim", "decode-bill/"),
    "one head, one decoded token: operations": ("the two together", "decode-bill/"),
    "Llama-3-8B: input embedding table (parameters)": ("vocabulary × hidden width",
                                                       "memory-bill/"),
    "Llama-3-8B: parameters that do work": ("every linear weight and the output layer",
                                            "decode-bill/"),
    "Llama-3-8B: parameters": ("every weight stored", "memory-bill/"),
    "Llama-3-8B: embedding table, subtracted": ("vocabulary × hidden width", "memory-bill/"),
    "Llama-3-8B, 4,096: attention share of a decode step, as 1 in x": (
        "one over the unrounded share", "decode-bill/"),
    "Llama-3-8B: query heads": ("the model's config.json", "decode-bill/"),
    "Llama-3-8B: key/value heads": ("the model's config.json", "decode-bill/"),
    "the bill: keys and values at 4,096 tokens": ("bytes per token × 4,096", "memory-bill/"),
    "Llama-3-8B, 4,096 context: dot products per decoded token": (
        "layers × query heads × context", "decode-bill/"),
    "Llama-3-8B: attention operations per decoded token": (
        "dot products × 2 × head_dim × 2 (scores and values)", "decode-bill/"),
    "… of which the scores": ("dot products × 2 × head_dim", "decode-bill/"),
    "… and the weighted sum of values": ("the same for the weighted sum", "decode-bill/"),
    "Llama-3-8B: weight operations per token": ("2 × matmul parameters", "decode-bill/"),
    "Llama-3-8B, 4,096: attention share of a decode step": (
        "2.1B over 15B + 2.1B, each computed and rounded as the document shows it",
        "decode-bill/"),
    "Llama-3-8B KV bytes per token per layer (bf16)": ("2 × KV heads × head_dim × 2 bytes",
                                                       "memory-bill/"),
    "Llama-3-8B KV bytes per token (bf16)": ("the same × layers", "memory-bill/"),
    "Llama-3-8B keys and values at 4,096 tokens": ("bytes per token × 4,096", "decode-bill/"),
    "decode attention arithmetic intensity (FLOP/byte)": (
        "attention operations over the bytes of keys and values", "decode-bill/"),
    "H100 SXM ridge point (FLOP/byte)": ("989 TFLOP/s ÷ 3.35 TB/s (datasheet peaks)",
                                         "decode-bill/?gpu=h100-sxm"),
    "Llama-3-8B weights in bf16": ("every parameter × 2 bytes", "memory-bill/"),
    "one user's cache outweighs the weights at (tokens)": (
        "weight bytes ÷ KV bytes per token", "memory-bill/?context=131072"),
    "32 users at 4k tokens: keys and values": ("32 × 4,096 × KV bytes per token",
                                               "memory-bill/?users=32"),
    "8,192-token prompt: scores per head": ("n²", "memory-bill/?prompt=8192"),
    "8,192-token prompt: score scratch per layer (32 heads, 2 B)": (
        "heads × n² × 2 bytes", "memory-bill/?prompt=8192"),
    (claims.MATH, "√128"): ("the scores' spread, √d", "agreement/?d=128"),  # the 2nd document's
    "(2, −1, 0.5) · (3, 4, 2)": ("Σ aᵢbᵢ", "agreement/"),
    "operations per 128-number dot product": ("2 × 128, a multiply-add counted as 2",
                                              "agreement/?d=128"),
    "d = 128: spread of raw scores (mean of draws)": ("standard deviation of q·k, 128 numbers",
                                                      "agreement/?d=128"),
    "d = 128: spread after dividing by √128": ("the same over √128", "agreement/?d=128"),
    "softmax(2, 1, 0.1): first weight": ("e² / (e² + e¹ + e^0.1)", "overflow/"),
    "softmax(2, 1, 0.1): second weight": ("e¹ / (e² + e¹ + e^0.1)", "overflow/"),
    "softmax(2, 1, 0.1): third weight": ("e^0.1 / (e² + e¹ + e^0.1)", "overflow/"),
    "e² (no max subtracted)": ("exp(2)", "overflow/?precision=float32"),
    "e¹ (no max subtracted)": ("exp(1)", "overflow/?precision=float32"),
    "e^0.1 (no max subtracted)": ("exp(0.1)", "overflow/?precision=float32"),
    "e² + e¹ + e^0.1": ("the row's sum", "overflow/?precision=float32"),
    "largest float16": ("numpy's finfo(float16).max", "overflow/"),
    "e¹²": ("exp(12) in float64", "overflow/?scores=12,+1,+0.1&precision=float32"),
    "float16 softmax of (12, 1, 0.1), no max subtracted: garbage": (
        "the row in float16, inf or nan anywhere", "overflow/?scores=12,+1,+0.1"),
    "… with the max subtracted: finite weights summing to 1": (
        "the same with the max subtracted first",
        "overflow/?scores=12,+1,+0.1&subtract_max=on"),
    "max subtracted: first score": ("s − max(s)", "overflow/?subtract_max=on"),
    "max subtracted: second score": ("s − max(s)", "overflow/?subtract_max=on"),
    "max subtracted: third score": ("s − max(s)", "overflow/?subtract_max=on"),
    "max subtracted: every exponential at most 1": ("the largest e^(s − max(s))",
                                                    "overflow/?subtract_max=on"),
    "blocks [2, 1] then [3, 0]: running sum": (
        "the running sum, rescaled by e^(old max − new max) when the max rises",
        "online-softmax/?step=2"),
    "… equal to the full-row sum": ("against Σ e^(s − max) over the whole row",
                                    "online-softmax/?step=2"),
}
# the table's columns; a phone shows each cell under its column's name (data-label)
COLUMNS = ("The document says", "Computed as", "Computed", "Agreement", "Shown at")
# a row's kind, as its agreement cell names it (a plain claim needs no label)
KIND_LABEL = {"claim": "",
              "fitted": (" · <strong>fitted</strong>: the worked example's vectors were fitted "
                         "to this figure, so it agrees by construction"),
              "identity": " · <strong>identity</strong>: arithmetic only"}
DOCUMENTS = {claims.SDPA: "Scaled dot-product attention",
             claims.MATH: "Dot products, softmax and attention math"}


def row_of(claim):  # -> (how it is computed, where it is shown): by document and words, or words
    return ROWS.get((claim.source, claim.what)) or ROWS[claim.what]


def claim_id(claim_what):  # a ledger row's words -> its row's element id: figures link there
    return "claim-" + "-".join(re.findall(r"[a-z0-9]+", claim_what.lower()))


def row_html(claim, taken=None):  # -> one <tr>: the document's figure, how, computed,
    # agreement, where; taken: the ids already given on the page (a second row of the same
    # words, in the other document, is told apart by a number)
    how, where = row_of(claim)
    mark = "agrees" if claim.ok else "disagrees"
    cells = ((f"<q>{html.escape(claim.document)}</q><br>"
              f'<span class="ae-small">{html.escape(claim.what)}</span>'),
             html.escape(how), html.escape(claim.shown),
             (f'{"✓" if claim.ok else "✗"} {mark}: {html.escape(claim.rule)}'
              f"{KIND_LABEL[claim.kind]}"),
             f'<a href="../{html.escape(where)}">{html.escape(where.split("/")[0])}</a>')
    taken = set() if taken is None else taken
    base = rid = claim_id(claim.what)
    while rid in taken:
        rid = f"{base}-{len([t for t in taken if t.startswith(base)]) + 1}"
    taken.add(rid)
    tds = "".join(f'<td data-label="{name}">{cell}</td>'
                  for name, cell in zip(COLUMNS, cells, strict=True))
    return f'<tr id="{rid}">{tds}</tr>'


def table_html(rows, taken=None):  # -> one document's table; taken: ids given on the page
    head = "<tr>" + "".join(f'<th scope="col">{name}</th>' for name in COLUMNS) + "</tr>"
    taken = set() if taken is None else taken
    body = "\n".join(row_html(c, taken) for c in rows)
    return (f'<div class="ae-numbers" role="region" tabindex="0" aria-label="the ledger">'
            f"<table><thead>{head}</thead>\n<tbody>\n{body}\n</tbody></table></div>")


FIGURE_COLUMNS = ("The chapter's figure", "Computed", "Where it comes from", "Shown at")


def flash_figures():  # -> [(what, computed, where it comes from, shown at)]: the FlashAttention
    # chapter's figures, which no source document quotes: each computed now, each with its
    # source (a paper's algorithm, a kernel's file, a hand-worked count in the tests)
    from app.kit import fmt
    from app.panels import tiles, traffic
    from attention_core import flash, worked_example

    walk, (out, _) = tiles.run(2, 2, True), tiles.reference(True)
    count = flash.tile_count(8, worked_example.D_K, 2, 2, causal=True)
    heads, d = traffic.shape()
    big = flash.tile_count(8192, d, traffic.KERNEL_ROWS, traffic.KERNEL_COLS, causal=True)
    plain, causal = traffic.layer_traffic(8192, False), traffic.layer_traffic(8192, True)
    rule = flash.block_sizes(traffic.ON_CHIP_KB * 1024 // traffic.BYTES, d)
    step = walk.steps[4]
    return [
        ("The worked example in 2 × 2 tiles under the causal mask: tiles computed",
         f"{count.tiles - count.skipped} of {count.tiles}",
         ("a tile is skipped when its first key follows its last row; counted tile by tile in "
         "tests/test_panel_tiles.py"), "tiles/?step=16"),
        ("Tile 5, row 4: the rescale e^(m before − m now)",
         (f"e^({fmt.num(step.old_max[0])} − {fmt.num(step.new_max[0])}) = "
         f"{fmt.num(step.rescale[0], 3)}"),
         ("FlashAttention-2, Algorithm 1, line 10, without the inverse its published form has "
         "(flash-attention issue 991)"), "tiles/?step=5"),
        ("Largest difference of the tiled output from softmax(QKᵀ/√5)V",
         fmt.sig_figures(float(abs(walk.output - out).max()), 2),
         ("the whole square in float64 (numpy); tests/test_flash.py also holds it against "
         "PyTorch's scaled_dot_product_attention"), "tiles/?step=16"),
        ("Llama 3.1 8B, 8,192 tokens, one layer: bytes the standard way moves",
         fmt.decimal_bytes(plain.standard),
         ("FlashAttention (Dao et al., 2022), Algorithm 0: S and P written and read back, "
         "(4nd + 4n²) values a head; hand-worked in tests/test_flash.py"),
         "traffic/?prompt=8192"),
        ("The same, tiled: without the mask, and with it",
         f"{fmt.decimal_bytes(plain.tiled)}; {fmt.decimal_bytes(causal.tiled)}",
         "FlashAttention-2's loops: Q once, K and V once per 128-row query block, O and L once",
         "traffic/?prompt=8192"),
        ("Tiles a causal kernel skips at 8,192 tokens, 128 × 64 tiles",
         f"{fmt.count(big.skipped)} of {fmt.count(big.tiles)}",
         ("query block i skips key blocks from 2i + 2 on: Σ (126 − 2i) over 64 blocks, in "
         "tests/test_flash.py"), "traffic/?prompt=8192"),
        ("FlashAttention-2's forward tiles for head_dim 128 (A100, H100)",
         f"{traffic.KERNEL_ROWS} × {traffic.KERNEL_COLS}",
         ("flash-attention, csrc/flash_attn/src/flash_fwd_launch_template.h, "
         "run_mha_fwd_hdim128"), "traffic/"),
        (f"FlashAttention's rule for {traffic.ON_CHIP_KB} KB of 2-byte values, d = {d}",
         f"{rule[0]} × {rule[1]}",
         ("FlashAttention (Dao et al., 2022), Algorithm 1, line 1: B_c = ⌈M / 4d⌉, "
         "B_r = min(B_c, d)"), "traffic/"),
        ("Scores one layer holds at 8,192 tokens, the standard way",
         fmt.decimal_bytes(heads * 8192 ** 2 * traffic.BYTES),
         f"{heads} heads × 8,192² × 2 bytes: the memory bill's scratch", "memory-bill/"),
    ]


def kv_figures():  # -> [(what, computed, where it comes from, shown at)]: the KV cache chapter's
    from app.kit import fmt
    from app.panels import blocks, fit
    from attention_core import paged

    _, weights, _, cache, _, page, count = fit.fit("llama-3-8b", 80, 0.9)
    story = blocks.pool_after(4, 6)
    return [
        ("Llama-3-8B: one block of one layer, 16 tokens, bf16", f"{fmt.count(page)} bytes",
         ("vLLM, vllm/v1/kv_cache_interface.py, AttentionSpec: 2 × block_size × KV heads × "
          "head_size × dtype bytes; hand-worked in tests/test_paged.py"), "blocks-fit/"),
        ("Llama-3-8B on 80 GiB at gpu_memory_utilization 0.9: blocks",
         f"{fmt.count(count)}",
         ("vLLM, vllm/v1/core/kv_cache_utils.py, get_num_blocks: the cache // page // layers; "
          "the cache as in vllm/v1/worker/gpu_worker.py, determine_available_memory, with 2 GiB "
          "assumed for activations and the rest"), "blocks-fit/?model=llama-3-8b&gpu=80"),
        ("The same: vLLM's logged \"GPU KV cache size\"",
         f"{fmt.count(paged.logged_tokens(count, 16))} tokens",
         "blocks × block_size: token slots, not a capacity", "blocks-fit/"),
        ("The same: the cache against the weights", (f"{fit.gib(cache)} against "
         f"{fit.gib(weights)}"), "the weights in bf16: every parameter × 2 bytes", "blocks-fit/"),
        ("The blocks story at event 6, blocks of 4: blocks in use, copies made",
         f"{story.used()} of {blocks.POOL}, {story.copies}",
         "the block tables, counted in tests/test_panel_blocks.py and tests/oracle.py",
         "paged-blocks/?event=6"),
    ]


CHAPTER_FIGURES = (("FlashAttention: the chapter's own figures", "flash", flash_figures),
                   ("The KV cache: the chapter's own figures", "kv", kv_figures))


def figures_html(rows_of=flash_figures):  # -> a chapter's table of figures
    head = "<tr>" + "".join(f'<th scope="col">{name}</th>' for name in FIGURE_COLUMNS) + "</tr>"
    rows = []
    for what, value, source, where in rows_of():
        cells = (html.escape(what), html.escape(value), html.escape(source),
                 f'<a href="../{html.escape(where)}">{html.escape(where.split("/")[0])}</a>')
        rows.append(f'<tr id="figure-{claim_id(what)[len("claim-"):]}">' + "".join(
            f'<td data-label="{name}">{cell}</td>'
            for name, cell in zip(FIGURE_COLUMNS, cells, strict=True)) + "</tr>")
    return (f'<div class="ae-numbers" role="region" tabindex="0" aria-label="the chapter\'s '
            f'figures"><table><thead>{head}</thead>\n<tbody>\n' + "\n".join(rows)
            + "\n</tbody></table></div>")


def sections():  # -> the page's sections, as a chapter's: text blocks only
    ledger = claims.all_claims()
    agree = sum(c.ok for c in ledger)
    out = [f"# {TITLE}",
           (f"Every figure the two source documents quote, recomputed by `attention_core` when "
           f"this page was made: the document's figure, how this site computes it, the value it "
           f"computed, the rule by which the two agree (the digits the document shows, or a "
           f"stated tolerance with its reason), and a link to the panel that shows it. "
           f"**{claims.count_line(ledger)}; {agree} of {len(ledger)} agree.** A row marked "
           f"fitted is a figure the worked example's vectors were chosen to reproduce "
           f"(`scripts/fit_worked_example.py`), so its agreement is by construction and it "
           f"is counted apart from the claims checked, as are the identities (arithmetic "
           f"only). The numbers in the documents that are not claims (section numbers, "
           f"years, a control's setting, a formula's constants, a figure restated) are listed "
           f"with their reasons beside the ledger's rows, in `attention_core/claims.toml`. "
           f"The command `attention-explorable numbers` prints the same table.")]
    taken = set()
    for source, name in DOCUMENTS.items():
        rows = [c for c in ledger if c.source == source]
        out += [f"## {name}", table_html(rows, taken)]
    for heading, _, rows_of in CHAPTER_FIGURES:
        out += [f"## {heading}",
                ("No source document quotes these: the chapter computes them, and each row names "
                 "where its rule comes from and where the tests work it by hand."),
                figures_html(rows_of)]
    return out


@functools.cache
def chapter():  # -> the page as a content.Chapter (the ledger runs when first asked for)
    return content.Chapter(title=TITLE, sections=sections())
