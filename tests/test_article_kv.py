"""The fourth chapter at "/kv" without a browser: every figure its prose quotes is computed
(attention_core.paged through the panels' functions), its panels follow its markers, and its
sentences are its own, against both documents."""


import pytest

from app.chapters import page_model
from app.kit import fmt
from app.panels import fit
from attention_core import paged
from tests.prose_check import ProseCheck, chapter_prose

KV = page_model.at("/kv")


def prose_text():
    return chapter_prose(KV)


def quoted():  # -> [(the text the prose must hold, what it says)], each figure computed now
    _, weights, _, cache, _, _, blocks = fit.fit("llama-3-8b", 80, 0.9)
    small = fit.fit("qwen3-8b", 24, 0.9)[-1]
    request = paged.kv_bytes(8192, 32, 8, 128, 2)  # one 8,192-token request of Llama 3 8B
    passes = -(-weights // request)
    return [
        (f"holds exactly {fit.gib(request).replace('.00', '')} of it", "one request's bytes"),
        (f"pass the weights at {int(passes)} such requests", "requests to pass the weights"),
        ((f"the math chapter's {fmt.decimal_bytes(weights)} of Llama 3 8B weights are "
         f"{fit.gib(weights)}"), "the weights in GB and GiB"),
        (f'"GPU KV cache size: {fmt.count(paged.logged_tokens(blocks, 16))} tokens"',
         "the logged tokens"),
        (f"the cache gets {fit.gib(cache)} against {fit.gib(weights)} of weights",
         "the 80 GiB card's cache and weights"),
        (f"the cache holds {fmt.count(small)} blocks", "Qwen3-8B on 24 GiB"),
        (f"{['no', 'one', 'two', 'three', 'four'][small // 512]} requests of 8,192 tokens",
         "requests on 24 GiB"),
        ("(16 by default)", "vLLM's block size"),
    ]


@pytest.mark.parametrize("figure, what", quoted())
def test_every_figure_the_prose_quotes_is_computed(figure, what):
    assert figure in prose_text(), f"the chapter no longer quotes {figure!r} ({what})"


def test_vllms_default_block_size_is_the_one_quoted():
    assert paged.VLLM_BLOCK_SIZE == 16 == fit.BLOCK


def test_the_chapters_sentences_are_its_own():
    for seed, words in (("scaled-dot-product-attention.txt", 1000),
                        ("dot-products-softmax-attention-math.txt", 500)):
        ProseCheck(seed, [], min_words=words).in_our_own_words(prose_text())
