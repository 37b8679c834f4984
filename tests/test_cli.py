"""The command line: the claims ledger and the costs command."""

import json
import subprocess
import sys

import pytest

from app.hosting import cli
from attention_core import claims


def run(*args):
    return subprocess.run([sys.executable, "-m", "app.hosting.cli", *args], capture_output=True,
                          text=True, timeout=120, check=False)


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
