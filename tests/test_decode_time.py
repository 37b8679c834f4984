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


# --- many users: the weights read once for the batch, each user's cache read for them ------
#
# The numbers below are worked out from the config fields at the top of this file:
#   one layer's attention weights: q 4,096 x 32 x 128 + k, v 2 x 4,096 x 8 x 128
#                                  + o 32 x 128 x 4,096           =    41,943,040
#   one layer's MLP (gate, up, down): 3 x 4,096 x 14,336          =   176,160,768
#   32 layers: 32 x 218,103,808                                   = 6,979,321,856
#   lm_head: 128,256 x 4,096                                      =   525,336,576
#   MATMUL                                                        = 7,504,658,432
#   NORMS: (2 x 32 + 1) x 4,096                                   =       266,240
#   weights read once a step, bf16: 2 x 7,504,924,672             = 15,009,849,344 B
#   cache per token per user: 2 (k, v) x 32 x 8 x 128 x 2 B       =       131,072 B
#   FLOPs per user at context n: 2 x MATMUL + 4 x 32 x 32 x 128 x n
#                              = 15,009,316,864 + 524,288 x n
WEIGHTS_READ = 15_009_849_344
CACHE_PER_TOKEN = 131_072
MATMUL_FLOPS = 15_009_316_864
ATTENTION_FLOPS_PER_KEY = 524_288


def test_hand_worked_constants_are_the_fields_arithmetic():  # the comment above, checked
    assert (MATMUL, NORMS, KV_PER_TOKEN) == (7_504_658_432, 266_240, CACHE_PER_TOKEN)
    assert 2 * (MATMUL + NORMS) == WEIGHTS_READ and 2 * MATMUL == MATMUL_FLOPS
    assert 4 * L * HEADS * D == ATTENTION_FLOPS_PER_KEY


def step_by_hand(m, gpu, context, users, step_bytes, flops):
    # the hand-worked bytes and FLOPs of one step against the fields' arithmetic and the core;
    # -> (seconds to read, seconds to compute), and the core's tokens/s checked against
    # users over the longer of the two
    assert WEIGHTS_READ + users * context * CACHE_PER_TOKEN == step_bytes
    assert users * (MATMUL_FLOPS + ATTENTION_FLOPS_PER_KEY * context) == flops
    assert costs.decode_step_bytes(m, context, users) == step_bytes
    assert costs.decode_step_flops(m, context, users) == flops
    memory, compute = step_bytes / BANDWIDTH, flops / PEAK
    step = max(memory, compute)
    assert costs.decode_step_seconds(m, gpu, context, users) == pytest.approx(step, rel=1e-12)
    tokens_s = costs.decode_tokens_per_second(m, gpu, context, users)
    assert tokens_s == pytest.approx(users / step, rel=1e-12)
    return memory, compute, tokens_s


def test_eight_users_read_the_weights_once_and_each_their_own_cache(llama):
    m, gpu = llama
    users, context = 8, 4096
    # bytes: 15,009,849,344 + 8 x 4,096 x 131,072 = 15,009,849,344 + 4,294,967,296
    step_bytes = 19_304_816_640
    # FLOPs: 8 x (15,009,316,864 + 524,288 x 4,096) = 8 x 17,156,800,512
    flops = 137_254_404_096
    memory, compute, tokens_s = step_by_hand(m, gpu, context, users, step_bytes, flops)
    # memory: 19,304,816,640 B / 3.35e12 B/s = 5.763 ms; compute: 0.139 ms. Memory wins.
    assert round(memory * 1e3, 3) == 5.763 and round(compute * 1e3, 3) == 0.139
    assert costs.decode_step_seconds(m, gpu, context, users) == pytest.approx(memory, rel=1e-12)
    # eight tokens a step: 8 / 5.763 ms = 1,388 tokens a second (one user alone: 215)
    assert round(tokens_s) == 1388


def test_past_the_compute_bound_batch_the_arithmetic_sets_the_pace(llama):
    m, gpu = llama
    context = 64
    # the batch where FLOPs take as long as bytes, at 64 tokens a user:
    #   weights 15,009,849,344 / 3.35e12 = 4.4806 ms, paid once
    #   a user adds (15,009,316,864 + 524,288 x 64) / 989e12 = 15,042,871,296 / 989e12 s of
    #   compute and 64 x 131,072 = 8,388,608 B / 3.35e12 of memory: 12.706 µs net
    #   4.4806 ms / 12.706 µs = 352.6 users
    per_user = ((MATMUL_FLOPS + ATTENTION_FLOPS_PER_KEY * context) / PEAK
                - context * CACHE_PER_TOKEN / BANDWIDTH)
    batch = (WEIGHTS_READ / BANDWIDTH) / per_user
    assert round(batch, 1) == 352.6
    assert costs.compute_bound_batch(m, gpu, context) == pytest.approx(batch, rel=1e-12)

    users = 1024  # well past it
    # bytes: 15,009,849,344 + 1,024 x 64 x 131,072 = 15,009,849,344 + 8,589,934,592
    step_bytes = 23_599_783_936
    # FLOPs: 1,024 x (15,009,316,864 + 524,288 x 64) = 1,024 x 15,042,871,296
    flops = 15_403_900_207_104
    memory, compute, tokens_s = step_by_hand(m, gpu, context, users, step_bytes, flops)
    # memory: 23,599,783,936 / 3.35e12 = 7.045 ms; compute: 15,403,900,207,104 / 989e12
    # = 15.575 ms. Compute wins: the step takes 15.575 ms, not 7.045
    assert round(memory * 1e3, 3) == 7.045 and round(compute * 1e3, 3) == 15.575
    assert costs.decode_step_seconds(m, gpu, context, users) == pytest.approx(compute, rel=1e-12)
    # 1,024 tokens a step / 15.575 ms = 65,745 tokens a second
    assert tokens_s == pytest.approx(users / compute, rel=1e-12)
    assert round(tokens_s) == 65745


def test_with_no_context_512_users_are_compute_bound(llama):
    m, gpu = llama
    # no cache: bytes are the weights alone, 15,009,849,344 B = 4.481 ms;
    # FLOPs 512 x 15,009,316,864 = 7,684,770,234,368 = 7.770 ms at 989 TFLOP/s (512 > 295)
    users = 512
    flops = 7_684_770_234_368
    assert users * MATMUL_FLOPS == flops
    assert costs.decode_step_bytes(m, 0, users) == WEIGHTS_READ
    assert round(WEIGHTS_READ / BANDWIDTH * 1e3, 3) == 4.481
    assert round(flops / PEAK * 1e3, 3) == 7.770
    assert costs.decode_step_seconds(m, gpu, 0, users) == pytest.approx(flops / PEAK, rel=1e-12)
    assert costs.decode_tokens_per_second(m, gpu, 0, users) == pytest.approx(
        users * PEAK / flops, rel=1e-12)
