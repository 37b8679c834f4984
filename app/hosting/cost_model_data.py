"""The data static/cost_model.js interprets, taken from the Python core: one source of truth.

`table()` gathers config_families' table (FIGURES, BASE, BASE_WINDOW, FAMILIES, UNKNOWN,
GPT2_HINT) and costs.py's constants (the caps, the dtypes, the presets, the GPUs) into one
JSON-able dict; `table_json()` is its text and `table_script()` a classic script that hands it
to the page (`AE.costModel.receive`), for `AE.costModel.create(AE.costModel.table)`. Nothing
here is typed twice: every value is read from attention_core at call time.

It also carries two facts about Python's own strings that the JavaScript cannot ask its
engine for without risking a different Unicode version: which code points `str.isspace()`
holds (what `str.strip()` removes) and which `str.isprintable()` refuses (what `repr()`
escapes), as runs [gap from the previous run's end, length], so a message that quotes a
model_type is worded the same in both languages.
"""

from __future__ import annotations

import functools
import json
import sys

from attention_core import config_families, costs


def _runs(pred) -> list[int]:  # code points where pred holds -> flat [gap, length, ...]
    out: list[int] = []
    start, last_end = None, 0
    for c in range(sys.maxunicode + 2):
        hit = c <= sys.maxunicode and pred(chr(c))
        if hit and start is None:
            start = c
        elif not hit and start is not None:
            out += [start - last_end, c - start]
            start, last_end = None, c
    return out


@functools.lru_cache(maxsize=1)
def _unicode() -> dict:
    return {"space": _runs(str.isspace), "unprintable": _runs(lambda ch: not ch.isprintable())}


def table() -> dict:  # -> everything cost_model.js reads, as plain JSON-able data
    return {
        "FIGURES": config_families.FIGURES,
        "BASE": config_families.BASE,
        "BASE_WINDOW": config_families.BASE_WINDOW,
        "FAMILIES": config_families.FAMILIES,
        "UNKNOWN": config_families.UNKNOWN,
        "GPT2_HINT": config_families.GPT2_HINT,
        "TRANSFORMERS": config_families.TRANSFORMERS,
        "COUNTS": config_families.COUNTS,
        "TEXT_OF": config_families.DERIVED["text_of"],
        # each Transformers type's class defaults that a type without a row still reads
        "DERIVED_TYPES": {t: {k: v for k, v in e.get("defaults", {}).items()
                              if k in ("tie_word_embeddings", "is_encoder_decoder")}
                          for t, e in config_families.DERIVED["types"].items()},
        # the flag without which a type's causal LM keeps no cache (BERT-likes' is_decoder)
        "CACHES_IF": {t: e["caches_if"] for t, e in config_families.DERIVED["types"].items()
                      if "caches_if" in e},
        # the types whose causal LM returns no cache at all (GPT-1, XLM, XLNet)
        "KEEPS_NO_CACHE": sorted(t for t, e in config_families.DERIVED["types"].items()
                                 if e.get("keeps_no_cache")),
        # each type's class default of the optional fields its row reads
        "FILLS": {t: e["fills"] for t, e in config_families.DERIVED["types"].items()
                  if "fills" in e},
        "OPTIONAL_READS": config_families.OPTIONAL_READS,
        "STATES": config_families.STATES,
        "BNB_BLOCK": costs.BNB_BLOCK,
        "BNB_NESTED_BLOCK": costs.BNB_NESTED_BLOCK,
        "BNB_OFFSET_CHARS": costs.BNB_OFFSET_CHARS,
        "MAX_CONFIG_BYTES": costs.MAX_CONFIG_BYTES,
        "MAX_NESTING": costs.MAX_NESTING,
        "WHOLE_FILE": costs.WHOLE_FILE,
        "LIMITS": costs.LIMITS,
        "MAX_EXPERTS": costs.MAX_EXPERTS,
        "EXPERT_MATRICES": costs.EXPERT_MATRICES,
        "INT_MAX_STR_DIGITS": sys.get_int_max_str_digits(),
        "KERNELS": list(costs.KERNELS),
        "DTYPE_BYTES": costs.DTYPE_BYTES,
        "DEFAULT_DTYPE": costs.DEFAULT_DTYPE,
        # as JSON text, which the JS parses as it parses a pasted file (ints stay ints)
        "PRESETS": {k: json.dumps(v) for k, v in costs.PRESETS.items()},
        "PRESET_NAMES": costs.PRESET_NAMES,
        "GPUS": {k: {"name": g.name, "peak_flops": g.peak_flops, "bandwidth": g.bandwidth}
                 for k, g in costs.GPUS.items()},
        "UNICODE": _unicode(),
    }


def table_json() -> str:  # -> the table as compact JSON text
    return json.dumps(table(), separators=(",", ":"), allow_nan=False)


def table_script() -> str:  # -> a classic script that hands static/cost_model.js the table
    text = table_json().replace("<", "\\u003c")  # no "</script>" can end it early
    return f"AE.costModel.receive({text});\n"  # after static/cost_model.js, in its file
