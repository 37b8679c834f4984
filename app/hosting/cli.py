"""The `attention-explorable` command: numbers (the claims ledger), costs, build, serve."""

import argparse
import json
import math
import os
import sys

EXIT_BAD_INPUT = 2


def numbers(args):
    from attention_core import claims

    rows = claims.all_claims()
    print(claims.table(rows))
    return 0 if all(c.ok for c in rows) else 1


STDIN = "-"


def _config_bytes(path):  # FILE, a folder holding config.json, or - (stdin) -> bytes
    from attention_core import costs

    limit = costs.MAX_CONFIG_BYTES + 1  # one byte over, so the parser can say it is too big
    if path == STDIN:
        return sys.stdin.buffer.read(limit)
    if os.path.isdir(path):  # a model's folder, as downloaded from the Hub
        path = os.path.join(path, "config.json")
    try:
        with open(path, "rb") as f:
            return f.read(limit)
    except OSError as e:
        raise costs.ConfigError("config.json", f"cannot read {path}: {e.strerror}") from None


def load_model(args):  # -> ModelShape, or raises costs.ConfigError
    from attention_core import costs

    if args.config:
        data = _config_bytes(args.config)
        name = None if args.config == STDIN else args.config  # stdin: the config's own name
        return costs.ModelShape.from_config(costs.parse_config_text(data), name=name)
    return costs.preset(args.model)


SHAPE_FIELDS = ("layers", "hidden", "heads", "kv_heads", "head_dim", "v_head_dim",
                "intermediate", "mlp_matrices", "vocab", "tied", "max_positions",
                "sliding_window", "sliding_layers", "num_experts", "experts_per_token", "mla")


def memory_figures(model, context, kv_dtype, weight_dtype):  # -> the dtype-dependent numbers
    from attention_core import costs

    kv_b, w_b = costs.dtype_bytes(kv_dtype), costs.dtype_bytes(weight_dtype)
    return {
        "kv_dtype": kv_dtype,
        "kv_bytes_per_value": kv_b,
        "weight_dtype": weight_dtype,
        "weight_bytes_per_value": w_b,
        "kv_bytes_per_token": int(costs.kv_bytes_per_token(model, kv_b)),
        "kv_bytes_per_user": int(costs.kv_cache_bytes(model, context, bytes_per_value=kv_b)),
        # a hybrid's fixed-size state (Mamba, linear attention), at the cache's dtype
        "state_bytes_per_user": int(costs.state_bytes(model, 1, kv_b)),
        "weight_bytes": int(costs.weight_bytes(model, w_b)),
        "kv_convention": costs.cache_convention(model),
        "weight_convention": costs.weight_convention(model, weight_dtype),
        "kv_outweighs_weights_context": _finite_or_none(costs.kv_outweighs_weights_context(
            model, 1, kv_b, weight_bytes_per_value=w_b)),
    }


def costs_command(args):
    from attention_core import costs

    model = load_model(args)
    n, kernel = args.prompt, args.kernel
    last_context = n + args.generate
    memory = memory_figures(model, last_context, args.kv_dtype, args.weight_dtype)
    kv_b, w_b = memory["kv_bytes_per_value"], memory["weight_bytes_per_value"]
    result = {
        "model": model.name,
        "prompt_tokens": n,
        "generate_tokens": args.generate,
        "kernel": kernel,
        "shape": {key: getattr(model, key) for key in SHAPE_FIELDS},
        "matmul_params": int(costs.matmul_params(model)),
        "total_params": int(costs.total_params(model)),
        "pair_flops": int(costs.pair_flops(model)),
        "prefill_attention_share": float(costs.prefill_attention_share(model, n, kernel)),
        "decode_attention_share": float(costs.decode_attention_share(model, n)),
        "decode_attention_share_last_step": float(
            costs.decode_attention_share(model, last_context)),
        "crossover_tokens": _finite_or_none(costs.crossover_tokens(model, kernel)),
        **memory,
        "kv_cache_bytes": memory["kv_bytes_per_user"],  # the name it had first
        "decode_arithmetic_intensity": float(costs.decode_arithmetic_intensity(model, n, kv_b)),
        "decode_step_arithmetic_intensity": float(costs.decode_step_arithmetic_intensity(
            model, n, kv_bytes_per_value=kv_b, weight_bytes_per_value=w_b)),
        "notes": list(model.notes),
    }
    if args.json:
        print(json.dumps(result, indent=2, allow_nan=False))  # strict JSON, for jq
        return 0
    print_costs(result)
    return 0


def print_costs(result):  # the --json object -> the lines a person reads
    r, n, last = result, result["prompt_tokens"], result["prompt_tokens"] + result[
        "generate_tokens"]
    share, cross = r["crossover_tokens"], r["kv_outweighs_weights_context"]
    print(f"{r['model']}: prompt {n:,} tokens, {r['generate_tokens']:,} generated, "
          f"{r['kernel']} kernel")
    print(f"  matmul parameters            {r['matmul_params']:,}")
    caveats = [n for n in r["notes"] if n.startswith("model_type ")]  # beside what it affects
    for note in caveats:
        print(f"  note: {note}")
    attends = bool(r["pair_flops"])  # Mamba: no layer attends, so these have nothing to say
    none = "none (no layer attends)"
    print(f"  FLOPs per (query, key) pair  {r['pair_flops']:,}" if attends else
          f"  FLOPs per (query, key) pair  {none}")
    print(f"  attention share of prefill   {r['prefill_attention_share']:.2%}" if attends else
          f"  attention share of prefill   {none}")
    print(f"  attention share, decode step {r['decode_attention_share']:.2%}"
          f" (at context {n:,}); {r['decode_attention_share_last_step']:.2%}"
          f" at {last:,}" if attends else f"  attention share, decode step {none}")
    print("  crossover                    "
          + ("never (no layer attends)" if not attends else
             "never (attention never catches up)" if share is None else f"{share:,.0f} tokens"))
    print(f"  KV bytes per token ({r['kv_dtype']})".ljust(31) + f"{r['kv_bytes_per_token']:,} B")
    print(f"  KV cache per user            {r['kv_bytes_per_user']:,} B (at context {last:,})")
    print(f"    {r['kv_convention']}")
    if r["state_bytes_per_user"]:
        print(f"  fixed state per user ({r['kv_dtype']})".ljust(31)
              + f"{r['state_bytes_per_user']:,} B (at any context)")
    print(f"  weights ({r['weight_dtype']})".ljust(31) + f"{r['weight_bytes']:,} B")
    print(f"    {r['weight_convention']}")
    never = ("a window caps the cache" if attends else
             "no layer attends, so there is no KV cache")
    print("  cache outweighs weights at   "
          + (f"never ({never})" if cross is None else f"{cross:,.0f} tokens"))
    print(f"  decode arithmetic intensity  {r['decode_arithmetic_intensity']:.2f} FLOP/B"
          " (attention over the cache)" if attends else
          "  decode arithmetic intensity  none (no attention, no cache to read)")
    print(f"  decode step intensity        {r['decode_step_arithmetic_intensity']:.2f} FLOP/B"
          " (every weight, the cache and any fixed state, one user)")
    for note in r["notes"]:
        if note not in caveats:
            print(f"  note: {note}")


def _finite_or_none(x):
    return float(x) if math.isfinite(x) else None


def live_url_arg(text):  # an http(s) address, or an argparse error
    from urllib.parse import urlsplit

    parts = urlsplit(text.strip())
    unsafe = any(c in text for c in "<>\"' ")
    if parts.scheme not in ("http", "https") or not parts.netloc or unsafe:
        raise argparse.ArgumentTypeError(f"expected an http(s) address, got {text!r}")
    return text.strip().rstrip("/")


def build_site(out, bad_output, failed, **kw):  # -> exit status of building the static site
    # into out; one line on stderr when it cannot (`bad_output` / `failed` start it)
    from app.hosting import build as site

    try:
        site.build(out, log=lambda line: print(line, flush=True), **kw)
    except site.BadOutput as e:
        print(f"{bad_output}{e}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except site.BuildError as e:
        print(f"{failed}{e}", file=sys.stderr)
        return 1
    return 0


def build(args):  # -> exit status; one line on stderr when OUT cannot hold a build
    said = "attention-explorable build: "
    return build_site(args.out, said, said, force=args.force, live_url=args.live_url,
                      site_url=args.site_url)


def serve(args):  # build (or reuse) the static site, then serve it and the live sessions
    from app.hosting import security, static_site
    from app.hosting.options import admin_password, env_list

    try:  # options that cannot work fail before the build, not after it
        for origin in args.embed_origin or env_list("AE_EMBED_ORIGINS"):
            security.parse_origin(origin)
    except security.OriginError as e:
        raise SystemExit(f"attention-explorable serve: --embed-origin: {e}")
    if args.admin:
        admin_password(args)
    status = build_site(static_site.site_dir(), "attention-explorable serve: $AE_BUILD_DIR: ",
                        "attention-explorable serve: building the static pages: ",
                        site_url=getattr(args, "site_url", None))
    if status:
        return status
    from app.hosting import server

    return server.main(args)


def positive_int(text):
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}")
    if not 1 <= value <= 10**8:
        raise argparse.ArgumentTypeError(f"expected 1..100,000,000, got {value}")
    return value


def non_negative_int(text):
    value = positive_int(text) if text.strip() != "0" else 0
    return value


def parser():
    p = argparse.ArgumentParser(
        prog="attention-explorable",
        description="The attention explorable: serve it, or check its numbers.")
    from app.kit.resources import version

    p.add_argument("--version", action="version", version=f"%(prog)s {version()}")
    sub = p.add_subparsers(dest="command", required=True)

    sub.add_parser("numbers", help="the claims ledger: every number the documents quote, "
                                   "recomputed; exits 1 if any disagrees")

    c = sub.add_parser("costs", help="what attention costs in a real model")
    src = c.add_mutually_exclusive_group(required=True)
    src.add_argument("--model", choices=("qwen3-8b", "gpt2", "llama-3-8b"))
    src.add_argument("--config", metavar="FILE",
                     help="a Hugging Face config.json, a folder holding one, or - for stdin")
    c.add_argument("--prompt", type=positive_int, required=True, metavar="N",
                   help="prompt length in tokens")
    c.add_argument("--generate", type=non_negative_int, default=0, metavar="M",
                   help="tokens to generate (default 0)")
    c.add_argument("--kernel", choices=("triangular", "naive"), default="triangular",
                   help="triangular skips masked blocks (n²/2 pairs); naive pays n²")
    dtypes = ("bf16", "fp16", "fp8", "int8", "fp32")  # costs.DTYPE_BYTES, without importing it
    c.add_argument("--kv-dtype", choices=dtypes, default="bf16",
                   help="the KV cache's dtype (default bf16): bytes per token and per user, "
                        "and where the cache outweighs the weights")
    c.add_argument("--weight-dtype", choices=dtypes, default="bf16",
                   help="the weights' dtype (default bf16): their bytes and the decode "
                        "step's arithmetic intensity")
    c.add_argument("--json", action="store_true", help="one JSON object on stdout")

    b = sub.add_parser("build", help="write every page and the scripts and styles it loads as "
                                     "files, for any static host or file://")
    b.add_argument("out", metavar="OUT", help="the folder to write (created if missing)")
    b.add_argument("--force", action="store_true",
                   help="build even when the inputs match the last build in OUT")
    b.add_argument("--live-url", metavar="URL", type=live_url_arg,
                   help="where the pages' 'open in the live explorable' buttons lead, e.g. "
                        "https://explorable.example.edu/live (default: live/ beside the site)")
    b.add_argument("--site-url", metavar="URL", type=live_url_arg,
                   help="the address the site is published at, e.g. "
                        "https://explorable.example.edu/attention: each page then names "
                        "URL + its route (URL/heatmap, ...) as its canonical link and og:url. "
                        "Without it the pages carry no canonical link, since a wrong one is "
                        "worse than none")

    from app.hosting.options import add_serve_arguments

    s = sub.add_parser("serve", help="serve the explorable")
    add_serve_arguments(s)
    s.add_argument("--site-url", metavar="URL", type=live_url_arg,
                   default=os.environ.get("AE_SITE_URL") or None,
                   help="the public address of the site, for each static page's canonical "
                        "link and og:url (URL + the page's route); none without it "
                        "($AE_SITE_URL)")
    return p


def main(argv=None):
    args = parser().parse_args(argv)
    if args.command == "numbers":
        return numbers(args)
    if args.command == "costs":
        from attention_core.costs import ConfigError

        try:
            return costs_command(args)
        except ConfigError as e:
            print(f"attention-explorable costs: {e}", file=sys.stderr)
            return EXIT_BAD_INPUT
        except BrokenPipeError:  # `costs ... | head`: the reader left; no traceback
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            return 0
    if args.command == "build":
        return build(args)
    return serve(args)


if __name__ == "__main__":
    sys.exit(main())
