/* The cost model in the browser, part 2 of 3: a parsed config read as costs.py reads it,
   by its family's rules in Python's table (config_families: FAMILIES, BASE, ...):
   from_config, preset, and the figures, MoE, quantization, windows and tensors they need.
   Part 1: cost_model_text.js; part 3 and the model itself: cost_model.js. */
(function () {
  "use strict";
  const parts = globalThis.AE && globalThis.AE.costModelParts;
  if (!parts || !parts.text) { throw new Error("load cost_model_text.js first"); }
  const {ConfigError, MISSING, NAME_LIMIT, codePoints, grouped, hasOwn, isFloat, isInt, isMap,
    jsonType, parse_config_text, reprStr, show, strip} = parts.text;

  // what Python's table sets: create() (cost_model.js) binds each part of the model to it
  let T, WHOLE_FILE, LIMITS, MAX_LAYERS,
    MAX_HIDDEN, MAX_HEAD_DIM, MAX_INTERMEDIATE, MAX_POSITIONS, MAX_EXPERTS;

  function bind(table) {
    T = table;
    WHOLE_FILE = T.WHOLE_FILE;
    LIMITS = T.LIMITS;
    MAX_LAYERS = T.LIMITS.layers;
    MAX_HIDDEN = T.LIMITS.hidden;
    MAX_HEAD_DIM = T.LIMITS.head_dim;
    MAX_INTERMEDIATE = T.LIMITS.intermediate;
    MAX_POSITIONS = T.LIMITS.max_positions;
    MAX_EXPERTS = T.MAX_EXPERTS;
  }

  // --- reading fields -----------------------------------------------------------------

  function get(cfg, key) { return cfg.has(key) ? cfg.get(key) : null; } // cfg.get(key)

  function lookup(cfg, name) { // "a.b" -> cfg["a"]["b"]; MISSING if a step is absent
    const parts = name.split(".");
    let value = cfg;
    for (let i = 0; i < parts.length; i++) {
      if (!isMap(value) || !value.has(parts[i])) return MISSING;
      value = value.get(parts[i]);
    }
    return value;
  }

  function pick(cfg, keys) { // aliases -> [name used, value]
    for (let i = 0; i < keys.length; i++) {
      const value = lookup(cfg, keys[i]);
      if (value !== MISSING) return [keys[i], value];
    }
    return [keys[0], MISSING];
  }

  function missing(keys) {
    const also = keys.length > 1 ? " (also looked for " + keys.slice(1).join(", ") + ")" : "";
    return ConfigError(keys[0], "is missing" + also);
  }

  function present(cfg, key) { return get(cfg, key) !== null; }

  // -> a validated count (a Number), or dflt when absent/null (NO_DEFAULT: required)
  const NO_DEFAULT = {};
  function count(cfg, keys, limit, dflt, minimum) {
    if (dflt === undefined) dflt = NO_DEFAULT;
    if (minimum === undefined) minimum = 1;
    const kv = pick(cfg, keys), key = kv[0], value = kv[1];
    if (value === MISSING || value === null) {
      if (dflt !== NO_DEFAULT) return dflt;
      if (value === MISSING) throw missing(keys);
      throw ConfigError(key, "is null; it is required");
    }
    const kind = minimum === 1 ? "positive" : "non-negative";
    if (!isInt(value) || value < BigInt(minimum)) {
      throw ConfigError(key, "must be a " + kind + " integer, got " + show(value));
    }
    if (value > BigInt(limit)) {
      throw ConfigError(key, "is " + show(value) + ", more than any real model ("
        + grouped(limit) + ")");
    }
    return Number(value);
  }

  function flag(cfg, key) { // optional boolean field -> true, false or null
    const value = get(cfg, key);
    if (value !== null && typeof value !== "boolean") {
      throw ConfigError(key, "must be true or false, got " + show(value));
    }
    return value;
  }

  function languageModel(cfg, notes) { // multimodal config -> its text part
    if (cfg.has("num_hidden_layers") || cfg.has("n_layer") || !cfg.has("text_config")) {
      return cfg;
    }
    const text = cfg.get("text_config");
    if (!isMap(text)) throw ConfigError("text_config", "must be an object, got " + jsonType(text));
    notes.push("Counted the language model in text_config; the vision tower is left out.");
    const merged = new Map();
    cfg.forEach(function (v, k) { if (k !== "text_config") merged.set(k, v); });
    text.forEach(function (v, k) { merged.set(k, v); });
    // tying as the wrapper's own config says (costs._language_model)
    if (cfg.has("tie_word_embeddings")) merged.set("tie_word_embeddings", cfg.get("tie_word_embeddings"));
    // a text model with no row of its own is counted by its wrapper's row (costs._language_model)
    const inner = text.get("model_type"), wrapper = cfg.get("model_type");
    if (typeof inner === "string" && typeof wrapper === "string" && wrapper
        && !family(inner, merged)[0] && family(wrapper, merged)[0]) {
      merged.set("model_type", wrapper);
    }
    return merged;
  }

  function modelType(cfg) {
    const value = cfg.has("model_type") ? cfg.get("model_type") : "";
    if (value === null) return "";
    if (typeof value !== "string") {
      throw ConfigError("model_type", "must be a string, got " + show(value));
    }
    return value;
  }

  function typeDefault(type, field) { // a Transformers class's default, or undefined
    const d = hasOwn(T.DERIVED_TYPES, type) ? T.DERIVED_TYPES[type] : {};
    return hasOwn(d, field) ? d[field] : undefined;
  }

  function family(type, cfg) { // config_families.family -> [row's key or "", row]
    if (!hasOwn(T.FAMILIES, type) && hasOwn(T.TEXT_OF, type)) type = T.TEXT_OF[type];
    if (hasOwn(T.FAMILIES, type)) return [type, T.FAMILIES[type]];
    if (!type && cfg.has(T.GPT2_HINT)) return ["gpt2", T.FAMILIES.gpt2];
    const tie = typeDefault(type, "tie_word_embeddings");
    if (T.UNKNOWN.tied === null && tie !== undefined) {
      return ["", Object.assign({}, T.UNKNOWN, {tied: tie})];
    }
    return ["", T.UNKNOWN];
  }

  function unknownLine(type) { // config_families.unknown_line
    const where = hasOwn(T.DERIVED_TYPES, type)
      ? "a Transformers " + T.TRANSFORMERS + " model this version has no rule for"
      : "not one this version knows (nor Transformers " + T.TRANSFORMERS + ")";
    return "model_type " + reprStr(type || "(none)") + " is " + where + ": counted as a "
      + "generic decoder (Llama's layer: q, k, v, o, a gated MLP, two weight-only norms a "
      + "layer and a final one, no biases), so its total and matmul parameters may be off "
      + "wherever its layers differ from that, and its KV cache by any layer that is not "
      + "plain attention unless its config lists its layers' kinds.";
  }

  function inexactLine(key, row) { // config_families.inexact_line, or null
    const exact = hasOwn(row, "exact") ? row.exact : {};
    const off = Object.keys(T.COUNTS).filter(c => exact[c] === false  // a cache none keeps:
      && !(c === "kv" && keepsNoCache(key))).map(c => T.COUNTS[c]); // said by noCacheLine
    if (!off.length) return null;
    const own = "Transformers " + T.TRANSFORMERS + "'s own model", many = off.length > 1;
    const rule = row.derived ? "a rule derived from " + own : "a rule written by hand";
    return "model_type " + reprStr(key) + " is counted by " + rule + "; on random configs its "
      + off.join(" and ") + (many ? " were" : " was") + " not shown to match "
      + (row.derived ? "that model" : own) + ", so " + (many ? "they" : "it") + " may be off.";
  }

  function cachesIf(type) { // config_families.caches_if, or null
    if (hasOwn(T.CACHES_IF, type)) return T.CACHES_IF[type];
    const text = hasOwn(T.TEXT_OF, type) ? T.TEXT_OF[type] : "";
    return hasOwn(T.CACHES_IF, text) ? T.CACHES_IF[text] : null;
  }

  function cachesIfLine(type, name) { // config_families.caches_if_line
    return name + " is not set to true in this file: Transformers' causal-LM class for "
      + "model_type " + reprStr(type) + " then attends in both directions and keeps no KV "
      + "cache. The KV figures are the cache it would keep with " + name + " true.";
  }

  function keepsNoCache(type) { // config_families.keeps_no_cache
    const text = hasOwn(T.TEXT_OF, type) ? T.TEXT_OF[type] : null;
    return T.KEEPS_NO_CACHE.indexOf(type) >= 0 || T.KEEPS_NO_CACHE.indexOf(text) >= 0;
  }

  function noCacheLine(type) { // config_families.no_cache_line
    return "Transformers' causal-LM class for model_type " + reprStr(type) + " keeps no KV "
      + "cache: each new token reruns the whole prefix through every layer. The KV figures are "
      + "what a standard decoder with these layers, KV heads and head widths would cache.";
  }

  function refuseFormat(cfg, type) { // costs._refuse_format
    if (cfg.has("block_configs")) {
      throw ConfigError("block_configs", "is Nemotron-NAS's format, in which each layer has "
        + "its own attention and MLP sizes; this version reads models whose layers share one "
        + "attention and MLP width");
    }
    if (cfg.has("multi_query_group_num")) {
      throw ConfigError("multi_query_group_num", "is ChatGLM's format (ffn_hidden_size, "
        + "kv_channels), whose model code is not in Transformers; this version does not read it");
    }
    if (get(cfg, "is_encoder_decoder") === true || typeDefault(type, "is_encoder_decoder")) {
      throw ConfigError("model_type", reprStr(type || "(none)") + " is an encoder-decoder; "
        + "this version reads decoder-only models (no encoder, no cross-attention)");
    }
  }

  function familyOf(cfg, type, notes) { // costs._family: the row, its caveat said
    refuseFormat(cfg, type);
    const [key, row] = family(type, cfg);
    const line = key ? inexactLine(key, row) : unknownLine(type);
    if (line) notes.push(line);
    const name = cachesIf(type);
    if (name && flag(cfg, name) !== true) notes.push(cachesIfLine(type, name));
    if (keepsNoCache(type)) notes.push(noCacheLine(type));
    return row;
  }

  function optionalGroups(row) { // config_families.optional_groups
    const groups = T.OPTIONAL_READS.map(g => g.slice());
    function addRule(r) {
      if (r.default !== undefined && r.default !== null && r.names.length) groups.push(r.names);
      (r.cases || []).forEach(function (c) { groups.push([c["if"]]); addRule(c.then); });
    }
    T.FIGURES.forEach(f => addRule(rule(row, f)));
    addRule(windowRule(row));
    row.tensors.forEach(function (term) {
      term.size.forEach(product => product.forEach(function (f) {
        if (f !== null && typeof f === "object") groups.push([f.field]);
      }));
      term.when.forEach(c => groups.push([c.flag || c.field || c.present]));
    });
    return groups;
  }

  function jsonText(v) { // json.dumps of a fill: a bool, an int or a list of ints
    return Array.isArray(v) ? "[" + v.map(jsonText).join(", ") + "]" : String(v);
  }

  function classDefaults(cfg, type, row, notes) { // costs._class_defaults: a field the file
    // leaves out means what it means to Transformers, the class's default
    const textOf = hasOwn(T.TEXT_OF, type) ? T.TEXT_OF[type] : "";
    const fills = hasOwn(T.FILLS, type) ? T.FILLS[type]
      : hasOwn(T.FILLS, textOf) ? T.FILLS[textOf] : {};
    const groups = optionalGroups(row).concat(stateFields(type).map(f => [f]));
    const filled = [];
    let out = cfg;
    Object.keys(fills).forEach(function (field) {
      const group = groups.find(g => g.includes(field));
      if (group !== undefined && !group.some(name => cfg.has(name))) {
        if (out === cfg) out = new Map(cfg);
        out.set(field, fromTable(fills[field]));
        filled.push(field + " " + jsonText(fills[field]));
      }
    });
    if (filled.length) {
      notes.push("Not in the file, so taken from Transformers " + T.TRANSFORMERS
        + "'s defaults for model_type " + reprStr(type) + ": " + filled.join(", ") + ".");
    }
    return out;
  }

  function rule(row, figure) {
    return hasOwn(row.figures, figure) ? row.figures[figure] : T.BASE[figure];
  }

  function windowRule(row) { return hasOwn(row, "window") ? row.window : T.BASE_WINDOW; }

  function fromTable(v) { // table JSON -> a parsed config's values (ints as BigInt)
    if (Array.isArray(v)) return v.map(fromTable);
    if (isFloat(v) && Number.isInteger(v)) return BigInt(v);
    return v;
  }

  function chooseCase(cfg, r) { // costs._case
    const cases = r.cases || [];
    for (let i = 0; i < cases.length; i++) {
      const f = flag(cfg, cases[i]["if"]);
      if (f === null ? cases[i].if_absent : f) return chooseCase(cfg, cases[i].then);
    }
    return r;
  }

  function dflt(cfg, spec, got, used) { // costs._default
    if (hasOwn(spec, "value")) return spec.value;
    if (hasOwn(spec, "same_as")) return got[spec.same_as];
    if (hasOwn(spec, "times")) return spec.times * got[spec.of];
    if (hasOwn(spec, "divide")) {
      const whole = got[spec.divide], part = got[spec.by];
      if (whole % part) {
        throw ConfigError(used[spec.by], "(" + part + ") does not divide the hidden size ("
          + whole + ") and there is no head_dim field to say how wide a head is");
      }
      return whole / part;
    }
    throw new Error("unknown default " + JSON.stringify(spec));
  }

  function figure(cfg, name, r, got, used) { // -> [value, the field read]
    r = chooseCase(cfg, r);
    const names = r.names;
    const kv = names.length ? pick(cfg, names) : [name, MISSING];
    if ((kv[1] === MISSING || kv[1] === null) && hasOwn(r, "default")) {
      return [dflt(cfg, r["default"], got, used), kv[0]];
    }
    return [count(cfg, names, LIMITS[name]), kv[0]];
  }

  function figures(cfg, row, skip) { // -> [{figure: value}, {figure: field}]
    const got = {}, used = {};
    T.FIGURES.forEach(function (f) {
      if (skip.indexOf(f) < 0) {
        const r = figure(cfg, f, rule(row, f), got, used);
        got[f] = r[0];
        used[f] = r[1];
      }
    });
    if (got.heads % got.kv_heads) {
      throw ConfigError(used.kv_heads, "(" + got.kv_heads + ") must divide " + used.heads
        + " (" + got.heads + "): each KV head serves a whole group of query heads");
    }
    return [got, used];
  }

  function mlaHeads(cfg, heads, kvHeads, notes) {
    const kvRank = count(cfg, ["kv_lora_rank"], MAX_HIDDEN);
    const qRank = count(cfg, ["q_lora_rank"], MAX_HIDDEN, null);
    const nope = count(cfg, ["qk_nope_head_dim"], MAX_HEAD_DIM, NO_DEFAULT, 0);
    const rope = count(cfg, ["qk_rope_head_dim"], MAX_HEAD_DIM, NO_DEFAULT, 0);
    const vDim = count(cfg, ["v_head_dim"], MAX_HEAD_DIM);
    if (nope + rope === 0) throw ConfigError("qk_nope_head_dim", "and qk_rope_head_dim are both 0");
    notes.push("MLA counted in its decompressed form: each of the " + heads + " query heads "
      + "scores over " + (nope + rope) + " dims and sums " + vDim + " value dims; the cache "
      + "holds the " + (kvRank + rope) + "-value latent once per layer (kv_lora_rank + "
      + "qk_rope_head_dim).");
    return { head_dim: nope + rope, v_head_dim: vDim, kv_heads: kvHeads, mla: true,
      q_lora_rank: qRank, kv_lora_rank: kvRank, qk_rope_head_dim: rope };
  }

  // the top-k's names: most families'; Hunyuan's and Aria's; ERNIE 4.5's; Gemma 4's
  const TOP_K = ["num_experts_per_tok", "moe_topk", "moe_k", "top_k_experts"];

  function topK(cfg, experts, layers) {
    cfg = oneTopK(cfg, layers);
    const key = pick(cfg, TOP_K)[0];
    const k = count(cfg, TOP_K, MAX_EXPERTS);
    if (k > experts) {
      throw ConfigError(key, "(" + k + ") is more than the " + experts
        + " experts");
    }
    return k;
  }

  function layerIndices(cfg, key) { // -> Set of BigInt layer numbers
    const value = get(cfg, key);
    if (value === null) return new Set();
    if (!Array.isArray(value) || value.some(function (i) { return !isInt(i); })) {
      throw ConfigError(key, "must be a list of layer numbers");
    }
    return new Set(value);
  }

  function mlpLayerKinds(cfg, layers, moeLayers) { // costs._mlp_layer_kinds
    const kinds = get(cfg, "mlp_layer_types");
    if (kinds === null) return moeLayers;
    if (!Array.isArray(kinds) || !kinds.every(k => k === "dense" || k === "sparse")) {
      throw ConfigError("mlp_layer_types", 'must be a list of "dense" and "sparse"');
    }
    if (kinds.length !== layers) {
      throw ConfigError("mlp_layer_types", "has " + kinds.length + " entries for " + layers
        + " layers");
    }
    return kinds.filter(k => k === "sparse").length;
  }

  function expertWidth(cfg, intermediate, row, notes) { // costs._expert_width
    // OLMoE, FlexOlmo, Hunyuan, Aria: a class with no moe_intermediate_size makes each expert
    // intermediate_size wide (the row says so, from its class's fields), whatever a file adds
    if (row.experts_wide !== "intermediate") {
      return count(cfg, ["moe_intermediate_size"], MAX_INTERMEDIATE);
    }
    if (present(cfg, "moe_intermediate_size")) {
      notes.push("moe_intermediate_size is " + show(cfg.get("moe_intermediate_size")) + ": not "
        + "read, as Transformers' class for this model type has no such field; each expert is "
        + "intermediate_size (" + grouped(intermediate) + ") wide.");
    }
    return intermediate;
  }

  function oneTopK(cfg, layers) { // costs._one_top_k: Hunyuan's per-layer moe_topk
    const kv = pick(cfg, TOP_K), key = kv[0], value = kv[1];
    if (!Array.isArray(value)) return cfg;
    if (value.length < layers) {
      throw ConfigError(key, "lists " + value.length + " top-k values for " + layers
        + " layers: give one value, or one for each layer");
    }
    const ks = value.slice(0, layers).map(v => count(new Map([[key, v]]), [key], MAX_EXPERTS));
    const low = Math.min.apply(null, ks), high = Math.max.apply(null, ks);
    if (low !== high) {
      throw ConfigError(key, "lists a different top-k for some layers (" + low + " on one, "
        + high + " on another); this version reads one top-k for every layer");
    }
    return new Map([...cfg, [key, value[0]]]);
  }

  function jambaMoe(cfg, layers, intermediate) { // costs._jamba_moe, as a list, or null
    const experts = count(cfg, ["num_experts"], MAX_EXPERTS, NO_DEFAULT, 0);
    if (experts <= 1) return null;
    const every = count(cfg, ["expert_layer_period"], MAX_LAYERS);
    const offset = count(cfg, ["expert_layer_offset"], MAX_LAYERS, 1, 0);
    if (offset >= every) {
      throw ConfigError("expert_layer_offset", "is " + offset + "; it must be smaller than "
        + "expert_layer_period (" + every + "), as Transformers' class requires");
    }
    let moeLayers = 0;
    for (let i = 0; i < layers; i++) if (i % every === offset) moeLayers++;
    return [experts, topK(cfg, experts, layers), intermediate, 0, 0, moeLayers];
  }

  function moe(cfg, layers, hidden, intermediate, notes, row) {
    const dense = { num_experts: 0, experts_per_token: 0, moe_intermediate: 0,
      shared_experts: 0, shared_intermediate: 0, dense_layers: layers };
    let experts, k, size, shared, sharedWidth, moeLayers = 0, i;
    if (present(cfg, "n_routed_experts")) { // DeepSeek-V2/V3
      experts = count(cfg, ["n_routed_experts"], MAX_EXPERTS, NO_DEFAULT, 0);
      if (!experts) return dense;
      k = topK(cfg, experts, layers);
      size = count(cfg, ["moe_intermediate_size"], MAX_INTERMEDIATE);
      shared = count(cfg, ["n_shared_experts"], MAX_EXPERTS, 0, 0);
      const firstDense = count(cfg, ["first_k_dense_replace"], MAX_LAYERS, 0, 0);
      const every = count(cfg, ["moe_layer_freq"], MAX_LAYERS, 1);
      for (i = 0; i < layers; i++) if (i >= firstDense && i % every === 0) moeLayers++;
      sharedWidth = shared * size;
    } else if (present(cfg, "intermediate_size_mlp")) {
      // Llama 4: experts on the layers moe_layers lists, else every step-th, each with one
      // shared expert as wide as a routed one
      experts = count(cfg, ["num_local_experts"], MAX_EXPERTS, NO_DEFAULT, 0);
      if (!experts) return dense;
      k = topK(cfg, experts, layers);
      size = count(cfg, ["intermediate_size"], MAX_INTERMEDIATE);
      [shared, sharedWidth] = [1, size];
      if (get(cfg, "moe_layers") !== null) {
        const listed = layerIndices(cfg, "moe_layers");
        for (i = 0; i < layers; i++) if (listed.has(BigInt(i))) moeLayers++;
      } else {
        const step = count(cfg, ["interleave_moe_layer_step"], MAX_LAYERS, 1);
        for (i = step - 1; i < layers; i += step) moeLayers++;
      }
    } else if (present(cfg, "expert_layer_period")) {
      const jamba = jambaMoe(cfg, layers, intermediate); // Jamba; null: dense
      if (!jamba) return dense;
      [experts, k, size, shared, sharedWidth, moeLayers] = jamba;
    } else if (present(cfg, "num_local_experts") && !present(cfg, "moe_intermediate_size")) {
      // Mixtral: intermediate_size is the expert size; Granite MoE's shared MLP is
      // shared_intermediate_size wide (0: none)
      experts = count(cfg, ["num_local_experts"], MAX_EXPERTS, NO_DEFAULT, 0);
      if (!experts) return dense;
      k = topK(cfg, experts, layers);
      size = intermediate;
      sharedWidth = count(cfg, ["shared_intermediate_size"], MAX_INTERMEDIATE, 0, 0);
      shared = sharedWidth ? 1 : 0;
      moeLayers = layers;
    } else if (present(cfg, "moe_num_experts")) {
      // ERNIE 4.5 and Aria: one MLP for the shared experts, each as wide as a routed one;
      // experts on every interval-th layer from the start index to the end one (-1: the last)
      experts = count(cfg, ["moe_num_experts"], MAX_EXPERTS, NO_DEFAULT, 0);
      if (!experts) return dense;
      k = topK(cfg, experts, layers);
      size = expertWidth(cfg, intermediate, row, notes);
      shared = count(cfg, ["moe_num_shared_experts"], MAX_EXPERTS, 0, 0);
      sharedWidth = shared * size;
      const start = count(cfg, ["moe_layer_start_index"], MAX_LAYERS, 0, 0);
      const written = get(cfg, "moe_layer_end_index");
      const end = written === null || (isInt(written) && written === -1n) ? layers - 1
        : count(cfg, ["moe_layer_end_index"], MAX_LAYERS, NO_DEFAULT, 0);
      const every = count(cfg, ["moe_layer_interval"], MAX_LAYERS, 1);
      for (i = start; i <= Math.min(end, layers - 1); i++) if ((i + 1) % every === 0) moeLayers++;
    } else if (present(cfg, "num_experts") || present(cfg, "num_local_experts")) {
      // Qwen2-MoE / Qwen3-MoE, in Transformers 4's spelling or 5's
      experts = count(cfg, ["num_experts", "num_local_experts"], MAX_EXPERTS, NO_DEFAULT, 0);
      if (!experts) return dense;
      k = topK(cfg, experts, layers);
      size = expertWidth(cfg, intermediate, row, notes);
      sharedWidth = count(cfg, ["shared_expert_intermediate_size"], MAX_INTERMEDIATE, 0, 0);
      shared = sharedWidth ? 1 : 0;
      if (!sharedWidth && present(cfg, "num_shared_experts")) { // EXAONE MoE, HY-V3
        shared = count(cfg, ["num_shared_experts"], MAX_EXPERTS, NO_DEFAULT, 0);
        sharedWidth = shared * size;
      }
      const step = count(cfg, ["decoder_sparse_step"], MAX_LAYERS, 1);
      const denseOnly = layerIndices(cfg, "mlp_only_layers");
      const firstDense = count(cfg, ["num_dense_layers"], MAX_LAYERS, 0, 0); // AFMoE
      for (i = firstDense; i < layers; i++) {
        if (!denseOnly.has(BigInt(i)) && (i + 1) % step === 0) moeLayers++;
      }
    } else {
      return dense;
    }
    moeLayers = mlpLayerKinds(cfg, layers, moeLayers);
    notes.push("Mixture of experts: " + k + " of " + experts + " routed experts active per "
      + "token" + (shared ? ", plus " + shared + " shared" : "") + "; "
      + (layers - moeLayers) + " of " + layers + " layers have a dense MLP.");
    return { num_experts: experts, experts_per_token: k, moe_intermediate: size,
      shared_experts: shared, shared_intermediate: sharedWidth,
      dense_layers: layers - moeLayers };
  }

  // --- quantization_config (costs._quantization) ---

  const QUANT_METHODS = ["fp8", "fbgemm_fp8", "awq", "gptq", "mxfp4", "compressed-tensors",
    "bitsandbytes"];
  const BNB_DTYPES = ["bfloat16", "float16", "float32"];
  const CT_FORMATS = ["pack-quantized", "int-quantized", "float-quantized", "naive-quantized"];
  const CT_STRATEGIES = ["tensor", "channel", "group"];
  function notQuantized() {
    return { quant_method: null, quant_bits: 0, quant_group: 0, quant_block_out: 0,
      quant_block_in: 0, quant_zero_point: false, quant_format: "", quant_strategy: "",
      quant_double: false, quant_dtype: "" };
  }

  function whole(v) { return isInt(v); } // costs._whole: a JSON integer, not 4.0

  function quantization(cfg, notes) {
    const q = get(cfg, "quantization_config");
    if (q === null) return notQuantized();
    if (!isMap(q)) {
      throw ConfigError("quantization_config", "must be an object, got " + jsonType(q));
    }
    const method = get(q, "quant_method");
    if (QUANT_METHODS.indexOf(method) < 0) {
      notes.push("quantization_config's quant_method " + show(method) + " is not one counted "
        + "here (" + QUANT_METHODS.join(", ") + "): every weight is billed at the weight "
        + "dtype chosen.");
      return notQuantized();
    }
    const out = Object.assign(notQuantized(), { quant_method: method, quant_bits: 8 });
    if (method === "fp8") {
      const block = get(q, "weight_block_size");
      if (block !== null) {
        if (!(Array.isArray(block) && block.length === 2 && block.every(function (b) {
          return whole(b) && b >= 1n && b <= BigInt(MAX_HIDDEN);
        }))) {
          throw ConfigError("quantization_config.weight_block_size",
            "must be two positive integers, got " + show(block));
        }
        out.quant_block_out = Number(block[0]);
        out.quant_block_in = Number(block[1]);
      }
      return said(out, notes);
    }
    if (method === "fbgemm_fp8") return said(out, notes);
    if (method === "compressed-tensors") return compressedTensors(q, out, notes);
    if (method === "bitsandbytes") return bitsandbytes(cfg, q, out, notes);
    if (method === "mxfp4") { // gpt-oss: the routed experts only, a scale per 32 inputs
      out.quant_bits = 4;
      out.quant_group = 32;
      return said(out, notes);
    }
    const bits = q.has("bits") ? q.get("bits") : get(q, "w_bit");
    if (!(whole(bits) && [2n, 3n, 4n, 8n].indexOf(bits) >= 0)) {
      throw ConfigError("quantization_config.bits", "must be 2, 3, 4 or 8, got " + show(bits));
    }
    const group = q.has("group_size") ? q.get("group_size")
      : q.has("q_group_size") ? q.get("q_group_size") : 128n;
    if (!(whole(group) && (group === -1n || (group >= 1n && group <= BigInt(MAX_INTERMEDIATE))))) {
      throw ConfigError("quantization_config.group_size",
        "must be a positive integer or -1, got " + show(group));
    }
    const zero = q.has("zero_point") ? q.get("zero_point") : true;
    if (method === "awq" && typeof zero !== "boolean") {
      throw ConfigError("quantization_config.zero_point", "must be true or false, got "
        + show(zero));
    }
    out.quant_bits = Number(bits);
    out.quant_group = Math.max(Number(group), 0);
    out.quant_zero_point = method === "gptq" || zero;
    return said(out, notes);
  }

  function bitsandbytes(cfg, q, out, notes) { // costs._bitsandbytes
    const four = get(q, "load_in_4bit"), eight = get(q, "load_in_8bit");
    if ((four === true) === (eight === true)) {
      throw ConfigError("quantization_config.load_in_4bit",
        "and load_in_8bit: exactly one must be true for bitsandbytes");
    }
    const dtype = cfg.has("dtype") ? cfg.get("dtype") : get(cfg, "torch_dtype");
    out.quant_dtype = BNB_DTYPES.indexOf(dtype) >= 0 ? dtype : "bfloat16";
    if (eight === true) {
      out.quant_format = "int8";
      return said(out, notes);
    }
    const fmt = q.has("bnb_4bit_quant_type") ? q.get("bnb_4bit_quant_type") : "fp4";
    if (fmt !== "nf4" && fmt !== "fp4") {
      throw ConfigError("quantization_config.bnb_4bit_quant_type",
        "must be nf4 or fp4, got " + show(fmt));
    }
    const double = q.has("bnb_4bit_use_double_quant") ? q.get("bnb_4bit_use_double_quant") : false;
    if (typeof double !== "boolean") {
      throw ConfigError("quantization_config.bnb_4bit_use_double_quant",
        "must be true or false, got " + show(double));
    }
    Object.assign(out, {quant_bits: 4, quant_format: fmt, quant_group: T.BNB_BLOCK,
      quant_double: double});
    return said(out, notes);
  }

  function compressedTensors(q, out, notes) { // costs._compressed_tensors
    const groups = get(q, "config_groups");
    const weights = isMap(groups) ? Array.from(groups.values()).filter(function (g) {
      return isMap(g) && g.has("weights") && g.get("weights") !== null;
    }).map(function (g) { return g.get("weights"); }) : [];
    const w = weights.length === 1 && isMap(weights[0]) ? weights[0] : new Map();
    const fmt = get(q, "format"), bits = get(w, "num_bits"), strategy = get(w, "strategy");
    const group = get(w, "group_size"), packed = fmt === "pack-quantized";
    if (!(CT_FORMATS.indexOf(fmt) >= 0 && CT_STRATEGIES.indexOf(strategy) >= 0 && whole(bits)
          && (packed ? [4n, 8n] : [8n]).indexOf(bits) >= 0
          && (strategy !== "group" || (whole(group) && group >= 1n
                                       && group <= BigInt(MAX_INTERMEDIATE))))) {
      notes.push("quantization_config (compressed-tensors, format " + show(fmt) + ") is not "
        + "one counted here (one config group of 4- or 8-bit weights, pack-, int- or "
        + "float-quantized, per tensor, channel or group): every weight is billed at the "
        + "weight dtype chosen.");
      return notQuantized();
    }
    out.quant_bits = Number(bits);
    out.quant_format = fmt;
    out.quant_strategy = strategy;
    out.quant_group = strategy === "group" ? Number(group) : 0;
    out.quant_zero_point = (w.has("symmetric") ? w.get("symmetric") : true) === false;
    return said(out, notes);
  }

  function said(q, notes) {
    const method = q.quant_method;
    let how;
    if (method === "fp8") {
      how = "1 byte a weight and " + (q.quant_block_out ? "a float32 scale per "
        + q.quant_block_out + " x " + q.quant_block_in + " block" : "a float32 scale per tensor");
    } else if (method === "fbgemm_fp8") {
      how = "1 byte a weight and a float32 scale per output channel";
    } else if (method === "compressed-tensors") {
      const per = q.quant_strategy === "tensor" ? "tensor"
        : q.quant_strategy === "channel" ? "output channel" : grouped(q.quant_group) + " inputs";
      const values = q.quant_format === "pack-quantized" ? q.quant_bits + "-bit values packed "
        + "in int32 words (and each weight's shape)" : "1 byte a weight";
      how = q.quant_format + ": " + values + ", a 16-bit scale"
        + (q.quant_zero_point ? " and a zero point" : "") + " per " + per;
    } else if (method === "bitsandbytes") {
      if (q.quant_bits === 8) {
        how = "int8, 1 byte a weight and a float32 scale per output row";
      } else {
        how = q.quant_format + ", 4 bits a weight, " + (q.quant_double
          ? "an 8-bit scale per 64 weights and a float32 one per 256 of those (double "
            + "quantization)" : "a float32 scale per 64 weights") + ", and a few hundred bytes "
          + "of metadata per matrix (exact to a few bytes)";
      }
      notes.push("Linear weights as bitsandbytes stores them: " + how + ". Embeddings, "
        + "lm_head, norms, biases and routers at the weight dtype chosen.");
      return q;
    } else if (method === "mxfp4") {
      notes.push("Routed experts' weights counted as quantization_config (mxfp4) stores them: "
        + "4-bit values, two a byte, and an 8-bit scale per 32 inputs. Attention, routers, "
        + "embeddings, lm_head, norms and biases at the weight dtype chosen.");
      return q;
    } else {
      const group = q.quant_group ? grouped(q.quant_group) + " inputs" : "each weight's input";
      how = q.quant_bits + "-bit values packed in int32 words, an fp16 scale"
        + (q.quant_zero_point ? " and a packed zero" : "") + " per " + group
        + (method === "gptq" ? "; an int32 group index per input" : "");
    }
    notes.push("Linear weights counted as quantization_config (" + method + ") stores them: "
      + how + ". Embeddings, lm_head, norms, biases and routers at the weight dtype chosen.");
    return q;
  }

  // --- the tensors beside the big matrices (costs._tensors) ---

  function same(value, wanted) { // costs._same: numbers by value, the rest by identity
    if (typeof value === "boolean" || typeof wanted === "boolean" || value === null
        || wanted === null) return value === wanted;
    const numeric = function (v) { return isInt(v) || isFloat(v); };
    return numeric(value) && numeric(wanted) && Number(value) === Number(wanted);
  }

  function holds(cfg, shape, c) {
    if (hasOwn(c, "flag")) {
      const f = flag(cfg, c.flag);
      return (f === null ? c["default"] : f) === (hasOwn(c, "is") ? c.is : true);
    }
    if (hasOwn(c, "present")) return shape[c.present] !== null;
    let value = lookup(cfg, c.field);
    if (value === MISSING) value = null;
    const hit = function (v) { return same(value, v); };
    if (hasOwn(c, "in")) return c["in"].some(hit);
    return !c.not_in.some(hit);
  }

  function factor(cfg, shape, f) {
    if (typeof f === "number") return BigInt(f);
    if (typeof f === "string") return BigInt(shape[f]);
    if (hasOwn(f, "auto") && [null, "auto"].includes(get(cfg, f.field))) { // Jamba's step rank
      const by = BigInt(f.auto[1]), of = BigInt(shape[f.auto[0]]);
      return (of + by - 1n) / by;
    }
    return BigInt(count(cfg, [f.field], LIMITS.vocab, f["default"]));
  }

  const MAX_TENSOR_PARAMS = 2n ** 53n - 1n; // costs.MAX_TENSOR_PARAMS

  function indexerLayers(cfg, layers) { // costs.indexer_layers: DSA's layers with an indexer
    const list = function (f) { return Array.isArray(get(cfg, f)) ? get(cfg, f) : []; };
    const shared = list("indexer_types"), kinds = list("layer_types");
    let n = 0;
    for (let i = 0; i < layers; i++) {
      if (shared[i] !== "shared" && UNCACHED_KINDS.indexOf(kinds[i]) < 0) n += 1;
    }
    return n;
  }

  function tensors(cfg, row, shape) { // -> [stored only, matmul weights], as Numbers
    const per = { model: 1n, layer: BigInt(shape.layers), dense_layer: BigInt(shape.dense_layers),
      moe_layer: BigInt(shape.layers - shape.dense_layers),
      // a MoE layer that runs a shared MLP (ERNIE 4.5 and Aria build none for 0 shared)
      shared_layer: shape.shared_intermediate ? BigInt(shape.layers - shape.dense_layers) : 0n,
      attention_layer: BigInt(shape.layers - shape.uncached_layers),
      uncached_layer: BigInt(shape.uncached_layers),
      indexer_layer: BigInt(indexerLayers(cfg, shape.layers)) };
    let stored = 0n, matmul = 0n;
    row.tensors.forEach(function (term) {
      if (!term.when.every(function (c) { return holds(cfg, shape, c); })) return;
      let size = 0n;
      term.size.forEach(function (product) {
        size += product.reduce(function (acc, f) { return acc * factor(cfg, shape, f); }, 1n);
      });
      if (term.matmul) matmul += per[term.per] * size;
      else stored += per[term.per] * size;
      if (stored > MAX_TENSOR_PARAMS || matmul > MAX_TENSOR_PARAMS) {
        const fields = [];
        term.size.forEach(function (product) {
          product.forEach(function (f) {
            if (f !== null && typeof f === "object") fields.push(f.field);
          });
        });
        throw ConfigError(fields.length ? fields[0] : WHOLE_FILE, "makes the " + term.what
          + " more than any real model's (" + grouped(MAX_TENSOR_PARAMS) + " weights)");
      }
    });
    return [Number(stored), Number(matmul)];
  }

  function ignoredFields(cfg, row, got, notes) {
    row.notes.forEach(function (r) {
      const value = lookup(cfg, r.field);
      const expect = typeof r.expect === "string" ? got[r.expect] : r.expect;
      if (value !== MISSING && value !== null && !same(value, expect)) {
        notes.push(r.field + " is " + show(value) + ": " + r.note);
      }
    });
  }

  function localLayers(cfg, layers, win) { // GPT-Neo's attention_types -> local layers
    const key = win.layer_pattern;
    let spec = get(cfg, key);
    if (spec === null) spec = fromTable(win.layer_pattern_default);
    const bad = ConfigError(key, "must be a list of [[\"global\" or \"local\", ...], repeat] "
      + "pairs");
    if (!Array.isArray(spec)) throw bad;
    let total = 0, local = 0;
    spec.forEach(function (pair) {
      if (!(Array.isArray(pair) && pair.length === 2 && Array.isArray(pair[0])
          && pair[0].every(function (t) { return t === "global" || t === "local"; })
          && isInt(pair[1]) && pair[1] >= 0n && pair[1] <= BigInt(MAX_LAYERS))) {
        throw bad;
      }
      const times = Number(pair[1]);
      total += pair[0].length * times;
      local += pair[0].filter(function (t) { return t === "local"; }).length * times;
    });
    if (total !== layers) {
      throw ConfigError(key, "describes " + total + " layers for " + layers + " layers");
    }
    return local;
  }

  function slidingCount(cfg, layers, win, notes) {
    if (hasOwn(win, "layer_pattern")) return localLayers(cfg, layers, win);
    const types = get(cfg, "layer_types");
    if (types !== null) {
      if (!Array.isArray(types) || !types.every(function (t) { return typeof t === "string"; })) {
        throw ConfigError("layer_types", "must be a list of strings");
      }
      if (types.length !== layers) {
        throw ConfigError("layer_types", "has " + types.length + " entries for " + layers
          + " layers");
      }
      const kind = win.chunked ? "chunked_attention" : "sliding_attention";
      if (types.some(t => t !== kind && t !== "full_attention"
                       && UNCACHED_KINDS.indexOf(t) < 0)) {
        notes.push("Layer types other than sliding/full attention are counted as full.");
      }
      return types.filter(function (t) { return t === kind; }).length;
    }
    if (win.chunked || win.rope_free) { // Llama 4 chunks the layers with RoPE, SmolLM3
      // slides those without; with no list, RoPE is off on every p-th layer
      let listed = get(cfg, "no_rope_layers");
      if (listed !== null && !Array.isArray(listed) || Array.isArray(listed) && listed.length
          && (listed.length !== layers || !listed.every(v => isInt(v) && (v === 0n || v === 1n)))) {
        throw ConfigError("no_rope_layers", "must be " + layers + " ones and zeros");
      }
      if (!Array.isArray(listed) || !listed.length) {
        const every = BigInt(count(cfg, ["no_rope_layer_interval"], MAX_LAYERS, 4));
        listed = Array.from({length: layers}, (_, i) => (BigInt(i + 1) % every !== 0n ? 1n : 0n));
      }
      return listed.filter(v => v === (win.chunked ? 1n : 0n)).length;
    }
    if (present(cfg, "sliding_window_pattern") || hasOwn(win, "pattern_default")) {
      const every = count(cfg, ["sliding_window_pattern"], MAX_LAYERS,
        hasOwn(win, "pattern_default") ? win.pattern_default : NO_DEFAULT);
      return layers - Math.floor(layers / every);
    }
    if (win.alternate) return Math.floor((layers + 1) / 2);
    if (get(cfg, "use_sliding_window") === true && present(cfg, "max_window_layers")) {
      const first = count(cfg, ["max_window_layers"], MAX_LAYERS, NO_DEFAULT, 0);
      return Math.max(layers - first, 0);
    }
    return layers;
  }

  function windowOf(cfg, layers, row, notes, attending) { // attending: layers with attention
    const unwindowed = { sliding_window: null, sliding_layers: 0 };
    if (flag(cfg, "use_sliding_window") === false) return unwindowed;
    const r = windowRule(row), value = pick(cfg, r.names)[1];
    let width;
    if (value === MISSING || value === null) width = r["default"].value;
    else width = count(cfg, r.names, MAX_POSITIONS);
    if (width === null) return unwindowed;
    const sliding = Math.min(slidingCount(cfg, layers, r, notes), attending);
    if (!sliding) return unwindowed;
    const w = grouped(width);
    if (r.chunked) {
      notes.push("Chunked attention of " + w + " tokens on " + sliding + " of " + layers
        + " layers: there a query sees only its own chunk's keys and the cache holds at most "
        + w + " tokens, as Transformers keeps it; the attention is counted as a sliding "
        + "window of " + w + " keys, an upper bound (about twice what a chunked query sees on "
        + "average over a long prompt).");
    } else {
      notes.push("Sliding window of " + w + " tokens on " + sliding + " of " + layers
        + " layers: there a query sees at most " + w + " keys and the cache holds at most "
        + w + " tokens.");
    }
    return { sliding_window: width, sliding_layers: sliding };
  }

  // costs.UNCACHED_KINDS: layer_types' kinds for layers that keep no keys and values
  const UNCACHED_KINDS = ["linear_attention", "conv", "mamba", "recurrent", "mlp", "moe"];

  const STATE_KINDS = ["linear_attention", "conv", "mamba", "recurrent"];
  const PATTERN_KINDS = {"M": "mamba", "*": "full_attention", "-": "mlp", "E": "moe"};
  const MAX_STATE_FIELD = 1000000n, MAX_STATE_VALUES = 2n ** 53n - 1n;

  function layerKinds(cfg, layers) { // costs._layer_kinds
    for (const key of ["layer_types", "layers_block_type"]) {
      const types = get(cfg, key);
      if (Array.isArray(types) && types.length === layers
          && types.every(t => typeof t === "string")) return types;
    }
    const pattern = get(cfg, "hybrid_override_pattern");
    if (typeof pattern === "string" && codePoints(pattern).length === layers
        && codePoints(pattern).every(c => hasOwn(PATTERN_KINDS, c))) {
      return codePoints(pattern).map(c => PATTERN_KINDS[c]);
    }
    const period = get(cfg, "attn_layer_period"), offset = get(cfg, "attn_layer_offset");
    const range = Array.from({length: layers}, (_, i) => BigInt(i));
    if (whole(period) && period >= 1n && whole(offset)) {
      if (offset < 0n || offset >= period) {
        throw ConfigError("attn_layer_offset", "is " + offset + "; it must be from 0 to one "
          + "less than attn_layer_period (" + period + ")");
      }
      return range.map(i => (i % period === offset ? "full_attention" : "mamba"));
    }
    const indices = get(cfg, "attn_layer_indices");
    if (Array.isArray(indices) && indices.every(whole)) {
      return range.map(i => (indices.indexOf(i) >= 0 ? "full_attention" : "mamba"));
    }
    const every = get(cfg, "full_attention_interval");
    if (whole(every) && every >= 1n) {
      return range.map(i => ((i + 1n) % every === 0n ? "full_attention" : "linear_attention"));
    }
    return null;
  }

  function uncachedLayers(kinds, layers, stated, notes) { // costs._uncached_layers
    const uncached = (kinds || []).filter(t => UNCACHED_KINDS.indexOf(t) >= 0).length;
    if (uncached) {
      const shown = UNCACHED_KINDS.filter(k => kinds.indexOf(k) >= 0).join(", ");
      const rest = layers - uncached;
      const state = stated ? "the fixed state they keep is its own figure"
        : "any fixed state they keep is not counted";
      notes.push(rest ? uncached + " of " + layers + " layers (" + shown + ") hold no KV "
        + "cache: the KV figures, the attention FLOPs and the crossover count the other " + rest
        + " layer" + (rest === 1 ? "" : "s") + "; " + state + "."
        : "All " + layers + " layers (" + shown + ") hold no KV cache, so the KV figures, the "
        + "attention FLOPs and the crossover are zero; " + state + ".");
    }
    return uncached;
  }

  function stateFields(type) { // config_families.state_fields
    const rule = stateRule(type) || {}, sizes = new Set();
    Object.values(T.BASE).forEach(r => r.names.forEach(n => sizes.add(n)));
    const out = new Set();
    ["conv", "recurrent"].forEach(part => (rule[part] || []).forEach(product => product.forEach(
      function (f) { if (typeof f === "string" && !sizes.has(f)) out.add(f); })));
    return Array.from(out).sort();
  }

  function stateRule(type) { // config_families.state_rule
    if (hasOwn(T.STATES, type)) return T.STATES[type];
    const text = hasOwn(T.TEXT_OF, type) ? T.TEXT_OF[type] : "";
    return hasOwn(T.STATES, text) ? T.STATES[text] : null;
  }

  function state(cfg, type, kinds, layers, notes) { // costs._state
    const none = {state_layers: 0, state_per_layer: 0};
    const rule = stateRule(type);
    if (rule === null) return none;
    const n = rule.every_layer ? layers
      : (kinds || []).filter(k => STATE_KINDS.indexOf(k) >= 0).length;
    if (!n) return none;
    const parts = {};
    for (const part of ["conv", "recurrent"]) {
      parts[part] = 0n;
      for (const product of rule[part]) {
        let value = 1n;
        for (const factor of product) {
          if (typeof factor !== "string") { value *= BigInt(factor); continue; }
          const field = get(cfg, factor);
          if (!(whole(field) && field >= 1n && field <= MAX_STATE_FIELD)) {
            const why = field === null ? "the file has no " + factor : factor + " is "
              + show(field) + ", not a whole number from 1 to " + grouped(MAX_STATE_FIELD);
            notes.push("The " + n + " " + rule.kind + " layers' fixed state is not counted: "
              + why + ".");
            return none;
          }
          value *= field;
        }
        parts[part] += value;
      }
    }
    const per = parts.conv + parts.recurrent;
    if (per > MAX_STATE_VALUES) {
      notes.push("The " + n + " " + rule.kind + " layers' fixed state is not counted: "
        + grouped(per) + " values a layer is past what this version reads.");
      return none;
    }
    notes.push("Each of the " + n + " " + rule.kind + " layers keeps a fixed state per user "
      + (rule.every_layer ? "beside its attention" : "instead of a KV cache")
      + ", at any context: " + grouped(per) + " values a layer (" + grouped(parts.conv)
      + " convolution, " + grouped(parts.recurrent) + " recurrent), "
      + grouped(BigInt(n) * per) + " in all.");
    return {state_layers: n, state_per_layer: Number(per)};
  }

  const LAYOUT_FIELDS = ["layer_types", "layers_block_type", "hybrid_override_pattern",
    "attn_layer_period", "attn_layer_offset", "attn_layer_indices", "full_attention_interval"];

  function unlistedKinds(unlisted, layers) { // costs._unlisted_kinds
    if (typeof unlisted === "string") return new Array(layers).fill(unlisted);
    const every = unlisted.interval;
    const kinds = Array.from({length: layers},
      (_, i) => ((i + 1) % every === 0 ? "full_attention" : "linear_attention"));
    if (unlisted.last && layers && !kinds.includes("full_attention")) {
      kinds[layers - 1] = "full_attention";
    }
    return kinds;
  }

  function hybrid(cfg, type, layers, notes) { // costs._hybrid
    let kinds = layerKinds(cfg, layers);
    const said = [], rule = stateRule(type);
    if (rule !== null && rule.unlisted && LAYOUT_FIELDS.every(k => get(cfg, k) === null)) {
      kinds = unlistedKinds(rule.unlisted, layers); // as its class lays it out
    }
    const st = state(cfg, type, kinds, layers, said);
    const uncached = uncachedLayers(kinds, layers, st.state_layers > 0, notes);
    said.forEach(n => notes.push(n));
    return Object.assign({uncached_layers: uncached}, st);
  }

  function tied(cfg, row, notes) {
    const t = flag(cfg, "tie_word_embeddings");
    if (t !== null) return t;
    if (row.tied === null) {
      notes.push("tie_word_embeddings is absent: assumed untied (a separate lm_head).");
      return false;
    }
    return row.tied;
  }

  function displayName(cfg, name, type) {
    const candidates = [name, get(cfg, "_name_or_path"), type];
    for (let i = 0; i < candidates.length; i++) {
      const c = candidates[i];
      if (typeof c === "string" && strip(c)) return codePoints(strip(c)).slice(0, NAME_LIMIT).join("");
    }
    return "custom model";
  }

  function from_config(cfg, name) { // parsed config (a Map) -> ModelShape, or ConfigError
    if (!isMap(cfg)) throw ConfigError(WHOLE_FILE, "must be a JSON object, got " + jsonType(cfg));
    const notes = [];
    cfg = languageModel(cfg, notes);
    const type = modelType(cfg), row = familyOf(cfg, type, notes);
    cfg = classDefaults(cfg, type, row, notes);
    const mla = present(cfg, "kv_lora_rank");
    const got = figures(cfg, row, mla ? ["head_dim"] : [])[0];
    const attention = mla ? mlaHeads(cfg, got.heads, got.kv_heads, notes)
      : { head_dim: got.head_dim, v_head_dim: got.head_dim, kv_heads: got.kv_heads };
    const m = { name: displayName(cfg, name, type), layers: got.layers, hidden: got.hidden,
      intermediate: got.intermediate, heads: got.heads, kv_heads: attention.kv_heads,
      head_dim: attention.head_dim, v_head_dim: attention.v_head_dim, vocab: got.vocab };
    m.tied = tied(cfg, row, notes);
    m.max_positions = got.max_positions;
    m.embedding_width = got.embedding_width;
    m.mlp_matrices = row.mlp_matrices === null ? 3 : row.mlp_matrices; // unknown: said above
    const experts = moe(cfg, got.layers, got.hidden, got.intermediate, notes, row);
    const said = []; // the hybrid's notes, said after the window's
    const layout = hybrid(cfg, type, got.layers, said);
    const win = windowOf(cfg, got.layers, row, notes, got.layers - layout.uncached_layers);
    Object.assign(m, experts, win, layout);
    notes.push(...said);
    m.attention_layers = m.layers - m.uncached_layers;
    m.mla = !!attention.mla;
    m.q_lora_rank = attention.mla ? attention.q_lora_rank : null;
    m.kv_lora_rank = attention.mla ? attention.kv_lora_rank : 0;
    m.qk_rope_head_dim = attention.mla ? attention.qk_rope_head_dim : 0;
    m.learned_positions = row.learned_positions;
    Object.assign(m, quantization(cfg, notes));
    if (m.quant_method === "bitsandbytes" && m.num_experts) {
      notes.push("Routed experts stay at the weight dtype chosen: Transformers keeps them "
        + "fused in 3-D tensors, which bitsandbytes does not quantize.");
    }
    const small = tensors(cfg, row, m);
    m.small_params = small[0];
    m.extra_matmul_params = small[1];
    ignoredFields(cfg, row, got, notes);
    m.notes = notes;
    m.moe_layers = m.layers - m.dense_layers;
    return Object.freeze(m);
  }

  function preset(key) { // "qwen3-8b" -> ModelShape
    if (typeof key !== "string" || !hasOwn(T.PRESETS, key)) {
      throw ConfigError("model", "unknown preset " + show(key) + "; choose one of "
        + Object.keys(T.PRESETS).sort().join(", "));
    }
    return from_config(parse_config_text(T.PRESETS[key]),
      T.PRESET_NAMES[key]);
  }


  parts.families = {bind, from_config, preset};
})();
