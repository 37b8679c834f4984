"""The KV cache as a server holds it (attention_core.paged): block tables, free blocks and
reference counts after a scripted story and over random ones, and how many blocks fit, against
hand-worked values and vLLM's own arithmetic copied here as data."""

import random

import pytest

from attention_core import paged


def test_a_scripted_story_of_arrivals_growth_a_fork_and_frees():
    pool = paged.BlockPool(num_blocks=10, block_size=4)
    pool.add("system", 10)  # a 10-token system prompt: blocks 0, 1 full, block 2 half
    assert pool.tables["system"] == [0, 1, 2] and pool.empty_slots("system") == 2
    # a user shares the prompt's two full blocks and takes its own for the rest: 10 + 5 tokens
    pool.add("alice", 15, prefix_of="system", shared=10)
    assert pool.tables["alice"] == [0, 1, 3, 4]
    assert pool.refs[:5] == [2, 2, 1, 1, 1] and pool.free == [5, 6, 7, 8, 9]
    pool.append("alice", 2)  # tokens 16 and 17: block 4 fills, then block 5
    assert pool.tables["alice"] == [0, 1, 3, 4, 5] and pool.lengths["alice"] == 17
    pool.fork("alice", "alice-2")  # a second sample: every block held twice, nothing copied
    assert pool.tables["alice-2"] == pool.tables["alice"]
    assert [pool.refs[b] for b in (0, 1, 3, 4, 5)] == [3, 3, 2, 2, 2] and pool.copies == 0
    pool.append("alice-2")  # it writes into shared block 5, partly filled: copy-on-write
    assert pool.tables["alice-2"] == [0, 1, 3, 4, 6] and pool.copies == 1
    assert pool.refs[5] == 1 and pool.refs[6] == 1
    pool.release("alice")
    assert pool.refs[:7] == [2, 2, 1, 1, 1, 0, 1] and pool.free == [7, 8, 9, 5]
    pool.release("alice-2")
    pool.release("system")
    assert pool.used() == 0 and sorted(pool.free) == list(range(10)) and pool.refs == [0] * 10


def test_running_out_of_blocks_says_so_and_changes_nothing():
    pool = paged.BlockPool(num_blocks=3, block_size=16)
    pool.add("a", 33)  # 3 blocks
    with pytest.raises(paged.OutOfBlocks, match="needs 1 blocks; 0 are free"):
        pool.add("b", 1)
    assert "b" not in pool.tables and pool.used() == 3
    with pytest.raises(paged.OutOfBlocks, match="all 3 blocks are in use"):
        pool.append("a", 16)
    with pytest.raises(ValueError, match="already holds"):
        pool.add("a", 1)


def invariants(pool):  # -> [what is wrong]: counts match the tables, free means unreferenced
    held = [0] * pool.num_blocks
    for table in pool.tables.values():
        for block in table:
            held[block] += 1
    problems = []
    if held != pool.refs:
        problems.append(f"refs {pool.refs} against tables {held}")
    if sorted(pool.free) != [b for b in range(pool.num_blocks) if held[b] == 0]:
        problems.append(f"free {sorted(pool.free)}")
    if len(set(pool.free)) != len(pool.free):
        problems.append("a block is free twice")
    for seq, table in pool.tables.items():
        if len(table) != pool.blocks_needed(pool.lengths[seq]):
            problems.append(f"{seq} holds {len(table)} blocks for {pool.lengths[seq]} tokens")
        if not 0 <= pool.empty_slots(seq) < pool.block_size:
            problems.append(f"{seq} wastes {pool.empty_slots(seq)} slots")
    return problems


@pytest.mark.parametrize("seed", range(40))
def test_random_stories_leak_nothing_and_free_nothing_twice(seed):
    rng = random.Random(seed)
    pool = paged.BlockPool(num_blocks=rng.randint(4, 40), block_size=rng.choice([1, 2, 4, 16]))
    names = 0
    for _ in range(200):
        live = list(pool.tables)
        move = rng.choice(["add", "share", "append", "fork", "release"])
        try:
            if move == "add" or not live:
                pool.add(names, rng.randint(1, 3 * pool.block_size))
                names += 1
            elif move == "share":
                parent = rng.choice(live)
                pool.add(names, pool.lengths[parent] + rng.randint(0, 9), prefix_of=parent,
                         shared=rng.randint(0, pool.lengths[parent]))
                names += 1
            elif move == "append":
                pool.append(rng.choice(live), rng.randint(1, pool.block_size + 1))
            elif move == "fork":
                pool.fork(rng.choice(live), names)
                names += 1
            else:
                pool.release(rng.choice(live))
        except paged.OutOfBlocks:
            pass  # a full pool may refuse, but must stay whole
        assert invariants(pool) == [], (seed, move)
    for seq in list(pool.tables):
        pool.release(seq)
    assert pool.used() == 0 and sorted(pool.free) == list(range(pool.num_blocks))


def test_the_invariants_catch_a_leak_and_a_double_free():  # the property test can fail
    pool = paged.BlockPool(num_blocks=4, block_size=2)
    pool.add("a", 3)
    pool.refs[0] += 1  # a count the tables do not explain
    assert invariants(pool)
    pool.refs[0] -= 1
    pool.free.append(pool.free[0])  # a block given out twice
    assert invariants(pool)


# --- how many blocks fit ----------------------------------------------------------------------

# vLLM v1's arithmetic, copied here as data from vllm-project/vllm as read in its repository:
#   vllm/v1/kv_cache_interface.py, AttentionSpec.real_page_size_bytes (main at commit
#   001cabc1be16, 2026):
#       2 * self.block_size * self.num_kv_heads * self.head_size * get_dtype_size(self.dtype)
#   vllm/v1/core/kv_cache_utils.py, get_num_blocks (commit bbf906a88ba1):
#       num_blocks = int(available_memory // page_size // num_layers); max(num_blocks, 0)
#   vllm/v1/worker/gpu_worker.py, determine_available_memory:
#       available_kv_cache_memory_bytes = self.requested_memory - non_kv_cache_memory
#       (requested: total memory × gpu_memory_utilization; not cache: the weights, the profiled
#       activation peak, non-torch memory, and in newer releases a CUDA-graph estimate)
#   the log line "GPU KV cache size: {num_tokens:,} tokens", num_tokens = num_blocks * block_size
VLLM_PAGE = "2 * block_size * num_kv_heads * head_size * dtype_size"
VLLM_BLOCKS = "max(int(available_memory // page_size // num_layers), 0)"

GIB = 1 << 30
# two models on two GPUs: (name, layers, kv heads, head_dim, weight bytes), (GPU, bytes)
MODELS = [("Llama-3-8B", 32, 8, 128, 16_060_522_496), ("Qwen3-8B", 36, 8, 128, 16_381_470_720)]
GPUS = [("H100 80GB", 80 * GIB), ("L4 24GB", 24 * GIB)]


@pytest.mark.parametrize("model", MODELS, ids=lambda m: m[0])
@pytest.mark.parametrize("gpu", GPUS, ids=lambda g: g[0])
def test_blocks_that_fit_follow_vllms_arithmetic(model, gpu):
    _, layers, kv_heads, head_dim, weights = model
    total = gpu[1]
    page = paged.page_size_bytes(16, kv_heads, head_dim, 2)
    assert page == eval(VLLM_PAGE, {}, {"block_size": 16, "num_kv_heads": kv_heads,
                                        "head_size": head_dim, "dtype_size": 2})
    available = paged.available_kv_memory(total, 0.9, weights, 2 * GIB)
    assert available == total * 0.9 - (weights + 2 * GIB)
    blocks = paged.num_blocks(available, page, layers)
    assert blocks == eval(VLLM_BLOCKS, {}, {"available_memory": available, "page_size": page,
                                            "num_layers": layers})
    assert paged.logged_tokens(blocks, 16) == blocks * 16


def test_hand_worked_blocks_for_two_models_on_two_gpus():
    # Llama-3-8B: a block of one layer is 2 × 16 × 8 × 128 × 2 = 65,536 bytes. On an H100 80GB
    # at 0.9: 0.9 × 85,899,345,920 = 77,309,411,328; less 16,060,522,496 of weights and
    # 2 GiB of activations: 59,101,405,184; ÷ 65,536 ÷ 32 = 28,181.7 -> 28,181 blocks,
    # 450,896 token slots, 22.0 requests of 20,480 tokens (1,280 blocks each)
    page = paged.page_size_bytes(16, 8, 128, 2)
    assert page == 65_536
    available = paged.available_kv_memory(80 * GIB, 0.9, 16_060_522_496, 2 * GIB)
    assert available == 59_101_405_184
    blocks = paged.num_blocks(available, page, 32)
    assert blocks == 28_181 and paged.logged_tokens(blocks, 16) == 450_896
    assert paged.max_concurrency(blocks, 16, 20_480) == pytest.approx(28_181 / 1_280)
    # Qwen3-8B (36 layers) on an L4 24GB at 0.9: 23,192,823,398.4 − 16,381,470,720 −
    # 2,147,483,648 = 4,663,869,030.4; ÷ 65,536 ÷ 36 = 1,976.8 -> 1,976 blocks, 31,616 slots
    available = paged.available_kv_memory(24 * GIB, 0.9, 16_381_470_720, 2 * GIB)
    assert paged.num_blocks(available, 65_536, 36) == 1_976
    assert paged.logged_tokens(1_976, 16) == 31_616
    # too little memory: no blocks, never a negative count
    assert paged.num_blocks(paged.available_kv_memory(16 * GIB, 0.9, 16e9, 2 * GIB),
                            65_536, 32) == 0


def test_the_logged_tokens_are_slots_that_real_sequences_never_all_fill():
    # 4 requests of 20 tokens in blocks of 16 hold 8 blocks, 128 slots, for 80 tokens
    pool = paged.BlockPool(num_blocks=8, block_size=16)
    for seq in range(4):
        pool.add(seq, 20)
    assert pool.used() == 8 and paged.logged_tokens(8, 16) == 128
    assert sum(pool.empty_slots(s) for s in range(4)) == 4 * 12 == 128 - 80
    with pytest.raises(paged.OutOfBlocks):
        pool.add(4, 1)  # "128 tokens" of cache, 80 used, and not one more request fits
