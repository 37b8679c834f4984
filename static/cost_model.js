/* The cost model in the browser: attention_core/costs.py, line for line, in JavaScript.

   AE.costModel.create(table) -> the parser and every closed form of costs.py, bound to a
   table that Python writes (app/hosting/cost_model_data.py: config_families' FAMILIES, BASE, ...,
   and costs.py's caps, dtypes, presets and GPUs). The table is never typed here; the page
   hands it over with AE.costModel.receive, node as JSON. tests/test_cost_model_js.py runs both on
   thousands of configs and requires the same answers and the same messages.

   Types, one rule: a Python int is a BigInt here and a Python float a Number. So the exact
   counts (parameters, pair FLOPs, matmul FLOPs, weight bytes with an integer dtype size)
   are BigInt and stay exact past 2^53; every function of a length n returns Numbers, as
   costs.py returns floats. bytes_per_value: a BigInt (2n) is Python's int 2, a Number is
   a float. A ModelShape's figures are Numbers: the caps keep each under 10^10, so exact.

   Errors are Error objects whose name is Python's class: "ConfigError" (with .field and
   .problem, the message "field: problem"), "ValueError" (a bad kernel or dtype name).

   Parsed config.json values: objects are Maps (key order and duplicate keys as Python's
   dict keeps them; no prototype keys), integers BigInt, other numbers Numbers.
   A classic script: one global, AE (AE.costModel; its parts meet in AE.costModelParts);
   module.exports in node.

   Three parts, each a classic script: cost_model_text.js (Python's errors and text, and
   the parser), cost_model_families.js (a config read by its family's rules) and this file
   (the closed forms, and create). The build sends them as one file, in that order. */
(function () {
  "use strict";
  const AE = globalThis.AE = globalThis.AE || {};
  const parts = AE.costModelParts;
  if (!parts || !parts.text || !parts.families) {
    throw new Error("load cost_model_text.js and cost_model_families.js before cost_model.js");
  }
  const {PyError, grouped, hasOwn, isInt, parse_config_text, repr} = parts.text;
  const {from_config, preset} = parts.families;

  // what Python's table sets: create() (cost_model.js) binds each part of the model to it
  let T, EXPERT_MATRICES, DTYPE_BYTES, GPUS;

  function bind(table) {
    T = table;
    EXPERT_MATRICES = BigInt(T.EXPERT_MATRICES);
    DTYPE_BYTES = {};
    Object.keys(T.DTYPE_BYTES).forEach(function (k) { DTYPE_BYTES[k] = B(T.DTYPE_BYTES[k]); });
    GPUS = {};
    Object.keys(T.GPUS).forEach(function (k) {
      const g = T.GPUS[k];
      GPUS[k] = Object.freeze({ name: g.name, peak_flops: g.peak_flops, bandwidth: g.bandwidth,
        ridge_point: g.peak_flops / g.bandwidth });
    });
  }

  // --- parameters (exact: BigInt) -------------------------------------------------------

  const B = BigInt;

  function attention_params(m) {
    if (m.mla) return mlaParams(m);
    const q = B(m.hidden) * B(m.heads) * B(m.head_dim);
    const k = B(m.hidden) * B(m.kv_heads) * B(m.head_dim);
    const v = B(m.hidden) * B(m.kv_heads) * B(m.v_head_dim);
    const o = B(m.heads) * B(m.v_head_dim) * B(m.hidden);
    return q + k + v + o;
  }

  function mlaParams(m) {
    const q = m.q_lora_rank === null ? B(m.hidden) * B(m.heads) * B(m.head_dim)
      : B(m.hidden) * B(m.q_lora_rank) + B(m.q_lora_rank) * B(m.heads) * B(m.head_dim);
    const kvA = B(m.hidden) * (B(m.kv_lora_rank) + B(m.qk_rope_head_dim));
    const nope = B(m.head_dim) - B(m.qk_rope_head_dim);
    const kvB = B(m.kv_lora_rank) * B(m.heads) * (nope + B(m.v_head_dim));
    const o = B(m.heads) * B(m.v_head_dim) * B(m.hidden);
    return q + kvA + kvB + o;
  }

  function dense_mlp_params(m) { return B(m.mlp_matrices) * B(m.hidden) * B(m.intermediate); }

  function routerAndShared(m) {
    return B(m.hidden) * B(m.num_experts) + EXPERT_MATRICES * B(m.hidden)
      * B(m.shared_intermediate);
  }

  function moe_active_params(m) {
    return routerAndShared(m) + B(m.experts_per_token) * EXPERT_MATRICES * B(m.hidden)
      * B(m.moe_intermediate);
  }

  function moe_stored_params(m) {
    return routerAndShared(m) + B(m.num_experts) * EXPERT_MATRICES * B(m.hidden)
      * B(m.moe_intermediate);
  }

  function embeddingWidth(m) { // ModelShape.embedding_width: null is hidden
    return m.embedding_width === undefined || m.embedding_width === null ? m.hidden
      : m.embedding_width;
  }

  function lm_head_params(m) { return B(m.vocab) * B(embeddingWidth(m)); }

  function embedding_projection_params(m) { // costs.embedding_projection_params
    const e = embeddingWidth(m);
    return e === m.hidden ? 0n : 2n * B(m.hidden) * B(e);
  }

  function matmul_params(m) {
    return B(m.layers) * attention_params(m) + B(m.dense_layers) * dense_mlp_params(m)
      + B(m.moe_layers) * moe_active_params(m) + B(m.extra_matmul_params)
      + embedding_projection_params(m) + lm_head_params(m);
  }

  function total_params(m) {
    const stack = B(m.layers) * attention_params(m) + B(m.dense_layers) * dense_mlp_params(m)
      + B(m.moe_layers) * moe_stored_params(m);
    let embedding = lm_head_params(m); // the token table: lm_head's shape
    if (m.learned_positions && m.max_positions) embedding += B(m.max_positions) * B(m.hidden);
    const lmHead = m.tied ? 0n : lm_head_params(m);
    return stack + B(m.extra_matmul_params) + embedding_projection_params(m) + embedding
      + lmHead + B(m.small_params);
  }

  // --- vectorised helpers: a Number or an array of them, as numpy broadcasts ------------

  function vec(f) { // f(x, y, ...) on Numbers -> the same over arrays, broadcast
    return function () {
      const args = Array.prototype.slice.call(arguments);
      let n = -1;
      args.forEach(function (a) { if (Array.isArray(a)) n = a.length; });
      if (n < 0) return f.apply(null, args);
      const out = [];
      for (let i = 0; i < n; i++) {
        out.push(f.apply(null, args.map(function (a) { return Array.isArray(a) ? a[i] : a; })));
      }
      return out;
    };
  }

  function num(x) { return Array.isArray(x) ? x.map(Number) : Number(x); } // _lengths

  function checkKernel(kernel) {
    if (T.KERNELS.indexOf(kernel) < 0) {
      throw PyError("ValueError", "kernel must be 'naive' or 'triangular', got "
        + repr(kernel));
    }
  }

  function layerMean(m, full, sliding) {
    const s = m.sliding_layers, a = m.attention_layers; // only called with s > 0, so a > 0
    return ((a - s) * full + s * sliding) / a;
  }

  const share = vec(function (part, rest) {
    const total = part + rest;
    return total > 0 ? part / total : 0;
  });

  // --- prefill ------------------------------------------------------------------------

  function pair_flops(m) {
    return 2n * B(m.attention_layers) * B(m.heads) * (B(m.head_dim) + B(m.v_head_dim));
  }

  function prefill_pairs(m, n, kernel) {
    if (kernel === undefined) kernel = "triangular";
    checkKernel(kernel);
    return vec(function (x) {
      if (kernel === "naive") return x * x;
      const full = x * x / 2;
      if (!m.sliding_layers) return full;
      const w = m.sliding_window, head = Math.min(x, w);
      const band = head * head / 2 + Math.max(x - w, 0) * w;
      return layerMean(m, full, band);
    })(num(n));
  }

  function attention_flops_prefill(m, n, kernel) {
    const pf = Number(pair_flops(m));
    return vec(function (p) { return pf * p; })(prefill_pairs(m, n, kernel));
  }

  function other_flops_prefill(m, n) {
    const rest = 2.0 * Number(matmul_params(m));
    return vec(function (x) { return rest * x; })(num(n));
  }

  function prefill_attention_share(m, n, kernel) {
    return share(attention_flops_prefill(m, n, kernel), other_flops_prefill(m, n));
  }

  // --- decode -------------------------------------------------------------------------

  function decode_pairs(m, n) {
    return vec(function (x) {
      if (!m.sliding_layers) return x;
      return layerMean(m, x, Math.min(x, m.sliding_window));
    })(num(n));
  }

  function attention_flops_decode(m, n) {
    const pf = Number(pair_flops(m));
    return vec(function (p) { return pf * p; })(decode_pairs(m, n));
  }

  function other_flops_decode(m) { return 2n * matmul_params(m); }

  function decode_attention_share(m, n) {
    return share(attention_flops_decode(m, n), Number(other_flops_decode(m)));
  }

  function decode_dot_products(m, n) {
    const lh = m.attention_layers * m.heads;
    return vec(function (p) { return lh * p; })(decode_pairs(m, n));
  }

  function decode_score_flops(m, n) {
    const k = 2.0 * m.head_dim;
    return vec(function (d) { return k * d; })(decode_dot_products(m, n));
  }

  function decode_value_flops(m, n) {
    const k = 2.0 * m.v_head_dim;
    return vec(function (d) { return k * d; })(decode_dot_products(m, n));
  }

  // --- the crossover ------------------------------------------------------------------

  function crossover_tokens(m, kernel) {
    if (kernel === undefined) kernel = "triangular";
    checkKernel(kernel);
    const pf = Number(pair_flops(m)), rest = 2.0 * Number(matmul_params(m));
    if (!pf) return Infinity; // no layer attends
    const unwindowed = kernel === "naive" ? rest / pf : 2 * rest / pf;
    const w = m.sliding_window;
    if (kernel === "naive" || !m.sliding_layers || unwindowed <= w) return unwindowed;
    const s = m.sliding_layers, L = m.attention_layers;
    const a = (L - s) / 2;
    const b = s * w - rest * L / pf;
    const sww = B(s) * B(w) * B(w); // up to 10^24: exact, as Python's int
    const c = Number(-sww) / 2;
    if (a === 0) return b > 0 ? Number(sww) / (2 * b) : Infinity;
    const root = Math.sqrt(b * b - 4 * a * c);
    return b <= 0 ? (-b + root) / (2 * a) : -2 * c / (b + root);
  }

  // --- dtypes -------------------------------------------------------------------------

  // DTYPE_BYTES: the table's, as BigInt (bind)

  function dtype_bytes(name) { // "int8" -> 1n
    if (typeof name !== "string" || !hasOwn(DTYPE_BYTES, name)) {
      throw PyError("ValueError", "dtype must be one of " + Object.keys(DTYPE_BYTES).join(", ")
        + ", got " + repr(name));
    }
    return DTYPE_BYTES[name];
  }

  // --- memory -------------------------------------------------------------------------

  function bpvOr(bpv, fallback) { return bpv === undefined ? fallback : bpv; }

  function kv_bytes_per_token_per_layer(m, bpv) { // BigInt bpv -> BigInt; Number -> Number
    bpv = bpvOr(bpv, 2n);
    const values = m.mla ? m.kv_lora_rank + m.qk_rope_head_dim
      : m.kv_heads * (m.head_dim + m.v_head_dim);
    return isInt(bpv) ? B(values) * bpv : values * bpv;
  }

  function kv_bytes_per_token(m, bpv) {
    const per = kv_bytes_per_token_per_layer(m, bpvOr(bpv, 2n));
    return isInt(per) ? B(m.attention_layers) * per : m.attention_layers * per;
  }

  function kv_cache_bytes(m, context, users, bpv) {
    const perToken = Number(kv_bytes_per_token(m, bpvOr(bpv, 2n)));
    return vec(function (u, t) { return u * perToken * t; })(
      num(users === undefined ? 1 : users), decode_pairs(m, context));
  }

  function state_bytes(m, users, bpv) { // costs.state_bytes: the same at any context
    const per = m.state_layers * m.state_per_layer * Number(bpvOr(bpv, 2n));
    return vec(function (u) { return u * per; })(num(users === undefined ? 1 : users));
  }

  function decode_arithmetic_intensity(m, context, bpv) {
    const ratio = !m.attention_layers ? 0 // no layer attends: no attention, no cache to read
      : Number(pair_flops(m)) / Number(kv_bytes_per_token(m, bpvOr(bpv, 2n)));
    return vec(function () { return ratio; })(num(context));
  }

  function ceilDiv(a, b) { return (a + b - 1n) / b; } // BigInt, a >= 0, b > 0

  function stack_linears(m) { // costs.stack_linears -> [[count, inputs, outputs]] (BigInt)
    const h = m.hidden, L = m.layers;
    let attention, q;
    if (m.mla) {
      const nope = m.head_dim - m.qk_rope_head_dim;
      q = m.q_lora_rank === null ? [[L, h, m.heads * m.head_dim]]
        : [[L, h, m.q_lora_rank], [L, m.q_lora_rank, m.heads * m.head_dim]];
      attention = q.concat([[L, h, m.kv_lora_rank + m.qk_rope_head_dim],
        [L, m.kv_lora_rank, m.heads * (nope + m.v_head_dim)]]);
    } else {
      attention = [[L, h, m.heads * m.head_dim], [L, h, m.kv_heads * m.head_dim],
        [L, h, m.kv_heads * m.v_head_dim]];
    }
    attention.push([L, m.heads * m.v_head_dim, h]);
    const dense = [];
    for (let i = 0; i < m.mlp_matrices - 1; i++) dense.push([m.dense_layers, h, m.intermediate]);
    dense.push([m.dense_layers, m.intermediate, h]);
    let moe = [];
    if (m.moe_layers) {
      const experts = m.moe_layers * m.num_experts;
      moe = [[experts, h, m.moe_intermediate], [experts, h, m.moe_intermediate],
        [experts, m.moe_intermediate, h]];
      if (m.shared_intermediate) {
        moe = moe.concat([[m.moe_layers, h, m.shared_intermediate],
          [m.moe_layers, h, m.shared_intermediate], [m.moe_layers, m.shared_intermediate, h]]);
      }
    }
    return attention.concat(dense, moe).filter(function (t) { return t[0] && t[1] && t[2]; })
      .map(function (t) { return t.map(B); }); // ints, as Python's
  }

  function packedLinears(m) { // costs.packed_linears: mxfp4 packs the routed experts alone,
    // bitsandbytes all but them (they are not nn.Linear layers)
    if (m.quant_method === "bitsandbytes") {
      return stack_linears(Object.assign({}, m, {num_experts: 0}));
    }
    if (m.quant_method !== "mxfp4") return stack_linears(m);
    const experts = B(m.moe_layers) * B(m.num_experts), h = B(m.hidden);
    const mi = B(m.moe_intermediate);
    return [[experts, h, mi], [experts, h, mi], [experts, mi, h]]
      .filter(function (t) { return t[0] && t[1] && t[2]; });
  }

  function compressedTensorsBytes(m, i, o) { // costs._compressed_tensors_bytes, BigInt
    const scales = m.quant_strategy === "tensor" ? 1n : m.quant_strategy === "channel" ? o
      : o * ceilDiv(i, B(m.quant_group || 1)); // "group" always has quant_group >= 1
    if (m.quant_format !== "pack-quantized") {
      return i * o + 2n * scales + (m.quant_zero_point ? scales : 0n);
    }
    const perWord = 32n / B(m.quant_bits);
    let stored = 4n * o * ceilDiv(i, perWord) + 2n * scales + 16n;
    if (m.quant_zero_point) {
      stored += m.quant_strategy !== "tensor" ? 4n * ceilDiv(o, perWord) * (scales / o) : 1n;
    }
    return stored;
  }

  function bnbBytes(m, i, o) { // costs._bnb_bytes, BigInt
    if (m.quant_bits === 8) return i * o + 4n * o + 1n;
    const n = i * o, blocks = ceilDiv(n, B(T.BNB_BLOCK));
    let state = BigInt('{"quant_type": "", "blocksize": 64, "dtype": "", "shape": [, ]}'.length
      + m.quant_format.length + m.quant_dtype.length + String(o).length + String(i).length);
    let absmax = 4n * blocks;
    if (m.quant_double) {
      absmax = blocks + 4n * ceilDiv(blocks, B(T.BNB_NESTED_BLOCK)) + 4n * 256n;
      state += BigInt(', "nested_blocksize": 256, "nested_dtype": "float32", "nested_offset": '
        .length + T.BNB_OFFSET_CHARS);
    }
    return ceilDiv(n, 2n) + absmax + 64n + state;
  }

  function packedBytes(m, inputs, outputs) { // costs._packed_bytes, BigInt
    const i = B(inputs), o = B(outputs);
    if (m.quant_method === "compressed-tensors") return compressedTensorsBytes(m, i, o);
    if (m.quant_method === "bitsandbytes") return bnbBytes(m, i, o);
    if (m.quant_method === "mxfp4") return o * ceilDiv(i, 32n) * 17n; // blocks and scales
    if (m.quant_method === "fp8") {
      if (m.quant_block_out) {
        return i * o + 4n * ceilDiv(o, B(m.quant_block_out)) * ceilDiv(i, B(m.quant_block_in));
      }
      return i * o + 4n;
    }
    if (m.quant_method === "fbgemm_fp8") return i * o + 4n * o;
    const bits = B(m.quant_bits);
    const groups = m.quant_group ? ceilDiv(i, B(m.quant_group)) : 1n;
    if (m.quant_method === "awq") {
      const words = ceilDiv(o * bits, 32n);
      return 4n * i * words + 2n * groups * o + (m.quant_zero_point ? 4n * groups * words : 0n);
    }
    return 4n * ceilDiv(i * bits, 32n) * o + 4n * groups * ceilDiv(o * bits, 32n)
      + 2n * groups * o + 4n * i;
  }

  function quantized_params(m) {
    if (!m.quant_method) return 0n;
    return packedLinears(m).reduce(function (acc, t) {
      return acc + B(t[0]) * B(t[1]) * B(t[2]);
    }, 0n);
  }

  function weight_bytes(m, bpv) { // BigInt bpv -> exact BigInt; Number -> Number
    bpv = bpvOr(bpv, 2n);
    if (!m.quant_method) {
      return isInt(bpv) ? total_params(m) * bpv : Number(total_params(m)) * bpv;
    }
    const packed = packedLinears(m).reduce(function (acc, t) {
      return acc + B(t[0]) * packedBytes(m, t[1], t[2]);
    }, 0n);
    const rest = total_params(m) - quantized_params(m);
    return isInt(bpv) ? packed + rest * bpv : Number(packed) + Number(rest) * bpv;
  }

  function cache_convention(m) { // costs.cache_convention
    if (!m.mla && !m.attention_layers) { // Mamba: every layer keeps a state instead
      return "No layer attends, so there is no KV cache; " + (m.state_layers
        ? "each layer keeps a fixed state instead, its own figure"
        : "any fixed state the layers keep is not counted") + ".";
    }
    const held = [m.mla ? "a " + grouped(m.kv_lora_rank + m.qk_rope_head_dim) + "-value latent "
      + "per layer (multi-head latent attention, MLA), not each head's keys and values"
      : "keys and values of " + grouped(m.kv_heads) + " KV head" + (m.kv_heads === 1 ? "" : "s")
        + " per layer"];
    if (m.sliding_layers) {
      held.push(grouped(m.sliding_layers) + " of " + grouped(m.layers) + " layers keep only "
        + "their last " + grouped(m.sliding_window) + " tokens");
    }
    if (m.uncached_layers) {
      held.push(grouped(m.uncached_layers) + " of " + grouped(m.layers) + " layers hold no KV "
        + "cache (" + (m.state_layers ? "they keep a fixed state, its own figure"
        : "any fixed state they keep is not counted") + ")");
    }
    return "As a serving engine holds it: " + held.join("; ") + ".";
  }

  function weight_convention(m, dtype) { // costs.weight_convention
    const tied = m.tied ? "; lm_head tied to the embedding, counted once" : "";
    if (m.quant_method) {
      const which = m.quant_method === "mxfp4" ? "routed experts' weights"
        : m.quant_method === "bitsandbytes" && m.num_experts
          ? "linear weights but the routed experts" : "linear weights";
      return "As the checkpoint stores them: " + which + " packed by " + m.quant_method + " ("
        + m.quant_bits + "-bit), everything else " + dtype + tied + ".";
    }
    return "Every parameter in " + dtype + tied + ".";
  }

  // opts: {kv_bytes_per_value, weight_bytes_per_value} (Python's keyword-only arguments)
  function decode_step_arithmetic_intensity(m, context, users, opts) {
    opts = opts || {};
    users = num(users === undefined ? 1 : users);
    const other = Number(other_flops_decode(m));
    const weights = Number(weight_bytes(m, bpvOr(opts.weight_bytes_per_value, 2n)));
    const kvB = bpvOr(opts.kv_bytes_per_value, 2n);
    const cache = kv_cache_bytes(m, context, users, kvB), state = state_bytes(m, users, kvB);
    return vec(function (u, attn, c, s) { return u * (other + attn) / (weights + (c + s)); })(
      users, attention_flops_decode(m, context), cache, state);
  }

  // opts: {weight_bytes_per_value}; null or absent: the cache's own
  function kv_outweighs_weights_context(m, users, bpv, opts) {
    opts = opts || {};
    bpv = bpvOr(bpv, 2n);
    let wbpv = opts.weight_bytes_per_value;
    if (wbpv === undefined || wbpv === null) wbpv = bpv;
    const weights = Number(weight_bytes(m, wbpv));
    const perValue = Number(kv_bytes_per_token_per_layer(m, bpv));
    return vec(function (u) {
      const perLayer = perValue * u;
      const linear = weights / (m.attention_layers * perLayer);
      if (!m.sliding_layers) return linear;
      const w = m.sliding_window, full = m.attention_layers - m.sliding_layers;
      const atWindow = m.attention_layers * perLayer * w;
      let beyond;
      if (full) beyond = w + (weights - atWindow) / (full * perLayer);
      else beyond = Infinity;
      return linear <= w ? linear : beyond;
    })(num(users === undefined ? 1 : users));
  }

  function eager_score_matrix_bytes(m, n, batch, bpv) {
    const b = Number(bpvOr(bpv, 2n));
    return vec(function (bt, x) { return bt * m.heads * x * x * b; })(
      num(batch === undefined ? 1 : batch), num(n));
  }

  // --- GPUs ---------------------------------------------------------------------------

  // GPUS: the table's, each with its ridge point (bind)

  // -> the parser and every closed form of costs.py, bound to `table`
  let boundTo = null; // the table the parts are bound to: one a page, as their state is shared
  function create(table) {
    if (boundTo !== null && boundTo !== table) {
      throw new Error("the cost model is bound to one table a page");
    }
    boundTo = table;
    parts.text.bind(table);
    parts.families.bind(table);
    bind(table);
    return {
      parse_config_text: parse_config_text, from_config: from_config, preset: preset,
      attention_params: attention_params, dense_mlp_params: dense_mlp_params,
      moe_active_params: moe_active_params, moe_stored_params: moe_stored_params,
      lm_head_params: lm_head_params, embedding_projection_params: embedding_projection_params,
      matmul_params: matmul_params, total_params: total_params,
      pair_flops: pair_flops, prefill_pairs: prefill_pairs,
      attention_flops_prefill: attention_flops_prefill, other_flops_prefill: other_flops_prefill,
      prefill_attention_share: prefill_attention_share, decode_pairs: decode_pairs,
      attention_flops_decode: attention_flops_decode, other_flops_decode: other_flops_decode,
      decode_attention_share: decode_attention_share, decode_dot_products: decode_dot_products,
      decode_score_flops: decode_score_flops, decode_value_flops: decode_value_flops,
      crossover_tokens: crossover_tokens, dtype_bytes: dtype_bytes,
      kv_bytes_per_token_per_layer: kv_bytes_per_token_per_layer,
      kv_bytes_per_token: kv_bytes_per_token, kv_cache_bytes: kv_cache_bytes,
      state_bytes: state_bytes,
      decode_arithmetic_intensity: decode_arithmetic_intensity,
      decode_step_arithmetic_intensity: decode_step_arithmetic_intensity,
      weight_bytes: weight_bytes, stack_linears: stack_linears,
      cache_convention: cache_convention, weight_convention: weight_convention,
      quantized_params: quantized_params, kv_outweighs_weights_context: kv_outweighs_weights_context,
      eager_score_matrix_bytes: eager_score_matrix_bytes,
      DTYPE_BYTES: Object.freeze(DTYPE_BYTES), DEFAULT_DTYPE: T.DEFAULT_DTYPE,
      KERNELS: T.KERNELS.slice(), GPUS: Object.freeze(GPUS),
      PRESET_NAMES: Object.assign({}, T.PRESET_NAMES),
    };
  }

  // receive(table): the table's script (app/hosting/cost_model_data.py) hands it over
  const costModel = { create: create, table: null,
                    receive: function (table) { costModel.table = table; } };
  AE.costModel = costModel;
  if (typeof module !== "undefined" && module.exports) module.exports = costModel;
})();
