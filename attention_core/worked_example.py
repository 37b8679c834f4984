"""The worked example: "the cat sat on the mat and purred", one d_k = 5 head.

Each word is a fixed 8-dimensional vector and three fixed matrices project it into a
query, a key and a value. There is no positional encoding, so the two "the" rows are
identical whenever both see the same keys (that is, with the mask off).
"""

import numpy as np

from . import head
from .worked_example_constants import EMBEDDINGS, W_K, W_Q, W_V, WORDS

MIN_LENGTH, MAX_LENGTH = 1, len(WORDS)
D_MODEL = len(next(iter(EMBEDDINGS.values())))
W_QUERY, W_KEY, W_VALUE = (np.array(w, dtype=np.float64) for w in (W_Q, W_K, W_V))
D_K = W_KEY.shape[1]


def tokens(n):  # int -> the first n words
    if not MIN_LENGTH <= n <= MAX_LENGTH:
        raise ValueError(f"sequence length must be in {MIN_LENGTH}..{MAX_LENGTH}, got {n}")
    return WORDS[:n]


def embeddings(n):  # int -> [n, d_model]
    return np.array([EMBEDDINGS[w] for w in tokens(n)], dtype=np.float64)


def run(n=6, *, causal=True, scaled=True, phase="prefill", exact=True):  # -> head.HeadResult
    return head.attention_head(embeddings(n), W_QUERY, W_KEY, W_VALUE, causal=causal,
                               scaled=scaled, phase=phase, exact=exact)


def truncate(n, position, *, causal=True, scaled=True, exact=True):  # -> head.TruncateCheck
    return head.truncate_check(embeddings(n), W_QUERY, W_KEY, W_VALUE, position,
                               causal=causal, scaled=scaled, exact=exact)
