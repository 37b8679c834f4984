"""The ledger as a page (/numbers) without a browser: every claim of attention_core.claims is
a row, with its document figure, how it is computed, the computed value, its agreement and a
link to a panel page in a state that panel really has."""

import html
import importlib
import re
from urllib.parse import parse_qsl, urlsplit

import pytest

from app.chapters import chapter_page, numbers_page, page_model
from app.hosting import routes
from app.kit import registry
from app.kit.url_state import coerce
from attention_core import claims

LEDGER = claims.all_claims()


def page_html():
    return chapter_page.body(numbers_page.chapter(), [], "numbers", "default")


def test_every_claim_has_its_row_and_no_row_is_spare():
    used = {(c.source, c.what) if (c.source, c.what) in numbers_page.ROWS else c.what
            for c in LEDGER}
    assert used == set(numbers_page.ROWS)
    assert all(numbers_page.row_of(c) for c in LEDGER)


def test_the_page_lists_every_claim_with_its_figures_and_the_count():
    text = page_html()
    rows = re.findall(r"<tr id=\"claim-[a-z0-9-]+\"><td data-label", text)
    identities = sum(c.kind == "identity" for c in LEDGER)
    fitted = sum(c.kind == "fitted" for c in LEDGER)
    assert len(rows) == len(LEDGER) == len(claims.rows()) and 0 < identities < len(LEDGER)
    assert 0 < fitted < len(LEDGER)
    ids = re.findall(r'<tr id="([^"]+)"', text)
    assert len(set(ids)) == len(ids), "a row's id is given twice"
    no_ids = re.sub(r'<tr id="[^"]+">', "<tr>", text)
    for c in LEDGER:
        row = numbers_page.row_html(c)
        assert re.sub(r'<tr id="[^"]+">', "<tr>", row) in no_ids
        assert ("✓ agrees" if c.ok else "✗ disagrees") in row
    agree = sum(c.ok for c in LEDGER)
    checked = len(LEDGER) - identities - fitted
    assert (f"{checked} claims checked, {fitted} fitted, {identities} identities; "
            f"{agree} of {len(LEDGER)} agree.") in text


def test_fitted_rows_and_identities_are_labelled_and_plain_claims_are_not():
    for c in LEDGER:
        row = numbers_page.row_html(c)
        assert ("<strong>fitted</strong>" in row) == (c.kind == "fitted"), c.what
        assert ("<strong>identity</strong>" in row) == (c.kind == "identity"), c.what
    assert {c.what for c in LEDGER if c.kind == "fitted"} >= {
        "row 2 (sat), mask on: weight on cat", "row 2, divisor off: effective tokens attended"}


def test_a_disagreeing_claim_would_say_so():  # the mark is the claim's, not typed in
    wrong = claims.Claim("s", LEDGER[0].what, "0.99", 0.77, "0.77", "rounds to 2 dp", False)
    assert "✗ disagrees" in numbers_page.row_html(wrong)


@pytest.mark.parametrize("where", sorted({w for _, w in numbers_page.ROWS.values()}))
def test_every_link_opens_a_panel_in_a_state_it_has(where):
    folder, _, query = where.partition("/")
    route = f"/{folder}"
    assert route in routes.PANEL_ROUTES, where
    module = importlib.import_module(routes.PANEL_ROUTES[route].split(":")[0])
    [panel] = [v for v in vars(module).values() if isinstance(v, type)
               and v.__module__ == module.__name__ and getattr(v, "url_keys", None)]
    for key, value in parse_qsl(urlsplit(query).query or query.lstrip("?")):
        assert key in panel.url_keys, (where, key, panel.url_keys)
        coerced, repair = coerce(panel.param[key], key, value)
        assert coerced is not None and repair is None, (where, key, value, repair)


def test_it_is_a_route_of_the_site_built_as_the_chapters_are():
    assert routes.CHAPTER_ROUTES["/numbers"] == routes.TEXT_PAGE  # drawn as a chapter is
    model = page_model.at("/numbers")
    assert model.panels == {} and model.sections[0] == f"# {numbers_page.TITLE}"


def test_the_flash_chapters_figures_are_listed_with_their_sources():
    html_text = numbers_page.figures_html()
    rows = re.findall(r'<tr id="figure-[^"]+">(.*?)</tr>', html_text)
    cells = [[html.unescape(t) for t in re.findall(r'<td data-label="[^"]+">(.*?)</td>', r)]
             for r in rows]
    values = {c[0]: c[1] for c in cells}
    # hand-worked: 6 of the 16 tiles of 2 × 2 lie above the diagonal; Σ (126 − 2i), i < 64;
    # 32 heads × (4·8,192·128 + 4·8,192²) values × 2 bytes; ⌈98,304 / 512⌉ = 192
    assert values["The worked example in 2 × 2 tiles under the causal mask: tiles computed"] \
        == "10 of 16"
    assert values["Tiles a causal kernel skips at 8,192 tokens, 128 × 64 tiles"] == \
        f"{sum(126 - 2 * i for i in range(64)):,} of 8,192"
    standard = 32 * (4 * 8192 * 128 + 4 * 8192 ** 2) * 2
    assert values["Llama 3.1 8B, 8,192 tokens, one layer: bytes the standard way moves"] == \
        f"{standard / 1e9:.1f} GB"
    assert values["FlashAttention's rule for 192 KB of 2-byte values, d = 128"] == "128 × 192"
    assert all(len(c) == 4 and c[2] for c in cells) and len(cells) >= 8
    for c in cells:  # each row's link opens a page the site has
        route = "/" + re.search(r'href="\.\./([^/"?]+)', c[3]).group(1)
        assert route in registry.panel_routes(), route
    assert "FlashAttention: the chapter's own figures" in " ".join(numbers_page.sections())


def test_the_kv_chapters_figures_are_listed_with_their_sources():
    rows = re.findall(r'<tr id="figure-[^"]+">(.*?)</tr>',
                      numbers_page.figures_html(numbers_page.kv_figures))
    cells = [[html.unescape(t) for t in re.findall(r'<td data-label="[^"]+">(.*?)</td>', r)]
             for r in rows]
    values = {c[0]: c[1] for c in cells}
    # hand-worked: 2 × 16 × 8 × 128 × 2; (80 GiB × 0.9 − 16,060,522,496 − 2 GiB) // 65,536 // 32
    assert values["Llama-3-8B: one block of one layer, 16 tokens, bf16"] == "65,536 bytes"
    assert values["Llama-3-8B on 80 GiB at gpu_memory_utilization 0.9: blocks"] == "28,181"
    assert values['The same: vLLM\'s logged "GPU KV cache size"'] == f"{28_181 * 16:,} tokens"
    for c in cells:
        assert c[2] and re.search(r'href="\.\./[^"]+"', c[3])
    assert "The KV cache: the chapter's own figures" in " ".join(numbers_page.sections())
