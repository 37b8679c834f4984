"""The KV cache as a server holds it: fixed blocks of tokens, a block table per sequence, shared
prefixes with reference counts, copy-on-write, and how many blocks fit on a GPU.

`BlockPool` is a paged allocator in the manner of vLLM's (Kwon et al., 2023): the cache is
`num_blocks` blocks of `block_size` token slots; a sequence's block table lists the blocks
holding its tokens in order, its last block partly filled, so at most block_size − 1 slots
of a sequence are empty. Sequences that share a prompt hold its full blocks once, each block
counting the tables that hold it; a sequence about to write into a block another table also
holds first gets a copy of its own (copy-on-write). A freed sequence returns each block whose
count falls to 0.

The sizing follows vLLM's v1 engine: the memory left for the cache is the GPU's memory times
`gpu_memory_utilization` less the weights, the activation peak and other memory the profile
run measured (`Worker.determine_available_memory`; newer releases also hold back a CUDA-graph
estimate); a block of one layer holds
2 × block_size × kv_heads × head_dim × dtype bytes (`AttentionSpec.page_size_bytes`); the
number of blocks is that memory // page size // layers (`kv_cache_utils.get_num_blocks`).
The "GPU KV cache size: N tokens" vLLM logs is num_blocks × block_size: slots, which the
partly filled last blocks of real sequences never all use.
"""

from dataclasses import dataclass, field

VLLM_BLOCK_SIZE = 16  # vLLM's default block_size for CUDA


def blocks_for(tokens, block_size):  # -> blocks that hold `tokens` tokens: ⌈tokens / size⌉
    return -(-tokens // block_size)


class OutOfBlocks(RuntimeError):
    """The pool has no free block for a sequence that needs one."""


@dataclass
class BlockPool:
    num_blocks: int
    block_size: int = VLLM_BLOCK_SIZE
    tables: dict = field(default_factory=dict)  # sequence -> [block ids], in token order
    lengths: dict = field(default_factory=dict)  # sequence -> tokens held
    refs: list = field(default_factory=list)  # block id -> the tables holding it
    free: list = field(default_factory=list)  # block ids, the next one to give out first
    copies: int = 0  # copy-on-write copies made

    def __post_init__(self):
        if self.num_blocks < 1 or self.block_size < 1:
            raise ValueError("a pool needs at least one block of at least one slot")
        self.refs = [0] * self.num_blocks
        self.free = list(range(self.num_blocks))

    def _take(self):  # -> a free block, now held once
        if not self.free:
            raise OutOfBlocks(f"all {self.num_blocks} blocks are in use")
        block = self.free.pop(0)
        self.refs[block] = 1
        return block

    def _release(self, block):
        if self.refs[block] < 1:
            raise RuntimeError(f"block {block} freed twice")
        self.refs[block] -= 1
        if self.refs[block] == 0:
            self.free.append(block)

    def blocks_needed(self, tokens):  # -> blocks for `tokens` tokens in this pool
        return blocks_for(tokens, self.block_size)

    def add(self, seq, tokens, *, prefix_of=None, shared=0):
        # a new sequence of `tokens` tokens; its first `shared` tokens are those of sequence
        # `prefix_of`, whose full blocks it holds too (a partly filled block is not shared)
        if seq in self.tables:
            raise ValueError(f"sequence {seq!r} already holds blocks")
        if prefix_of is not None and not 0 <= shared <= min(tokens, self.lengths[prefix_of]):
            raise ValueError("a shared prefix longer than either sequence")
        full = (shared // self.block_size) if prefix_of is not None else 0
        need = self.blocks_needed(tokens) - full
        if need > len(self.free):
            raise OutOfBlocks(f"sequence {seq!r} needs {need} blocks; {len(self.free)} are free")
        table = list(self.tables[prefix_of][:full]) if full else []
        for block in table:
            self.refs[block] += 1
        table += [self._take() for _ in range(need)]
        self.tables[seq], self.lengths[seq] = table, tokens

    def fork(self, parent, child):  # the child holds every block of the parent (beam search,
        # parallel sampling): nothing copied until one of them writes into a shared block
        if child in self.tables:
            raise ValueError(f"sequence {child!r} already holds blocks")
        self.tables[child] = list(self.tables[parent])
        self.lengths[child] = self.lengths[parent]
        for block in self.tables[child]:
            self.refs[block] += 1

    def append(self, seq, tokens=1):  # decode: the sequence grows by `tokens` tokens
        for _ in range(tokens):
            table, n = self.tables[seq], self.lengths[seq]
            if n % self.block_size == 0:  # the last block is full (or there is none)
                table.append(self._take())
            elif self.refs[table[-1]] > 1:  # writing into a shared block: copy it first
                copy = self._take()
                self._release(table[-1])
                table[-1] = copy
                self.copies += 1
            self.lengths[seq] = n + 1

    def release(self, seq):  # the sequence is done: its blocks go back when no table holds them
        for block in self.tables.pop(seq):
            self._release(block)
        del self.lengths[seq]

    def empty_slots(self, seq):  # -> slots of its last block no token fills: < block_size
        return -self.lengths[seq] % self.block_size

    def used(self):  # -> blocks held by at least one table
        return self.num_blocks - len(self.free)


# --- how many blocks fit: vLLM v1's arithmetic ---------------------------------------------

def page_size_bytes(block_size, kv_heads, head_dim, dtype_bytes):
    # one block of one layer: K and V for block_size tokens (vLLM's AttentionSpec)
    return 2 * block_size * kv_heads * head_dim * dtype_bytes


def available_kv_memory(total, utilization, weights, activation_peak, other=0):
    # bytes left for the cache: the share of the GPU vLLM may use, less what is not cache
    return total * utilization - weights - activation_peak - other


def num_blocks(available, page_size, layers):  # vLLM's get_num_blocks, without an override
    return max(int(available // page_size // layers), 0)


def logged_tokens(blocks, block_size):  # "GPU KV cache size: N tokens": slots, not a promise
    return blocks * block_size


def max_concurrency(blocks, block_size, context):  # requests of `context` tokens at once
    return blocks / blocks_for(context, block_size)


# --- bytes a token's keys and values take, by kind of attention -----------------------------

def kv_bytes(tokens, layers, kv_heads, head_dim, dtype_bytes, *, window=None,
             windowed_layers=0):
    # K and V for `tokens` tokens; `windowed_layers` of the layers keep at most `window` tokens
    # (a sliding window, or a chunk of chunked attention: at most the chunk)
    per_layer = 2 * kv_heads * head_dim * dtype_bytes
    if window is None:
        windowed_layers = 0
    held = min(tokens, window) if window is not None else tokens
    return per_layer * (windowed_layers * held + (layers - windowed_layers) * tokens)


def mla_bytes(tokens, layers, latent, rope_dim, dtype_bytes):
    # multi-head latent attention caches one compressed vector and one rotary key a token
    # and layer, shared by every head (DeepSeek-V2/V3)
    return tokens * layers * (latent + rope_dim) * dtype_bytes


# --- why cache: one decode step with the cache and without it ----------------------------------

def step_flops(weight_flops, pair_flops, context, *, cached=True):
    # FLOPs of the decode step whose new token is the `context`-th: with the cache, the new
    # token's pass (its matmuls) and its query against every key; without one, every token of
    # the context passes through the matmuls again and attends causally, as in a prefill
    if cached:
        return weight_flops + pair_flops * context
    return context * weight_flops + pair_flops * context * (context + 1) // 2


def response_flops(weight_flops, pair_flops, prompt, response, *, cached=True):
    # the decode steps of a response of `response` tokens after `prompt` tokens, summed
    return sum(step_flops(weight_flops, pair_flops, prompt + t, cached=cached)
               for t in range(1, response + 1))
