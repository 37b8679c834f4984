// Runs the cost model (static/cost_model_text.js, cost_model_families.js and cost_model.js,
// in that order, or the copies named in argv[2..]) on the cases that
// tests/test_cost_model_js.py writes to stdin as JSON: {"table": {...}, "cases": [...]}.
// A case: {"input": {"text": s} | {"b64": s} | {"value": v}, "name": s?, "calls": [...]};
// a call: [function name, arg, ...]: "M" is the case's ModelShape, {"i": "2"} an int (BigInt),
// {"kw": {...}} keyword arguments (the options object), anything else as JSON gives it;
// a name starting with "." reads that property (".GPUS").
// Writes one JSON array: per case {"shape": {...} | "error": {...}, "calls": [...]}.
"use strict";
const path = require("path");
const PARTS = ["cost_model_text.js", "cost_model_families.js", "cost_model.js"];
const scripts = process.argv.length > 2 ? process.argv.slice(2)
  : PARTS.map((name) => path.join(__dirname, "..", "..", "static", name));
scripts.forEach((script) => require(path.resolve(script))); // each adds itself to AE
const costModel = globalThis.AE.costModel;

function encode(v) { // a result -> JSON-able: BigInt as {"i": digits}, non-finite as text
  if (typeof v === "bigint") return { i: v.toString() };
  if (typeof v === "number") {
    if (Number.isNaN(v)) return "nan";
    if (v === Infinity) return "inf";
    if (v === -Infinity) return "-inf";
    return v;
  }
  if (Array.isArray(v)) return v.map(encode);
  if (v && typeof v === "object") {
    const out = {};
    for (const k of Object.keys(v)) out[k] = encode(v[k]);
    return out;
  }
  return v;
}

function failure(e) {
  if (!e.pyType) throw e; // a JavaScript bug, not a mirrored Python error
  return { error: { type: e.pyType, message: e.message, field: e.field === undefined ? null
    : e.field, problem: e.problem === undefined ? null : e.problem } };
}

function decodeArg(a, m) {
  if (a === "M") return m;
  if (a && typeof a === "object" && !Array.isArray(a)) {
    if ("i" in a) return BigInt(a.i);
    if ("kw" in a) {
      const out = {};
      for (const k of Object.keys(a.kw)) out[k] = decodeArg(a.kw[k], m);
      return out;
    }
  }
  return a;
}

const chunks = [];
process.stdin.on("data", (c) => chunks.push(c));
process.stdin.on("end", () => {
  const job = JSON.parse(Buffer.concat(chunks).toString("utf8"));
  const cm = costModel.create(job.table);
  const results = job.cases.map((c) => {
    let m = null;
    const out = {};
    try {
      let input;
      if ("text" in c.input) input = c.input.text;
      else if ("b64" in c.input) input = new Uint8Array(Buffer.from(c.input.b64, "base64"));
      else input = c.input.value;
      m = cm.from_config(cm.parse_config_text(input), c.name);
      out.shape = encode(m);
    } catch (e) {
      Object.assign(out, failure(e));
    }
    out.calls = (c.calls || []).map((call) => {
      const args = call.slice(1);
      if (m === null && args.indexOf("M") >= 0) return null;
      if (call[0][0] === ".") return { value: encode(cm[call[0].slice(1)]) }; // a table
      try {
        return { value: encode(cm[call[0]].apply(null, args.map((a) => decodeArg(a, m)))) };
      } catch (e) {
        return failure(e);
      }
    });
    return out;
  });
  process.stdout.write(JSON.stringify(results));
});
