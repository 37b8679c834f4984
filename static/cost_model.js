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
   A classic script: one global, AE.costModel; module.exports in node. */
(function () {
  "use strict";

  // Python's json C scanner gives up at about this many open brackets (995 when called
  // from the top of a program; fewer from deep in a stack); past it costs.py says "nests".
  const PARSE_DEPTH = 995;
  const SHOW_LIMIT = 60; // _show: longest quoted value in a message
  const NAME_LIMIT = 120; // _display_name: longest name

  // --- Python's errors ------------------------------------------------------------------

  function PyError(type, message) {
    const e = new Error(message);
    e.name = type;
    e.pyType = type;
    return e;
  }

  function ConfigError(field, problem) {
    const e = PyError("ConfigError", field + ": " + problem);
    e.field = field;
    e.problem = problem;
    return e;
  }

  function NonFinite(token) { this.token = token; }

  const MISSING = undefined;

  function hasOwn(obj, key) { return Object.prototype.hasOwnProperty.call(obj, key); }
  function isMap(v) { return v instanceof Map; }
  function isInt(v) { return typeof v === "bigint"; }
  function isFloat(v) { return typeof v === "number"; }

  // --- Python's text: code points, strip(), repr(), json.dumps(), format(n, ",") ----------

  function runsToTest(flat) { // [gap, length, ...] -> code point -> bool
    const starts = [], ends = [];
    let at = 0;
    for (let i = 0; i < flat.length; i += 2) {
      const s = at + flat[i];
      starts.push(s);
      ends.push(s + flat[i + 1]);
      at = s + flat[i + 1];
    }
    return function (cp) {
      let lo = 0, hi = starts.length - 1;
      while (lo <= hi) {
        const mid = (lo + hi) >> 1;
        if (cp < starts[mid]) hi = mid - 1;
        else if (cp >= ends[mid]) lo = mid + 1;
        else return true;
      }
      return false;
    };
  }

  function codePoints(s) { return Array.from(s); } // lone surrogates stay one element each

  function grouped(n) { // Python's format(n, ",")
    let s = String(n);
    const neg = s[0] === "-";
    if (neg) s = s.slice(1);
    const out = s.replace(/\B(?=(\d{3})+(?!\d))/g, ",");
    return neg ? "-" + out : out;
  }

  function floatRepr(x) { // Python's repr(float)
    if (x !== x) return "nan";
    if (x === Infinity) return "inf";
    if (x === -Infinity) return "-inf";
    if (x === 0) return Object.is(x, -0) ? "-0.0" : "0.0";
    const sign = x < 0 ? "-" : "";
    const parts = Math.abs(x).toExponential().split("e");
    const digits = parts[0].replace(".", ""), exp = parseInt(parts[1], 10);
    if (exp < -4 || exp >= 16) {
      const mant = digits.length > 1 ? digits[0] + "." + digits.slice(1) : digits;
      const e = Math.abs(exp);
      return sign + mant + "e" + (exp < 0 ? "-" : "+") + (e < 10 ? "0" + e : String(e));
    }
    if (exp < 0) return sign + "0." + "0".repeat(-exp - 1) + digits;
    const whole = digits.length > exp + 1 ? digits.slice(0, exp + 1)
      : digits + "0".repeat(exp + 1 - digits.length);
    const frac = digits.length > exp + 1 ? digits.slice(exp + 1) : "0";
    return sign + whole + "." + frac;
  }

  function hex(n, width) {
    const h = n.toString(16);
    return "0".repeat(Math.max(0, width - h.length)) + h;
  }

  const JSON_ESCAPES = { "\"": "\\\"", "\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t",
    "\b": "\\b", "\f": "\\f" };

  function dumpString(s) { // json.dumps(str), ensure_ascii
    let out = "\"";
    for (let i = 0; i < s.length; i++) {
      const ch = s[i], c = s.charCodeAt(i);
      if (hasOwn(JSON_ESCAPES, ch)) out += JSON_ESCAPES[ch];
      else if (c < 0x20 || c > 0x7e) out += "\\u" + hex(c, 4);
      else out += ch;
    }
    return out + "\"";
  }

  function dumps(v) { // json.dumps(v, allow_nan=True): ", " and ": " separators
    if (v === null || v === undefined) return "null";
    if (v === true) return "true";
    if (v === false) return "false";
    if (isInt(v)) return v.toString();
    if (isFloat(v)) {
      if (v !== v) return "NaN";
      if (v === Infinity) return "Infinity";
      if (v === -Infinity) return "-Infinity";
      return floatRepr(v);
    }
    if (typeof v === "string") return dumpString(v);
    if (Array.isArray(v)) return "[" + v.map(dumps).join(", ") + "]";
    if (isMap(v)) {
      const items = [];
      v.forEach(function (val, key) { items.push(dumpString(key) + ": " + dumps(val)); });
      return "{" + items.join(", ") + "}";
    }
    throw PyError("TypeError", "cannot show " + String(v));
  }

  function show(value) { // costs._show
    const text = dumps(value); // ASCII only: code units are code points
    return text.length <= SHOW_LIMIT ? text : text.slice(0, SHOW_LIMIT - 1) + "\u2026";
  }

  function jsonType(value) { // costs._json_type
    if (Array.isArray(value)) return "an array";
    if (typeof value === "string") return "a string";
    if (typeof value === "boolean") return "a boolean";
    if (value === null) return "null";
    if (value instanceof NonFinite) return "a non-finite number";
    if (isInt(value) || isFloat(value)) return "a number";
    return isMap(value) ? "dict" : typeof value;
  }

  function pyTypeName(v) { // type(v).__name__ for what a caller might hand over
    if (v === null || v === undefined) return "NoneType";
    if (typeof v === "boolean") return "bool";
    if (isInt(v) || (isFloat(v) && Number.isInteger(v))) return "int";
    if (isFloat(v)) return "float";
    if (Array.isArray(v)) return "list";
    return "dict";
  }

  // --- the model, bound to Python's table -------------------------------------------------

  // One closure over the table, its parts by concern below (the parser, the family table's
  // readers, the closed forms): the one function of static/ over ESLint's 80 lines, until
  // those parts become modules of their own (issue 39)
  // eslint-disable-next-line max-lines-per-function
  function create(table) {
    const T = table;
    const WHOLE_FILE = T.WHOLE_FILE, MAX_CONFIG_BYTES = T.MAX_CONFIG_BYTES;
    const MAX_NESTING = T.MAX_NESTING, LIMITS = T.LIMITS;
    const MAX_LAYERS = LIMITS.layers, MAX_HIDDEN = LIMITS.hidden;
    const MAX_HEAD_DIM = LIMITS.head_dim, MAX_INTERMEDIATE = LIMITS.intermediate;
    const MAX_POSITIONS = LIMITS.max_positions, MAX_EXPERTS = T.MAX_EXPERTS;
    const EXPERT_MATRICES = BigInt(T.EXPERT_MATRICES);
    const isSpace = runsToTest(T.UNICODE.space);
    const unprintable = runsToTest(T.UNICODE.unprintable);

    function strip(s) { // str.strip(): Python's whitespace, by code point
      const cps = codePoints(s);
      let a = 0, b = cps.length;
      while (a < b && isSpace(cps[a].codePointAt(0))) a++;
      while (b > a && isSpace(cps[b - 1].codePointAt(0))) b--;
      return cps.slice(a, b).join("");
    }

    function reprStr(s) { // repr(str)
      const quote = s.indexOf("'") >= 0 && s.indexOf("\"") < 0 ? "\"" : "'";
      let out = quote;
      codePoints(s).forEach(function (ch) {
        const cp = ch.codePointAt(0);
        if (ch === quote || ch === "\\") out += "\\" + ch;
        else if (ch === "\t") out += "\\t";
        else if (ch === "\n") out += "\\n";
        else if (ch === "\r") out += "\\r";
        else if (cp < 0x20 || cp === 0x7f) out += "\\x" + hex(cp, 2);
        else if (cp < 0x7f || !unprintable(cp)) out += ch;
        else if (cp <= 0xff) out += "\\x" + hex(cp, 2);
        else if (cp <= 0xffff) out += "\\u" + hex(cp, 4);
        else out += "\\U" + hex(cp, 8);
      });
      return out + quote;
    }

    function repr(v) { // repr() of what a caller may pass as a kernel or dtype name
      if (typeof v === "string") return reprStr(v);
      if (v === null || v === undefined) return "None";
      if (v === true) return "True";
      if (v === false) return "False";
      if (isInt(v)) return v.toString();
      if (isFloat(v)) return floatRepr(v);
      return dumps(v);
    }

    // --- parse_config_text --------------------------------------------------------------

    function asText(text) { // costs._as_bytes, then the utf-8-sig decode -> a JS string
      if (typeof text === "string") {
        let cps = 0, bytes = 0, bad = false;
        for (let i = 0; i < text.length; i++) {
          const c = text.charCodeAt(i);
          cps++;
          if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length) {
            const d = text.charCodeAt(i + 1);
            if (d >= 0xdc00 && d <= 0xdfff) { i++; bytes += 4; continue; }
          }
          if (c >= 0xd800 && c <= 0xdfff) bad = true;
          bytes += c < 0x80 ? 1 : c < 0x800 ? 2 : 3;
        }
        if (cps > MAX_CONFIG_BYTES) {
          throw ConfigError(WHOLE_FILE, "is over the " + grouped(MAX_CONFIG_BYTES)
            + "-byte limit");
        }
        if (bad) throw ConfigError(WHOLE_FILE, "holds characters that are not valid Unicode");
        if (bytes > MAX_CONFIG_BYTES) {
          throw ConfigError(WHOLE_FILE, "is " + grouped(bytes) + " bytes; the limit is "
            + grouped(MAX_CONFIG_BYTES));
        }
        return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
      }
      let data;
      if (text instanceof Uint8Array) data = text;
      else if (text instanceof ArrayBuffer) data = new Uint8Array(text);
      else throw ConfigError(WHOLE_FILE, "must be text or bytes, got " + pyTypeName(text));
      if (data.length > MAX_CONFIG_BYTES) {
        throw ConfigError(WHOLE_FILE, "is " + grouped(data.length) + " bytes; the limit is "
          + grouped(MAX_CONFIG_BYTES));
      }
      if (data[0] === 0xef && data[1] === 0xbb && data[2] === 0xbf) data = data.subarray(3);
      const at = badUtf8(data);
      if (at >= 0) {
        throw ConfigError(WHOLE_FILE, "is not UTF-8 text (bad byte at offset " + at
          + "); is it a binary file?");
      }
      return new TextDecoder("utf-8", { ignoreBOM: true }).decode(data);
    }

    function badUtf8(b) { // -> offset of the first byte Python's decoder refuses, or -1
      const n = b.length;
      let i = 0;
      while (i < n) {
        const c = b[i];
        if (c < 0x80) { i++; continue; }
        let need, lo = 0x80, hi = 0xbf;
        if (c >= 0xc2 && c <= 0xdf) need = 1;
        else if (c >= 0xe0 && c <= 0xef) {
          need = 2;
          if (c === 0xe0) lo = 0xa0;
          if (c === 0xed) hi = 0x9f;
        } else if (c >= 0xf0 && c <= 0xf4) {
          need = 3;
          if (c === 0xf0) lo = 0x90;
          if (c === 0xf4) hi = 0x8f;
        } else return i;
        for (let k = 1; k <= need; k++) {
          const x = b[i + k];
          if (x === undefined) return i;
          if (k === 1 ? (x < lo || x > hi) : (x < 0x80 || x > 0xbf)) return i;
        }
        i += need + 1;
      }
      return -1;
    }

    function isWs(c) { return c === 32 || c === 9 || c === 10 || c === 13; }
    function isDigit(c) { return c >= 48 && c <= 57; }

    function Scanner(s) { this.s = s; this.depth = 0; }

    function decodeError(msg, s, pos) { // JSONDecodeError -> its (msg, lineno, colno)
      const e = PyError("JSONDecodeError", msg);
      e.jsonMsg = msg;
      const head = s.slice(0, pos), nl = head.lastIndexOf("\n");
      e.lineno = head.split("\n").length;
      e.colno = codePoints(head).length - (nl < 0 ? -1 : codePoints(s.slice(0, nl)).length);
      return e;
    }

    function StopIteration(pos) { this.pos = pos; }

    Scanner.prototype.string = function (end) { // _json's scanstring_unicode -> [str, end]
      const s = this.s, len = s.length, begin = end - 1, chunks = [];
      let next, c;
      for (;;) {
        c = 0;
        for (next = end; next < len; next++) {
          c = s.charCodeAt(next);
          if (c === 34 || c === 92) break;
          if (c <= 0x1f) throw decodeError("Invalid control character at", s, next);
        }
        if (!(c === 34 || c === 92) || next >= len) {
          throw decodeError("Unterminated string starting at", s, begin);
        }
        if (next !== end) chunks.push(s.slice(end, next));
        next++;
        if (c === 34) { end = next; break; }
        if (next === len) throw decodeError("Unterminated string starting at", s, begin);
        c = s.charCodeAt(next);
        if (c !== 117) { // not \u
          end = next + 1;
          const ch = { 34: "\"", 92: "\\", 47: "/", 98: "\b", 102: "\f", 110: "\n", 114: "\r",
            116: "\t" }[c];
          if (ch === undefined) throw decodeError("Invalid \\escape", s, end - 2);
          chunks.push(ch);
          continue;
        }
        next++;
        end = next + 4;
        if (end >= len) throw decodeError("Invalid \\uXXXX escape", s, next - 1);
        const u = hex4(s, next);
        if (u < 0) throw decodeError("Invalid \\uXXXX escape", s, end - 5);
        next = end;
        if (u >= 0xd800 && u <= 0xdbff && end + 6 < len && s[next] === "\\"
            && s[next + 1] === "u") {
          end += 6;
          const u2 = hex4(s, next + 2);
          if (u2 < 0) throw decodeError("Invalid \\uXXXX escape", s, end - 5);
          if (u2 >= 0xdc00 && u2 <= 0xdfff) {
            chunks.push(String.fromCharCode(u, u2));
            continue;
          }
          end -= 6;
        }
        chunks.push(String.fromCharCode(u));
      }
      return [chunks.join(""), end];
    };

    function hex4(s, at) { // 4 hex digits at s[at..] -> value, or -1
      let v = 0;
      for (let k = 0; k < 4; k++) {
        const c = s.charCodeAt(at + k);
        let d;
        if (c >= 48 && c <= 57) d = c - 48;
        else if (c >= 97 && c <= 102) d = c - 87;
        else if (c >= 65 && c <= 70) d = c - 55;
        else return -1;
        v = v * 16 + d;
      }
      return v;
    }

    Scanner.prototype.enter = function () {
      if (++this.depth >= PARSE_DEPTH) {
        throw ConfigError(WHOLE_FILE, "nests more than " + MAX_NESTING + " levels deep");
      }
    };

    Scanner.prototype.object = function (idx) { // -> [Map, end]
      const s = this.s, end = s.length - 1, out = new Map();
      let r;
      while (idx <= end && isWs(s.charCodeAt(idx))) idx++;
      if (idx > end || s[idx] !== "}") {
        for (;;) {
          if (idx > end || s[idx] !== "\"") {
            throw decodeError("Expecting property name enclosed in double quotes", s, idx);
          }
          r = this.string(idx + 1);
          const key = r[0];
          idx = r[1];
          while (idx <= end && isWs(s.charCodeAt(idx))) idx++;
          if (idx > end || s[idx] !== ":") throw decodeError("Expecting ':' delimiter", s, idx);
          idx++;
          while (idx <= end && isWs(s.charCodeAt(idx))) idx++;
          r = this.value(idx);
          out.set(key, r[0]);
          idx = r[1];
          while (idx <= end && isWs(s.charCodeAt(idx))) idx++;
          if (idx <= end && s[idx] === "}") break;
          if (idx > end || s[idx] !== ",") throw decodeError("Expecting ',' delimiter", s, idx);
          idx++;
          while (idx <= end && isWs(s.charCodeAt(idx))) idx++;
        }
      }
      return [out, idx + 1];
    };

    Scanner.prototype.array = function (idx) { // -> [Array, end]
      const s = this.s, end = s.length - 1, out = [];
      let r;
      while (idx <= end && isWs(s.charCodeAt(idx))) idx++;
      if (idx > end || s[idx] !== "]") {
        for (;;) {
          r = this.value(idx);
          out.push(r[0]);
          idx = r[1];
          while (idx <= end && isWs(s.charCodeAt(idx))) idx++;
          if (idx <= end && s[idx] === "]") break;
          if (idx > end || s[idx] !== ",") throw decodeError("Expecting ',' delimiter", s, idx);
          idx++;
          while (idx <= end && isWs(s.charCodeAt(idx))) idx++;
        }
      }
      return [out, idx + 1];
    };

    Scanner.prototype.value = function (idx) { // _json's scan_once_unicode -> [value, end]
      const s = this.s, len = s.length;
      let r;
      if (idx >= len) throw new StopIteration(idx);
      const ch = s[idx];
      if (ch === "\"") return this.string(idx + 1);
      if (ch === "{" || ch === "[") {
        this.enter();
        r = ch === "{" ? this.object(idx + 1) : this.array(idx + 1);
        this.depth--;
        return r;
      }
      if (ch === "n" && s.substr(idx, 4) === "null") return [null, idx + 4];
      if (ch === "t" && s.substr(idx, 4) === "true") return [true, idx + 4];
      if (ch === "f" && s.substr(idx, 5) === "false") return [false, idx + 5];
      if (ch === "N" && s.substr(idx, 3) === "NaN") return [new NonFinite("NaN"), idx + 3];
      if (ch === "I" && s.substr(idx, 8) === "Infinity") {
        return [new NonFinite("Infinity"), idx + 8];
      }
      if (ch === "-" && s.substr(idx, 9) === "-Infinity") {
        return [new NonFinite("-Infinity"), idx + 9];
      }
      return this.number(idx);
    };

    Scanner.prototype.number = function (start) { // _match_number_unicode
      const s = this.s, endIdx = s.length - 1;
      let idx = start, isFloat_ = false;
      if (s[idx] === "-") {
        idx++;
        if (idx > endIdx) throw new StopIteration(start);
      }
      const c = s.charCodeAt(idx);
      if (c >= 49 && c <= 57) {
        idx++;
        while (idx <= endIdx && isDigit(s.charCodeAt(idx))) idx++;
      } else if (c === 48) idx++;
      else throw new StopIteration(start);
      if (idx < endIdx && s[idx] === "." && isDigit(s.charCodeAt(idx + 1))) {
        isFloat_ = true;
        idx += 2;
        while (idx <= endIdx && isDigit(s.charCodeAt(idx))) idx++;
      }
      if (idx < endIdx && (s[idx] === "e" || s[idx] === "E")) {
        const eStart = idx;
        idx++;
        if (idx < endIdx && (s[idx] === "-" || s[idx] === "+")) idx++;
        while (idx <= endIdx && isDigit(s.charCodeAt(idx))) idx++;
        if (isDigit(s.charCodeAt(idx - 1))) isFloat_ = true;
        else idx = eStart;
      }
      const token = s.slice(start, idx);
      if (isFloat_) { // costs._finite_float
        const x = Number(token);
        return [isFinite(x) ? x : new NonFinite(token), idx];
      }
      const digits = token[0] === "-" ? token.length - 1 : token.length;
      if (digits > T.INT_MAX_STR_DIGITS) {
        const e = PyError("ValueError", "Exceeds the limit (" + T.INT_MAX_STR_DIGITS
          + " digits) for integer string conversion: value has " + digits
          + " digits; use sys.set_int_max_str_digits() to increase the limit");
        throw e;
      }
      return [BigInt(token), idx];
    };

    function jsonLoads(s) { // json.loads(s) with costs' parse_constant and parse_float
      if (s.charCodeAt(0) === 0xfeff) {
        throw decodeError("Unexpected UTF-8 BOM (decode using utf-8-sig)", s, 0);
      }
      const sc = new Scanner(s);
      let idx = 0, r;
      while (idx < s.length && isWs(s.charCodeAt(idx))) idx++;
      try {
        r = sc.value(idx);
      } catch (e) {
        if (e instanceof StopIteration) throw decodeError("Expecting value", s, e.pos);
        throw e;
      }
      let end = r[1];
      while (end < s.length && isWs(s.charCodeAt(end))) end++;
      if (end !== s.length) throw decodeError("Extra data", s, end);
      return r[0];
    }

    function checkTree(cfg) { // costs._check_tree
      const stack = [[cfg, null, 1]];
      while (stack.length) {
        const top = stack.pop(), value = top[0], path = top[1], depth = top[2];
        if (value instanceof NonFinite) {
          throw ConfigError(path, value.token + " is not a finite number");
        }
        if (isMap(value) || Array.isArray(value)) {
          if (depth > MAX_NESTING) {
            throw ConfigError(WHOLE_FILE, "nests more than " + MAX_NESTING + " levels deep");
          }
          if (Array.isArray(value)) {
            for (let i = 0; i < value.length; i++) {
              stack.push([value[i], path + "[" + i + "]", depth + 1]);
            }
          } else {
            value.forEach(function (child, key) {
              stack.push([child, path === null ? key : path + "." + key, depth + 1]);
            });
          }
        }
      }
    }

    function parse_config_text(text) { // config.json contents -> Map, or ConfigError
      const decoded = asText(text);
      if (decoded.indexOf("\u0000") >= 0) {
        throw ConfigError(WHOLE_FILE, "contains NUL bytes; is it a binary file?");
      }
      if (!strip(decoded)) throw ConfigError(WHOLE_FILE, "is empty");
      let cfg;
      try {
        cfg = jsonLoads(decoded);
      } catch (e) {
        if (e.pyType === "JSONDecodeError") {
          throw ConfigError(WHOLE_FILE, "is not valid JSON (" + e.jsonMsg + " at line "
            + e.lineno + ", column " + e.colno + ")");
        }
        if (e.pyType === "ValueError") {
          throw ConfigError(WHOLE_FILE, "is not valid JSON (" + e.message + ")");
        }
        throw e;
      }
      if (!isMap(cfg)) {
        throw ConfigError(WHOLE_FILE, "must be a JSON object {...}, got " + jsonType(cfg));
      }
      checkTree(cfg);
      return cfg;
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

    function family(type, cfg) { // config_families.family -> row
      if (hasOwn(T.FAMILIES, type)) return T.FAMILIES[type];
      if (!type && cfg.has(T.GPT2_HINT)) return T.FAMILIES.gpt2;
      return T.UNKNOWN;
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

    function topK(cfg, experts) {
      const k = count(cfg, ["num_experts_per_tok"], MAX_EXPERTS);
      if (k > experts) {
        throw ConfigError("num_experts_per_tok", "(" + k + ") is more than the " + experts
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

    function moe(cfg, layers, hidden, intermediate, notes) {
      const dense = { num_experts: 0, experts_per_token: 0, moe_intermediate: 0,
        shared_experts: 0, shared_intermediate: 0, dense_layers: layers };
      let experts, k, size, shared, sharedWidth, moeLayers = 0, i;
      if (present(cfg, "n_routed_experts")) { // DeepSeek-V2/V3
        experts = count(cfg, ["n_routed_experts"], MAX_EXPERTS, NO_DEFAULT, 0);
        if (!experts) return dense;
        k = topK(cfg, experts);
        size = count(cfg, ["moe_intermediate_size"], MAX_INTERMEDIATE);
        shared = count(cfg, ["n_shared_experts"], MAX_EXPERTS, 0, 0);
        const firstDense = count(cfg, ["first_k_dense_replace"], MAX_LAYERS, 0, 0);
        const every = count(cfg, ["moe_layer_freq"], MAX_LAYERS, 1);
        for (i = 0; i < layers; i++) if (i >= firstDense && i % every === 0) moeLayers++;
        sharedWidth = shared * size;
      } else if (present(cfg, "num_local_experts") && !present(cfg, "moe_intermediate_size")) {
        // Mixtral: intermediate_size is the expert size
        experts = count(cfg, ["num_local_experts"], MAX_EXPERTS, NO_DEFAULT, 0);
        if (!experts) return dense;
        k = topK(cfg, experts);
        size = intermediate;
        shared = 0;
        sharedWidth = 0;
        moeLayers = layers;
      } else if (present(cfg, "num_experts") || present(cfg, "num_local_experts")) {
        // Qwen2-MoE / Qwen3-MoE, in Transformers 4's spelling or 5's
        experts = count(cfg, ["num_experts", "num_local_experts"], MAX_EXPERTS, NO_DEFAULT, 0);
        if (!experts) return dense;
        k = topK(cfg, experts);
        size = count(cfg, ["moe_intermediate_size"], MAX_INTERMEDIATE);
        sharedWidth = count(cfg, ["shared_expert_intermediate_size"], MAX_INTERMEDIATE, 0, 0);
        shared = sharedWidth ? 1 : 0;
        const step = count(cfg, ["decoder_sparse_step"], MAX_LAYERS, 1);
        const denseOnly = layerIndices(cfg, "mlp_only_layers");
        for (i = 0; i < layers; i++) {
          if (!denseOnly.has(BigInt(i)) && (i + 1) % step === 0) moeLayers++;
        }
      } else {
        return dense;
      }
      notes.push("Mixture of experts: " + k + " of " + experts + " routed experts active per "
        + "token" + (shared ? ", plus " + shared + " shared" : "") + "; "
        + (layers - moeLayers) + " of " + layers + " layers have a dense MLP.");
      return { num_experts: experts, experts_per_token: k, moe_intermediate: size,
        shared_experts: shared, shared_intermediate: sharedWidth,
        dense_layers: layers - moeLayers };
    }

    // --- quantization_config (costs._quantization) ---

    const QUANT_METHODS = ["fp8", "fbgemm_fp8", "awq", "gptq"];
    function notQuantized() {
      return { quant_method: null, quant_bits: 0, quant_group: 0, quant_block_out: 0,
        quant_block_in: 0, quant_zero_point: false };
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

    function said(q, notes) {
      const method = q.quant_method;
      let how;
      if (method === "fp8") {
        how = "1 byte a weight and " + (q.quant_block_out ? "a float32 scale per "
          + q.quant_block_out + " x " + q.quant_block_in + " block" : "a float32 scale per tensor");
      } else if (method === "fbgemm_fp8") {
        how = "1 byte a weight and a float32 scale per output channel";
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
      return BigInt(count(cfg, [f.field], LIMITS.vocab, f["default"]));
    }

    function tensors(cfg, row, shape) { // -> [stored only, matmul weights], as Numbers
      const per = { model: 1n, layer: BigInt(shape.layers), dense_layer: BigInt(shape.dense_layers),
        moe_layer: BigInt(shape.layers - shape.dense_layers) };
      let stored = 0n, matmul = 0n;
      row.tensors.forEach(function (term) {
        if (!term.when.every(function (c) { return holds(cfg, shape, c); })) return;
        let size = 0n;
        term.size.forEach(function (product) {
          size += product.reduce(function (acc, f) { return acc * factor(cfg, shape, f); }, 1n);
        });
        if (term.matmul) matmul += per[term.per] * size;
        else stored += per[term.per] * size;
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
        if (types.some(function (t) { return t !== "sliding_attention" && t !== "full_attention"; })) {
          notes.push("Layer types other than sliding/full attention are counted as full.");
        }
        return types.filter(function (t) { return t === "sliding_attention"; }).length;
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

    function windowOf(cfg, layers, row, notes) {
      const unwindowed = { sliding_window: null, sliding_layers: 0 };
      if (flag(cfg, "use_sliding_window") === false) return unwindowed;
      const r = windowRule(row), value = pick(cfg, r.names)[1];
      let width;
      if (value === MISSING || value === null) width = r["default"].value;
      else width = count(cfg, r.names, MAX_POSITIONS);
      if (width === null) return unwindowed;
      const sliding = slidingCount(cfg, layers, r, notes);
      if (!sliding) return unwindowed;
      const w = grouped(width);
      notes.push("Sliding window of " + w + " tokens on " + sliding + " of " + layers
        + " layers: there a query sees at most " + w + " keys and the cache holds at most "
        + w + " tokens.");
      return { sliding_window: width, sliding_layers: sliding };
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

    function mlpMatrices(row, type, notes) {
      if (row.mlp_matrices === null) {
        notes.push("model_type " + reprStr(type || "(none)") + " is not one we know: "
          + "assumed a gated MLP (3 matrices).");
        return 3;
      }
      return row.mlp_matrices;
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
      const type = modelType(cfg), row = family(type, cfg), mla = present(cfg, "kv_lora_rank");
      const got = figures(cfg, row, mla ? ["head_dim"] : [])[0];
      const attention = mla ? mlaHeads(cfg, got.heads, got.kv_heads, notes)
        : { head_dim: got.head_dim, v_head_dim: got.head_dim, kv_heads: got.kv_heads };
      const m = { name: displayName(cfg, name, type), layers: got.layers, hidden: got.hidden,
        intermediate: got.intermediate, heads: got.heads, kv_heads: attention.kv_heads,
        head_dim: attention.head_dim, v_head_dim: attention.v_head_dim, vocab: got.vocab };
      m.tied = tied(cfg, row, notes);
      m.max_positions = got.max_positions;
      m.mlp_matrices = mlpMatrices(row, type, notes);
      const experts = moe(cfg, got.layers, got.hidden, got.intermediate, notes);
      const win = windowOf(cfg, got.layers, row, notes);
      Object.assign(m, experts, win);
      m.mla = !!attention.mla;
      m.q_lora_rank = attention.mla ? attention.q_lora_rank : null;
      m.kv_lora_rank = attention.mla ? attention.kv_lora_rank : 0;
      m.qk_rope_head_dim = attention.mla ? attention.qk_rope_head_dim : 0;
      m.learned_positions = row.learned_positions;
      Object.assign(m, quantization(cfg, notes));
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

    function lm_head_params(m) { return B(m.vocab) * B(m.hidden); }

    function matmul_params(m) {
      return B(m.layers) * attention_params(m) + B(m.dense_layers) * dense_mlp_params(m)
        + B(m.moe_layers) * moe_active_params(m) + B(m.extra_matmul_params)
        + lm_head_params(m);
    }

    function total_params(m) {
      const stack = B(m.layers) * attention_params(m) + B(m.dense_layers) * dense_mlp_params(m)
        + B(m.moe_layers) * moe_stored_params(m);
      let embedding = B(m.vocab) * B(m.hidden);
      if (m.learned_positions && m.max_positions) embedding += B(m.max_positions) * B(m.hidden);
      const lmHead = m.tied ? 0n : lm_head_params(m);
      return stack + B(m.extra_matmul_params) + embedding + lmHead + B(m.small_params);
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
      const s = m.sliding_layers;
      return ((m.layers - s) * full + s * sliding) / m.layers;
    }

    const share = vec(function (part, rest) {
      const total = part + rest;
      return total > 0 ? part / total : 0;
    });

    // --- prefill ------------------------------------------------------------------------

    function pair_flops(m) {
      return 2n * B(m.layers) * B(m.heads) * (B(m.head_dim) + B(m.v_head_dim));
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
      const lh = m.layers * m.heads;
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
      const unwindowed = kernel === "naive" ? rest / pf : 2 * rest / pf;
      const w = m.sliding_window;
      if (kernel === "naive" || !m.sliding_layers || unwindowed <= w) return unwindowed;
      const s = m.sliding_layers, L = m.layers;
      const a = (L - s) / 2;
      const b = s * w - rest * L / pf;
      const sww = B(s) * B(w) * B(w); // up to 10^24: exact, as Python's int
      const c = Number(-sww) / 2;
      if (a === 0) return b > 0 ? Number(sww) / (2 * b) : Infinity;
      const root = Math.sqrt(b * b - 4 * a * c);
      return b <= 0 ? (-b + root) / (2 * a) : -2 * c / (b + root);
    }

    // --- dtypes -------------------------------------------------------------------------

    const DTYPE_BYTES = {};
    Object.keys(T.DTYPE_BYTES).forEach(function (k) { DTYPE_BYTES[k] = B(T.DTYPE_BYTES[k]); });

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
      return isInt(per) ? B(m.layers) * per : m.layers * per;
    }

    function kv_cache_bytes(m, context, users, bpv) {
      const perToken = Number(kv_bytes_per_token(m, bpvOr(bpv, 2n)));
      return vec(function (u, t) { return u * perToken * t; })(
        num(users === undefined ? 1 : users), decode_pairs(m, context));
    }

    function decode_arithmetic_intensity(m, context, bpv) {
      const ratio = Number(pair_flops(m)) / Number(kv_bytes_per_token(m, bpvOr(bpv, 2n)));
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

    function packedBytes(m, inputs, outputs) { // costs._packed_bytes, BigInt
      const i = B(inputs), o = B(outputs);
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
      return stack_linears(m).reduce(function (acc, t) {
        return acc + B(t[0]) * B(t[1]) * B(t[2]);
      }, 0n);
    }

    function weight_bytes(m, bpv) { // BigInt bpv -> exact BigInt; Number -> Number
      bpv = bpvOr(bpv, 2n);
      if (!m.quant_method) {
        return isInt(bpv) ? total_params(m) * bpv : Number(total_params(m)) * bpv;
      }
      const packed = stack_linears(m).reduce(function (acc, t) {
        return acc + B(t[0]) * packedBytes(m, t[1], t[2]);
      }, 0n);
      const rest = total_params(m) - quantized_params(m);
      return isInt(bpv) ? packed + rest * bpv : Number(packed) + Number(rest) * bpv;
    }

    function cache_convention(m) { // costs.cache_convention
      const held = [m.mla ? "a " + grouped(m.kv_lora_rank + m.qk_rope_head_dim) + "-value latent "
        + "per layer (multi-head latent attention, MLA), not each head's keys and values"
        : "keys and values of " + grouped(m.kv_heads) + " KV heads per layer"];
      if (m.sliding_layers) {
        held.push(grouped(m.sliding_layers) + " of " + grouped(m.layers) + " layers keep only "
          + "their last " + grouped(m.sliding_window) + " tokens");
      }
      return "As a serving engine holds it: " + held.join("; ") + ".";
    }

    function weight_convention(m, dtype) { // costs.weight_convention
      const tied = m.tied ? "; lm_head tied to the embedding, counted once" : "";
      if (m.quant_method) {
        return "As the checkpoint stores them: linear weights packed by " + m.quant_method + " ("
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
      const cache = kv_cache_bytes(m, context, users, bpvOr(opts.kv_bytes_per_value, 2n));
      return vec(function (u, attn, c) { return u * (other + attn) / (weights + c); })(
        users, attention_flops_decode(m, context), cache);
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
        const linear = weights / (m.layers * perLayer);
        if (!m.sliding_layers) return linear;
        const w = m.sliding_window, full = m.layers - m.sliding_layers;
        const atWindow = m.layers * perLayer * w;
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

    const GPUS = {};
    Object.keys(T.GPUS).forEach(function (k) {
      const g = T.GPUS[k];
      GPUS[k] = Object.freeze({ name: g.name, peak_flops: g.peak_flops, bandwidth: g.bandwidth,
        ridge_point: g.peak_flops / g.bandwidth });
    });

    return {
      parse_config_text: parse_config_text, from_config: from_config, preset: preset,
      attention_params: attention_params, dense_mlp_params: dense_mlp_params,
      moe_active_params: moe_active_params, moe_stored_params: moe_stored_params,
      lm_head_params: lm_head_params, matmul_params: matmul_params, total_params: total_params,
      pair_flops: pair_flops, prefill_pairs: prefill_pairs,
      attention_flops_prefill: attention_flops_prefill, other_flops_prefill: other_flops_prefill,
      prefill_attention_share: prefill_attention_share, decode_pairs: decode_pairs,
      attention_flops_decode: attention_flops_decode, other_flops_decode: other_flops_decode,
      decode_attention_share: decode_attention_share, decode_dot_products: decode_dot_products,
      decode_score_flops: decode_score_flops, decode_value_flops: decode_value_flops,
      crossover_tokens: crossover_tokens, dtype_bytes: dtype_bytes,
      kv_bytes_per_token_per_layer: kv_bytes_per_token_per_layer,
      kv_bytes_per_token: kv_bytes_per_token, kv_cache_bytes: kv_cache_bytes,
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
  if (typeof window !== "undefined") {
    window.AE = window.AE || {};
    window.AE.costModel = costModel;
  }
  if (typeof module !== "undefined" && module.exports) module.exports = costModel;
})();
