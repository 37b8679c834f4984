"""The command line: the claims ledger and the costs command."""

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from app.hosting import cli
from attention_core import claims

CONFIGS = Path(__file__).parent / "fixtures" / "configs"


def run(*args, stdin=None):
    return subprocess.run([sys.executable, "-m", "app.hosting.cli", *args], capture_output=True,
                          text=True, timeout=120, check=False, input=stdin)


def strict_json(text):  # exactly one JSON object, no NaN or Infinity, or an error
    def refuse(token):
        raise ValueError(f"{token} is not JSON")
    data = json.loads(text, parse_constant=refuse)
    assert isinstance(data, dict)
    return data


def test_every_claim_matches():
    rows = claims.all_claims()
    bad = [c.what for c in rows if not c.ok]
    assert not bad, bad
    assert len(rows) >= 70


def test_ledger_marks_a_disagreement():
    bad = claims.rounds_to("x", "deliberately wrong", "0.78", 0.7696, 0.78, 2)
    assert not bad.ok and "✗" in claims.table([bad]) and "1 disagree" in claims.table([bad])


def test_numbers_command_exits_0_and_prints_the_table():
    out = run("numbers")
    assert out.returncode == 0, out.stdout + out.stderr
    assert "51,324" in out.stdout and "✗" not in out.stdout


def test_numbers_exits_1_when_a_claim_fails(monkeypatch, capsys):
    wrong = claims.exactly("x", "wrong on purpose", "1", 2, 1)
    monkeypatch.setattr(claims, "all_claims", lambda: [wrong])
    assert cli.main(["numbers"]) == 1
    assert "✗" in capsys.readouterr().out


@pytest.mark.parametrize("model, prompt, key, expected, digits", [
    ("qwen3-8b", 4096, "prefill_attention_share", 0.074, 3),
    ("qwen3-8b", 256, "decode_attention_share", 0.0099, 4),
    ("qwen3-8b", 4096, "crossover_tokens", 51324, None),
    ("gpt2", 1024, "crossover_tokens", 13404, None),
    ("qwen3-8b", 4096, "pair_flops", 589824, None),
    ("llama-3-8b", 4096, "kv_bytes_per_token", 131072, None),
    ("llama-3-8b", 4096, "decode_arithmetic_intensity", 4, 0),
])
def test_costs_json(model, prompt, key, expected, digits):
    out = run("costs", "--model", model, "--prompt", str(prompt), "--json")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    value = data[key]
    assert (int(value) if digits is None else round(value, digits)) == expected
    for share in ("prefill_attention_share", "decode_attention_share"):
        assert 0 <= data[share] <= 1


def test_costs_naive_kernel_halves_the_crossover():
    data = json.loads(run("costs", "--model", "qwen3-8b", "--prompt", "4096", "--kernel", "naive",
                          "--json").stdout)
    assert int(data["crossover_tokens"]) == 25662


def test_costs_from_config_file(tmp_path):
    cfg = tmp_path / "config.json"
    cfg.write_text(json.dumps({"n_layer": 12, "n_head": 12, "n_embd": 768, "n_inner": None,
                               "vocab_size": 50257, "n_positions": 1024, "model_type": "gpt2"}))
    out = run("costs", "--config", str(cfg), "--prompt", "1024")
    assert out.returncode == 0, out.stderr
    assert "13,404" in out.stdout and "7.1" in out.stdout


@pytest.mark.parametrize("content, field", [
    ("{not json", "config.json"),
    ("[1, 2]", "config.json"),
    (('{"num_hidden_layers": -3, "hidden_size": 4096, "num_attention_heads": 32,'
      ' "intermediate_size": 11008, "vocab_size": 32000}'), "num_hidden_layers"),
])
def test_costs_bad_config_is_one_line_exit_2(tmp_path, content, field):
    cfg = tmp_path / "config.json"
    cfg.write_text(content)
    out = run("costs", "--config", str(cfg), "--prompt", "10")
    assert out.returncode == 2
    assert out.stderr.count("\n") == 1 and field in out.stderr and "Traceback" not in out.stderr


def test_costs_missing_file_and_bad_prompt():
    out = run("costs", "--config", "/nonexistent/config.json", "--prompt", "10")
    assert out.returncode == 2 and "cannot read" in out.stderr
    out = run("costs", "--model", "gpt2", "--prompt", "-5")
    assert out.returncode == 2 and "Traceback" not in out.stderr
    out = run("costs", "--model", "gpt5", "--prompt", "5")
    assert out.returncode == 2


# --- a Unix tool: stdin, a model's folder, the dtypes, one JSON object ---------------------

def costs_json(*args, stdin=None):
    out = run("costs", *args, "--json", stdin=stdin)
    assert out.returncode == 0, out.stderr
    return strict_json(out.stdout)


def test_config_from_stdin():
    text = (CONFIGS / "opt-13b.json").read_text()
    data = costs_json("--config", "-", "--prompt", "10", stdin=text)
    assert data["model"] == "facebook/opt-13b"  # stdin has no file name: the config's own
    assert data["shape"]["layers"] == 40  # OPT paper, Table 1: 13B has 40 layers


def test_config_from_a_models_folder(tmp_path):
    shutil.copy(CONFIGS / "falcon-7b.json", tmp_path / "config.json")
    data = costs_json("--config", str(tmp_path), "--prompt", "10")
    assert data["shape"]["kv_heads"] == 1  # Falcon-7B card: multiquery attention
    out = run("costs", "--config", str(tmp_path / "empty"), "--prompt", "10")
    assert out.returncode == 2 and "cannot read" in out.stderr


@pytest.mark.parametrize("name", ["opt-13b", "falcon-7b", "bloom-560m", "gpt-j-6b"])
def test_the_configs_that_used_to_exit_2_are_read(name):
    out = run("costs", "--config", str(CONFIGS / f"{name}.json"), "--prompt", "2048")
    assert out.returncode == 0, out.stderr
    assert "KV bytes per token (bf16)" in out.stdout


def test_kv_dtype_matches_published_bytes_per_token():
    # Scaling Book, inference chapter: LLaMA-3-70B, 327,680 B per token in bf16, 163,840 in int8
    llama = str(CONFIGS / "llama-3-70b.json")
    assert costs_json("--config", llama, "--prompt", "10")["kv_bytes_per_token"] == 327_680
    int8 = costs_json("--config", llama, "--prompt", "10", "--kv-dtype", "int8")
    assert (int8["kv_dtype"], int8["kv_bytes_per_value"]) == ("int8", 1)
    assert int8["kv_bytes_per_token"] == 163_840
    assert int8["kv_bytes_per_user"] == 163_840 * 10  # ten tokens of context
    assert int8["weight_dtype"] == "bf16"  # the weights keep theirs
    # vLLM paper (Kwon et al. 2023): OPT-13B, 800 KB per token in fp16
    opt = costs_json("--config", str(CONFIGS / "opt-13b.json"), "--prompt", "10",
                     "--kv-dtype", "fp16")
    assert opt["kv_bytes_per_token"] == 819_200


def test_weight_dtype_halves_the_weights_and_the_point_the_cache_catches_up():
    bf16 = costs_json("--model", "llama-3-8b", "--prompt", "4096")
    int8 = costs_json("--model", "llama-3-8b", "--prompt", "4096", "--weight-dtype", "int8")
    assert int8["weight_bytes"] * 2 == bf16["weight_bytes"]
    assert int8["kv_bytes_per_token"] == bf16["kv_bytes_per_token"] == 131_072  # cache: bf16
    assert int8["kv_outweighs_weights_context"] == pytest.approx(
        bf16["kv_outweighs_weights_context"] / 2)
    # the step reads half the weight bytes for the same FLOPs (the cache is 3% of them here)
    ratio = int8["decode_step_arithmetic_intensity"] / bf16["decode_step_arithmetic_intensity"]
    assert 1.9 < ratio < 2


def test_default_dtypes_keep_every_number_and_json_is_one_object_with_the_new_fields():
    data = costs_json("--model", "llama-3-8b", "--prompt", "4096")
    assert (data["kv_dtype"], data["weight_dtype"]) == ("bf16", "bf16")
    assert data["kv_bytes_per_token"] == 131_072  # the document's 128 KB
    assert round(data["decode_arithmetic_intensity"]) == 4  # the document's ~4 FLOP/B
    assert round(data["kv_cache_bytes"] / 1e9, 2) == 0.54  # the document's ~0.5 GB
    assert data["kv_bytes_per_user"] == data["kv_cache_bytes"]
    assert round(data["weight_bytes"] / 1e9) == 16  # the document's ~16 GB
    assert 118_000 <= data["kv_outweighs_weights_context"] <= 125_000  # "~120k tokens"
    assert data["shape"]["kv_heads"] == 8 and data["shape"]["head_dim"] == 128


def test_a_window_that_caps_the_cache_is_null_not_infinity():
    data = costs_json("--config", str(CONFIGS / "mistral-7b-v0.1.json"), "--prompt", "10")
    assert data["kv_outweighs_weights_context"] is None
    assert data["crossover_tokens"] is None


@pytest.mark.parametrize("stdin, words", [
    ("{not json", "config.json: is not valid JSON"),
    ("", "config.json: is empty"),
    (json.dumps({"model_type": "opt", "num_hidden_layers": 2, "hidden_size": 8,
                 "num_attention_heads": 2, "vocab_size": 10}), "ffn_dim: is missing"),
    ('{"model_type": "mpt", "d_model": 8, "n_heads": 2, "vocab_size": 10}',
     "n_layers: is missing"),
])
def test_bad_stdin_is_one_line_exit_2(stdin, words):
    out = run("costs", "--config", "-", "--prompt", "10", stdin=stdin)
    assert out.returncode == 2 and out.stdout == ""
    assert out.stderr.count("\n") == 1 and words in out.stderr, out.stderr


def test_bad_dtype_is_exit_2():
    out = run("costs", "--model", "gpt2", "--prompt", "10", "--kv-dtype", "fp4")
    assert out.returncode == 2 and "bf16" in out.stderr and "Traceback" not in out.stderr


def test_a_reader_that_leaves_early_gets_no_traceback():
    proc = subprocess.Popen([sys.executable, "-m", "app.hosting.cli", "costs", "--model",
                             "gpt2", "--prompt", "10", "--json"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    proc.stdout.close()  # like `| head -c 0`: gone before the first write
    _, err = proc.communicate(timeout=120)
    assert b"Traceback" not in err and proc.returncode == 0
