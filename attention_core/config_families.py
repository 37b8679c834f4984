"""Which config.json fields each model family spells its figures with, and what applies when
a Hub config leaves one out or writes null.

Plain JSON-able data (dicts, lists, strings, numbers, booleans, None) and nothing else, so a
JavaScript port can embed the very table: `json.dumps(FAMILIES)`. costs.py interprets it.

A *rule* says how one figure is read:

    {"names": [field, ...],   tried in order; the first the config holds, even as null, is read;
                              "a.b" reads field b of the object in field a
     "default": DEFAULT,      used when no name is held or the one held is null; a rule without
                              "default" makes the figure required (a clear error names it)
     "cases": [{"if": flag, "if_absent": bool, "then": RULE}, ...]}
                              the first case whose boolean flag is true (absent or null: if_absent)
                              is read with its own RULE instead; none true: this rule

A DEFAULT is one of:

    {"value": v}                                   v itself (null: not known)
    {"same_as": figure}                            an earlier figure
    {"times": k, "of": figure}                     k x an earlier figure
    {"divide": figure, "by": figure}               their quotient, which must be exact
    {"ratio_field": f, "ratio_default": r, "of": figure}
                                                   the number in field f (or r when absent or
                                                   null) x an earlier figure, rounded down

Figures are read in FIGURES' order, so a default may use only a figure before it. Flags
("if") and ratio fields are top-level fields of the config.

A family's *row*: {"mlp_matrices": 2 | 3, "tied": bool | None, "learned_positions": bool,
"figures": {figure: RULE, ...}, "window": WINDOW}. "figures" replaces BASE's rule for the
figures it names; "tied" is the tie_word_embeddings default (None: not known, assumed untied
and said so); "window" says how a sliding (local) window is recorded:

    {"names": [...], "default": {"value": v}}      the window's width: the first name held, else
                                                   v (null: no window)
    "layer_pattern": "attention_types"             GPT-Neo: [[["global", "local"], 12]] lists the
                                                   layers; "local" ones slide
    "layer_pattern_default": [...]                 the list when the config has none
    "alternate": true                              Gemma 2: sliding, full, sliding, ...
    "pattern_default": p                           Gemma 3: every p-th layer full when the config
                                                   has no sliding_window_pattern

A default is in a row only where a published config relies on it (GPT-J's n_inner: null,
Falcon's absent MLP width, Gemma 3 4B's absent head counts); a size a config simply forgot is
an error, since a class default guessed for it would be a confident wrong answer.
"""

FIGURES = ["layers", "hidden", "heads", "kv_heads", "head_dim", "intermediate", "vocab",
           "max_positions"]

# What every family reads unless its row says otherwise (and what an unknown family reads).
BASE = {
    "layers": {"names": ["num_hidden_layers", "n_layer"]},
    "hidden": {"names": ["hidden_size", "n_embd"]},
    "heads": {"names": ["num_attention_heads", "n_head"]},
    "kv_heads": {"names": ["num_key_value_heads"], "default": {"same_as": "heads"}},
    "head_dim": {"names": ["head_dim"], "default": {"divide": "hidden", "by": "heads"}},
    "intermediate": {"names": ["intermediate_size", "n_inner"]},
    "vocab": {"names": ["vocab_size"]},
    "max_positions": {"names": ["max_position_embeddings", "n_positions", "n_ctx"],
                      "default": {"value": None}},
}
BASE_WINDOW = {"names": ["sliding_window"], "default": {"value": None}}

FOUR_X = {"times": 4, "of": "hidden"}  # the classic MLP: four times the model's width


def _row(mlp_matrices, tied, learned_positions=False, figures=None, window=None):
    row = {"mlp_matrices": mlp_matrices, "tied": tied, "learned_positions": learned_positions,
           "figures": figures or {}}
    if window is not None:
        row["window"] = window
    return row


def _gated(tied=False, figures=None, window=None):  # gate, up and down: SwiGLU / GeGLU
    return _row(3, tied, figures=figures, window=window)


def _plain(tied, learned_positions=False, figures=None, window=None):  # up and down only
    return _row(2, tied, learned_positions, figures, window)


# GPT-2 and GPT-J: n_inner null (or absent) is 4 x n_embd.
_N_INNER = {"intermediate": {"names": ["n_inner"], "default": FOUR_X},
            "max_positions": {"names": ["n_positions", "n_ctx"], "default": {"value": None}}}

# Falcon: multi_query (true unless set) means one KV head; the new decoder architecture
# (40B, 180B) reads num_kv_heads; otherwise every query head has its own.
_FALCON = {
    "layers": {"names": ["num_hidden_layers", "n_layer"]},
    "hidden": {"names": ["hidden_size", "n_embed"]},
    "heads": {"names": ["num_attention_heads", "n_head"]},
    "kv_heads": {"names": [], "default": {"same_as": "heads"}, "cases": [
        {"if": "new_decoder_architecture", "if_absent": False,
         "then": {"names": ["num_kv_heads", "n_head_kv"], "default": {"same_as": "heads"}}},
        {"if": "multi_query", "if_absent": True, "then": {"names": [], "default": {"value": 1}}},
    ]},
    "intermediate": {"names": ["ffn_hidden_size"], "default": FOUR_X},
    "max_positions": {"names": ["max_position_embeddings"], "default": {"value": 2048}},
}
# The first Falcon-40B upload (model_type RefinedWeb): always the grouped layout, n_head_kv.
_REFINED_WEB = {**_FALCON, "kv_heads": {"names": ["n_head_kv", "num_kv_heads"],
                                        "default": {"same_as": "heads"}}}

# Gemma 3 4B's text_config leaves out the head counts, head width and vocabulary: these are
# Gemma3TextConfig's defaults, which the published file relies on.
_GEMMA3 = _gated(tied=True, figures={
    "heads": {"names": ["num_attention_heads"], "default": {"value": 8}},
    "kv_heads": {"names": ["num_key_value_heads"], "default": {"value": 4}},
    "head_dim": {"names": ["head_dim"], "default": {"value": 256}},
    "vocab": {"names": ["vocab_size"], "default": {"value": 262208}},
}, window={**BASE_WINDOW, "pattern_default": 6})

FAMILIES = {
    # --- gated MLPs (gate, up, down) ---
    "llama": _gated(),
    "mistral": _gated(),
    "ministral": _gated(),
    "mixtral": _gated(),
    "qwen2": _gated(),
    "qwen3": _gated(),
    "qwen2_moe": _gated(),
    "qwen3_moe": _gated(),
    "phi3": _gated(),
    "olmo": _gated(),
    "olmo2": _gated(),
    "deepseek_v2": _gated(),
    "deepseek_v3": _gated(),
    "gemma": _gated(tied=True),
    "gemma2": _gated(tied=True, window={**BASE_WINDOW, "alternate": True}),
    "gemma3_text": _GEMMA3,
    "gemma3": _GEMMA3,  # a multimodal config whose text_config names no model_type
    "granite": _gated(tied=None),
    "cohere": _gated(tied=None),
    "internlm2": _gated(tied=None),
    "yi": _gated(tied=None),
    "smollm3": _gated(tied=None),
    "glm": _gated(tied=None),
    "glm4": _gated(tied=None),
    # --- two-matrix MLPs (up, down) ---
    "gpt2": _plain(True, learned_positions=True, figures=_N_INNER),
    "gptj": _plain(False, figures=_N_INNER),
    # GPT-Neo: num_layers / num_heads; intermediate_size null is 4 x hidden; every other
    # layer attends only to the last window_size (256) tokens.
    "gpt_neo": _plain(True, learned_positions=True, figures={
        "layers": {"names": ["num_layers"]},
        "heads": {"names": ["num_heads"]},
        "intermediate": {"names": ["intermediate_size"], "default": FOUR_X},
        "max_positions": {"names": ["max_position_embeddings"], "default": {"value": 2048}},
    }, window={"names": ["window_size"], "default": {"value": 256},
               "layer_pattern": "attention_types",
               "layer_pattern_default": [[["global", "local"], 12]]}),
    "gpt_neox": _plain(False),
    "opt": _plain(True, learned_positions=True, figures={
        "intermediate": {"names": ["ffn_dim"]},
        "max_positions": {"names": ["max_position_embeddings"], "default": {"value": 2048}},
    }),
    "falcon": _plain(True, figures=_FALCON),
    "RefinedWebModel": _plain(True, figures=_FALCON),
    "RefinedWeb": _plain(True, figures=_REFINED_WEB),
    # BLOOM: ALiBi (no position table, no maximum), MLP 4 x hidden; its n_inner is unused.
    "bloom": _plain(True, figures={
        "layers": {"names": ["n_layer", "num_hidden_layers"]},
        "hidden": {"names": ["hidden_size", "n_embed"]},
        "heads": {"names": ["n_head", "num_attention_heads"]},
        "intermediate": {"names": [], "default": FOUR_X},
        "max_positions": {"names": [], "default": {"value": None}},
    }),
    # MPT: its own names; MLP expansion_ratio x d_model; GQA only in llm-foundry's attn_config.
    "mpt": _plain(True, figures={
        "layers": {"names": ["n_layers"]},
        "hidden": {"names": ["d_model"]},
        "heads": {"names": ["n_heads"]},
        "kv_heads": {"names": ["attn_config.kv_n_heads"], "default": {"same_as": "heads"}},
        "intermediate": {"names": [], "default": {"ratio_field": "expansion_ratio",
                                                  "ratio_default": 4, "of": "hidden"}},
        "max_positions": {"names": ["max_seq_len"], "default": {"value": 2048}},
    }),
    "gpt_bigcode": _plain(True, learned_positions=True),
    "phi": _plain(False),
    "starcoder2": _plain(True),
    "codegen": _plain(False),
    "bert": _plain(True, learned_positions=True),
    "roberta": _plain(True, learned_positions=True),
}

# A config with no model_type but GPT-2's n_embd is read as GPT-2; anything else unknown
# reads BASE, with a gated MLP and untied embeddings assumed and said so.
UNKNOWN = _row(None, None)
GPT2_HINT = "n_embd"


def family(model_type: str, cfg: dict) -> tuple[str, dict]:  # -> (row's key or "", row)
    if model_type in FAMILIES:
        return model_type, FAMILIES[model_type]
    if not model_type and GPT2_HINT in cfg:
        return "gpt2", FAMILIES["gpt2"]
    return "", UNKNOWN


def rule(row: dict, figure: str) -> dict:  # a row's rule for a figure, else BASE's
    return row["figures"].get(figure, BASE[figure])


def window_rule(row: dict) -> dict:
    return row.get("window", BASE_WINDOW)
