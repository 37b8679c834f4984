/* The cost model in the browser, part 1 of 3: Python's errors and text (repr, json.dumps,
   str.strip) and parse_config_text, config.json read byte for byte as costs.py reads it.
   The model's other parts: cost_model_families.js (reading a config by its family's rules)
   and cost_model.js (the closed forms, and AE.costModel.create, which binds all three to
   Python's table). Each part is a classic script that adds itself to AE.costModelParts; the
   build sends the three as one file, node requires them in this order. */
(function () {
  "use strict";
  const AE = globalThis.AE = globalThis.AE || {};
  const parts = AE.costModelParts = AE.costModelParts || {};

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


  // what Python's table sets: create() (cost_model.js) binds each part of the model to it
  let T, WHOLE_FILE, MAX_CONFIG_BYTES, MAX_NESTING, isSpace, unprintable;

  function bind(table) {
    T = table;
    WHOLE_FILE = T.WHOLE_FILE;
    MAX_CONFIG_BYTES = T.MAX_CONFIG_BYTES;
    MAX_NESTING = T.MAX_NESTING;
    isSpace = runsToTest(T.UNICODE.space);
    unprintable = runsToTest(T.UNICODE.unprintable);
  }


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
  function skipWs(s, idx) { // -> the first index from idx that is not JSON's white space
    while (idx < s.length && isWs(s.charCodeAt(idx))) idx++;
    return idx;
  }

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

  // _json's loop over an object's members or an array's elements, from just after the
  // opening bracket: `item(idx)` reads one and returns its end; white space and a comma
  // stand between two, white space and `close` after the last. -> the index past `close`
  Scanner.prototype.scanItems = function (idx, close, item) {
    const s = this.s;
    idx = skipWs(s, idx);
    if (s[idx] === close) return idx + 1;
    for (;;) {
      idx = skipWs(s, item(idx));
      if (s[idx] === close) return idx + 1;
      if (s[idx] !== ",") throw decodeError("Expecting ',' delimiter", s, idx);
      idx = skipWs(s, idx + 1);
    }
  };

  Scanner.prototype.object = function (idx) { // -> [Map, end]
    const s = this.s, out = new Map();
    const end = this.scanItems(idx, "}", (at) => {
      if (s[at] !== "\"") {
        throw decodeError("Expecting property name enclosed in double quotes", s, at);
      }
      const [key, keyEnd] = this.string(at + 1);
      const colon = skipWs(s, keyEnd);
      if (s[colon] !== ":") throw decodeError("Expecting ':' delimiter", s, colon);
      const [value, valueEnd] = this.value(skipWs(s, colon + 1));
      out.set(key, value);
      return valueEnd;
    });
    return [out, end];
  };

  Scanner.prototype.array = function (idx) { // -> [Array, end]
    const out = [];
    const end = this.scanItems(idx, "]", (at) => {
      const [value, valueEnd] = this.value(at);
      out.push(value);
      return valueEnd;
    });
    return [out, end];
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
    let r;
    try {
      r = sc.value(skipWs(s, 0));
    } catch (e) {
      if (e instanceof StopIteration) throw decodeError("Expecting value", s, e.pos);
      throw e;
    }
    const end = skipWs(s, r[1]);
    if (end !== s.length) throw decodeError("Extra data", s, end);
    return r[0];
  }

  const NON_FINITE_FIELDS = ["time_step_limit"]; // costs.NON_FINITE_FIELDS

  function checkTree(cfg) { // costs._check_tree
    const stack = [[cfg, null, 1, null]];
    while (stack.length) {
      const top = stack.pop(), value = top[0], path = top[1], depth = top[2], field = top[3];
      if (value instanceof NonFinite) {
        if (NON_FINITE_FIELDS.includes(field)) continue;
        throw ConfigError(path, value.token + " is not a finite number");
      }
      if (isMap(value) || Array.isArray(value)) {
        if (depth > MAX_NESTING) {
          throw ConfigError(WHOLE_FILE, "nests more than " + MAX_NESTING + " levels deep");
        }
        if (Array.isArray(value)) {
          for (let i = 0; i < value.length; i++) {
            stack.push([value[i], path + "[" + i + "]", depth + 1, field]);
          }
        } else {
          value.forEach(function (child, key) {
            stack.push([child, path === null ? key : path + "." + key, depth + 1, key]);
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


  parts.text = {bind, ConfigError, MISSING, NAME_LIMIT, PyError, codePoints, grouped, hasOwn,
    isFloat, isInt, isMap, jsonType, parse_config_text, repr, reprStr, show, strip};
})();
