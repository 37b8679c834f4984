"""The least time one decode step can take, and the batch that turns it compute-bound.

Worked by hand from Llama-3-8B's config.json (32 layers, hidden 4,096, MLP 14,336, 32 query
heads, 8 KV heads, head_dim 128, vocabulary 128,256, untied) and the H100 SXM datasheet
(989 TFLOP/s dense BF16, 3.35 TB/s), in bf16: a step reads every weight a token uses once
(not the embedding table: one row of it) and the cache; it is bounded below by
max(bytes ÷ bandwidth, FLOPs ÷ peak).
"""

import math

import pytest

from app.panels import decode_bill
from attention_core import costs

L, H, I, HEADS, KV, D, V = 32, 4096, 14336, 32, 8, 128, 128_256
PEAK, BANDWIDTH = 989e12, 3.35e12
MATMUL = L * (H * HEADS * D + 2 * H * KV * D + HEADS * D * H + 3 * H * I) + V * H
NORMS = (2 * L + 1) * H
KV_PER_TOKEN = 2 * L * KV * D * 2  # keys and values, bf16


def by_hand(context, users=1):  # -> (bytes, FLOPs) of one step
    step_bytes = 2 * (MATMUL + NORMS) + users * context * KV_PER_TOKEN
    flops = users * (2 * MATMUL + 4 * L * HEADS * D * context)
    return step_bytes, flops


@pytest.fixture
def llama():
    return costs.preset("llama-3-8b"), costs.GPUS["h100-sxm"]


def test_one_step_at_4096_tokens_is_about_4_6_ms_or_215_tokens_a_second(llama):
    m, gpu = llama
    step_bytes, flops = by_hand(4096)
    assert costs.decode_step_bytes(m, 4096) == step_bytes
    assert costs.decode_step_flops(m, 4096) == flops
    seconds = max(step_bytes / BANDWIDTH, flops / PEAK)
    assert costs.decode_step_seconds(m, gpu, 4096) == pytest.approx(seconds, rel=1e-12)
    assert round(seconds * 1e3, 1) == 4.6  # the "about 4.6 ms"
    assert round(costs.decode_tokens_per_second(m, gpu, 4096)) == 215  # "about 215"
    assert step_bytes / BANDWIDTH > 100 * flops / PEAK  # memory sets the pace, by far


def test_the_weights_alone_turn_compute_bound_near_the_ridge(llama):
    m, gpu = llama
    step_bytes, flops = by_hand(0)
    batch = costs.compute_bound_batch(m, gpu, 0)
    assert batch == pytest.approx((step_bytes / BANDWIDTH) / (flops / PEAK), rel=1e-12)
    assert round(batch) == 295 and round(gpu.ridge_point) == 295
    # at that batch the two times agree; one user fewer, memory wins
    b = math.ceil(batch)
    assert costs.decode_step_flops(m, 0, b) / PEAK >= costs.decode_step_bytes(m, 0, b) / BANDWIDTH
    b -= 1
    assert costs.decode_step_flops(m, 0, b) / PEAK < costs.decode_step_bytes(m, 0, b) / BANDWIDTH


def test_each_users_cache_moves_the_batch_until_no_batch_will_do(llama):
    m, gpu = llama
    batches = [costs.compute_bound_batch(m, gpu, n) for n in (0, 64, 256)]
    assert batches == sorted(batches) and math.isfinite(batches[-1])
    # by hand: a user's cache costs more time to read than their arithmetic from
    # n = (2 x MATMUL / PEAK) / (KV_PER_TOKEN / BANDWIDTH - 4 L HEADS D / PEAK) on
    n = (2 * MATMUL / PEAK) / (KV_PER_TOKEN / BANDWIDTH - 4 * L * HEADS * D / PEAK)
    assert 300 < n < 500
    assert math.isfinite(costs.compute_bound_batch(m, gpu, math.floor(n)))
    assert costs.compute_bound_batch(m, gpu, math.ceil(n)) == math.inf
    assert costs.compute_bound_batch(m, gpu, 4096) == math.inf


def test_the_decode_bill_says_it(llama):
    time = decode_bill.time_state("llama-3-8b", 4096, "h100-sxm")["holes:time"]
    assert (time["step_ms"], time["tokens_s"]) == ("4.64 ms", "215 tokens/s")
    assert time["bound"] == "Memory sets the pace."
    assert time["reached"] == "no batch makes the whole step compute-bound"
    weights = decode_bill.weights_batch_state("llama-3-8b", "h100-sxm")["holes:time_weights"]
    assert weights["weights_batch"] == "295"
    short = decode_bill.time_state("llama-3-8b", 256, "h100-sxm")["holes:time"]["reached"]
    m, gpu = llama
    assert short.endswith(f"at about {costs.compute_bound_batch(m, gpu, 256):,.0f} users")


def test_the_math_chapters_figures_are_the_cores(llama):
    from app.chapters import content

    m, gpu = llama
    prose = " ".join(" ".join(item.split()) for item in content.load("math.md").sections
                     if isinstance(item, str))
    weights, cache = costs.weight_bytes_read(m), costs.kv_cache_bytes(m, 4096)
    seconds = costs.decode_step_seconds(m, gpu, 4096)
    flops = costs.decode_step_flops(m, 4096)
    step_bytes = by_hand(4096)[0]
    n = (2 * MATMUL / PEAK) / (KV_PER_TOKEN / BANDWIDTH - 4 * L * HEADS * D / PEAK)
    for shown in (f"{weights / 1e9:.1f} GB of model parameters", f"{cache / 1e9:.2f} GB of cache",
                  (f"{step_bytes / 1e9:.1f} GB ÷ {BANDWIDTH / 1e12:.2f} TB/s ≈ "
                  f"{seconds * 1e3:.1f} ms"),
                  (f"{flops / 1e9:.1f} billion operations need only "
                  f"{flops / PEAK * 1e3:.3f} ms at {PEAK / 1e12:.0f} TFLOP/s"),
                  f"about {costs.decode_tokens_per_second(m, gpu, 4096):.0f} tokens a second",
                  f"batch of about {costs.compute_bound_batch(m, gpu, 0):.0f}",
                  f"past about {round(n):.0f} tokens of context"):
        assert shown in prose, shown
