"""The third chapter at "/flash" without a browser: every figure its prose quotes is one
attention_core.flash computes (through the panels' own functions), its panels follow its
markers, and its sentences are its own, against both documents."""

import math

import pytest

from app.chapters import page_model
from app.kit import fmt
from app.panels import tiles, traffic
from attention_core import flash
from tests.prose_check import ProseCheck, chapter_prose

FLASH = page_model.at("/flash")


def prose_text():
    return chapter_prose(FLASH)


def quoted():  # -> [(the text the prose must hold, what it says)], each figure computed now
    walk = tiles.run(2, 2, True)
    grid = flash.tile_count(8, 5, 2, 2, causal=True)
    step = walk.steps[4]  # tile 5
    t_plain = traffic.layer_traffic(8192, False)
    heads, d = traffic.shape()
    big = flash.tile_count(8192, d, traffic.KERNEL_ROWS, traffic.KERNEL_COLS, causal=True)
    rule = flash.block_sizes(traffic.ON_CHIP_KB * 1024 // traffic.BYTES, d)
    words = {10: "ten", 16: "sixteen", 6: "six"}
    big4 = flash.tile_count(8, 5, 4, 4, causal=True)
    words4 = {4: "four", 3: "three"}
    return [
        (f"a square of {words[grid.tiles]} tiles, {words[grid.tiles - grid.skipped]}",
         "the lede's tiles and those computed"),
        (f"Under the causal mask {words[grid.skipped]} tiles", "the tiles skipped"),
        (f"{words4[big4.tiles]} tiles against {words4[big4.tiles - big4.skipped]}",
         "the mask's two grids of 4 × 4 tiles"),
        ((f"e<sup>({fmt.num(step.old_max[0])} − {fmt.num(step.new_max[0])})</sup> ≈ "
         f"{fmt.num(step.rescale[0], 3)}"), "tile 5's rescale of row 4"),
        (f"moves {fmt.decimal_bytes(t_plain.standard)} this way", "the standard bytes"),
        (f"{fmt.decimal_bytes(t_plain.standard_square)} is the square", "of it, S and P"),
        (f"is {fmt.decimal_bytes(heads * 8192 ** 2 * 2)}: the scratch", "the square's bytes"),
        (f"room for {fmt.decimal_bytes(heads * 8192 ** 2 * 2)} of scores", "again"),
        (f"{fmt.decimal_bytes(heads * 131072 ** 2 * 2)} at 131,072", "the square at 131,072"),
        ((f"skips {fmt.count(big.skipped)} of one head's {fmt.count(big.tiles)} tiles "
         f"({big.skipped / big.tiles:.0%})"), "the causal kernel's skipped tiles"),
        (f"that is {round(t_plain.standard_square / t_plain.kv_reads)}, and the mask's skipped",
         "the saving without the mask, 2B_r/d"),
        (f"that gives {rule[0]} × {rule[1]}", "FlashAttention's rule for 192 KB"),
        (f"runs {traffic.KERNEL_ROWS} × {traffic.KERNEL_COLS}", "FlashAttention-2's tiles"),
        (f"holds one block of {traffic.KERNEL_ROWS} queries and {traffic.KERNEL_COLS} keys",
         "the block each unit holds"),
    ]


@pytest.mark.parametrize("figure, what", quoted())
def test_every_figure_the_prose_quotes_is_computed(figure, what):
    assert figure in prose_text(), f"the chapter no longer quotes {figure!r} ({what})"


def test_the_mask_doubles_the_saving_and_the_sizes_quoted_are_the_models():
    plain, causal = traffic.layer_traffic(8192, False), traffic.layer_traffic(8192, True)
    assert plain.standard == causal.standard  # a generic mask computes every score
    assert math.isclose(plain.standard / plain.tiled, 2.0, rel_tol=0.01)
    assert math.isclose(causal.standard / causal.tiled, 3.9, rel_tol=0.01)
    assert traffic.shape() == (32, 128)
    assert f"{traffic.shape()[0]} query heads of {traffic.shape()[1]} numbers, 2-byte values" \
        in prose_text()


def test_the_chapters_sentences_are_its_own():
    text = prose_text()
    for seed, words in (("scaled-dot-product-attention.txt", 1000),
                        ("dot-products-softmax-attention-math.txt", 500)):
        ProseCheck(seed, [], min_words=words).in_our_own_words(text)
