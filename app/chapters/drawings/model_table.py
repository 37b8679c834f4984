"""One table per model: the figures the cost panel's prose would otherwise list inline.

For a preset (the cost panel's `model`): FLOPs per (query, key) pair, the weight matmuls'
FLOPs per token, matmul parameters, the naive and triangular crossovers, the config's max
positions and KV bytes per token in bf16, each from attention_core.costs. A row whose figure a
source document quotes links to that row of the ledger page (/numbers), where it is checked.
The table is HTML, not SVG: a reader can select and copy its numbers.
"""

import html
import os

from app.chapters.numbers_page import claim_id
from app.kit import fmt, registry
from attention_core import claims, costs

BF16 = costs.dtype_bytes("bf16")


def rows(key):  # -> [(label, value, value text, how, ledger words or None)] for a preset
    m = costs.preset(key)
    pair, params = costs.pair_flops(m), costs.matmul_params(m)
    tri, naive = (costs.crossover_tokens(m, k) for k in ("triangular", "naive"))
    name = m.name
    weights, kv = costs.other_flops_decode(m), costs.kv_bytes_per_token(m, BF16)
    # the ledger's words for a figure a document quotes (only the rows it has are linked)
    return [
        ("FLOPs per (query, key) pair", pair, fmt.thousands(pair),
         f"4 × {m.layers} layers × {m.heads} query heads × {m.head_dim} head_dim",
         (f"{name}: FLOPs per (query, key) pair",)),
        ("Matmul parameters", params, fmt.thousands(params),
         "every layer's matrices and the lm_head", ()),
        ("Weight FLOPs per token", weights, fmt.thousands(weights), "2 × matmul parameters",
         (f"{name}: weight operations per token",)),
        ("Crossover, triangular kernel", tri, f"{fmt.tokens_or_never(tri)} tokens",
         "attention's n²/2 pairs equal the rest",
         (f"{name} crossover, triangular kernel (tokens)",
          f"{name} crossover, triangular (tokens)")),
        ("Crossover, naive kernel", naive, f"{fmt.tokens_or_never(naive)} tokens",
         "n² pairs: half the triangular's", (f"{name} crossover, naive kernel (tokens)",)),
        ("Max positions", m.max_positions, fmt.thousands(m.max_positions or 0),
         "the config's limit", ()),
        ("KV bytes per token, bf16", kv, fmt.thousands(kv),
         (f"2 × {m.layers} layers × {m.kv_heads} KV heads × {m.head_dim} × 2 bytes "
          "(bf16, a 2-byte number format)"),
         (f"{name} KV bytes per token (bf16)",)),
    ]


def ledger_row(value, words, computed):  # computed: {ledger words: value} -> the ledger's
    # words for this very figure, or None. A row is linked only where the ledger computed the
    # same value: a quote of another figure with similar words (a total, not the matmul
    # parameters) is not this one
    return next((w for w in words if w in computed
                 and abs(computed[w] - value) <= 0.5), None)


def numbers_href(chapter_content):  # -> the ledger page, relative to the chapter's page
    route = registry.chapter(chapter_content).route.strip("/")
    return os.path.relpath("numbers", route or ".").replace(os.sep, "/") + "/"


def table(key, chapter_content="attention.md"):  # -> <table> of one preset's figures
    href = numbers_href(chapter_content)
    computed = {c.what: c.computed for c in claims.all_claims()}  # the ledger, once a table
    body = []
    for label, number, value, how, words in rows(key):
        what = ledger_row(number, words, computed)
        linked = (f'<a href="{html.escape(href)}#{claim_id(what)}" '
                  f'title="checked on the numbers page">{html.escape(value)}</a>'
                  if what else html.escape(value))
        body.append(f'<tr><th scope="row">{html.escape(label)}</th>'
                    f'<td data-figure="{html.escape(label)}">{linked}</td>'
                    f'<td class="ae-how">{html.escape(how)}</td></tr>')
    name = costs.preset(key).name
    return (f'<table class="ae-model-table" data-model="{html.escape(key)}">'
            f"<caption>{html.escape(name)}</caption>"
            '<thead><tr><th scope="col">figure</th><th scope="col">value</th>'
            '<th scope="col">how</th></tr></thead>'
            f'<tbody>{"".join(body)}</tbody></table>')
