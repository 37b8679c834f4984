// The page's address: its query read as app/kit/url_state.py reads it (a deep link's values
// coerced, clamped or ignored with a note, as the live pages do), the controls written back
// into the address bar once the page is idle, and the address of this page's live twin.
// AE.url: {coerce, write, flush, liveUrl}; switcher.js reads and writes through it.
(function () {
  "use strict";
  const AE = window.AE = window.AE || {};
  if (AE.url) { return; }

  // --- reading: the query string, coerced as app/kit/url_state.py coerces it --------------------

  const TRUE = ["1", "true", "on", "yes"];
  const FALSE = ["0", "false", "off", "no"];
  const MAX_VALUE_CHARS = 100; // code points, as Python counts a string

  // what Python's str.strip() takes off: its whitespace, which is not String.trim()'s (it has
  // \x1c-\x1f and U+0085, not the byte-order mark)
  const SPACE = "[\\t-\\r\\x1c-\\x20\\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000]";
  const STRIP = new RegExp(`^${SPACE}+|${SPACE}+$`, "g");

  // a string as Python's repr() writes it, as a live repair quotes a value: its quote, and
  // control characters, separators and the like escaped
  const HIDDEN = /^[\p{C}\p{Z}]$/u;
  function pythonRepr(s) {
    const quote = s.includes("'") && !s.includes('"') ? '"' : "'";
    const hex = (c, n) => c.toString(16).padStart(n, "0");
    let out = "";
    for (const ch of s) {
      const c = ch.codePointAt(0);
      if (ch === quote || ch === "\\") { out += "\\" + ch; }
      else if (ch === "\t") { out += "\\t"; }
      else if (ch === "\n") { out += "\\n"; }
      else if (ch === "\r") { out += "\\r"; }
      else if (c < 0x20 || c === 0x7f) { out += "\\x" + hex(c, 2); }
      else if (c < 0x7f || !HIDDEN.test(ch)) { out += ch; }
      else if (c <= 0xff) { out += "\\x" + hex(c, 2); }
      else if (c <= 0xffff) { out += "\\u" + hex(c, 4); }
      else { out += "\\U" + hex(c, 8); }
    }
    return quote + out + quote;
  }

  // Python's float() reads any Unicode decimal digit ("１６" and "١٦" are 16). Unicode has them
  // in runs of whole sets 0-9, so a digit's value is its place in its run, mod 10.
  const DECIMAL = /\p{Nd}/u;
  function asciiDigits(text) {
    return text.replace(/\p{Nd}/gu, (d) => {
      let start = d.codePointAt(0);
      while (DECIMAL.test(String.fromCodePoint(start - 1))) { start -= 1; }
      return String((d.codePointAt(0) - start) % 10);
    });
  }

  // what Python's float() accepts: digits with single underscores, a point, an exponent,
  // inf / infinity / nan, a sign
  const DIGITS = "\\d(?:_?\\d)*";
  const FLOAT = new RegExp(`^[+-]?(?:(?:${DIGITS})?\\.?${DIGITS}(?:[eE][+-]?${DIGITS})?` +
    `|${DIGITS}\\.(?:[eE][+-]?${DIGITS})?|inf|infinity|nan)$`, "i");

  function pythonFloat(raw) {
    const text = raw.replace(/_/g, "").toLowerCase();
    const sign = text.startsWith("-") ? -1 : 1;
    const body = text.replace(/^[+-]/, "");
    if (body === "inf" || body === "infinity") { return sign * Infinity; }
    if (body === "nan") { return NaN; }
    return Number(text);
  }

  function roundHalfEven(x) {
    const r = Math.round(x);
    return Math.abs(x % 1) === 0.5 && r % 2 !== 0 ? r - 1 : r;
  }

  // a number in a repair, as url_state.number_text writes it: String()'s shortest digits, no
  // ".0" on a whole number ("4", "0.25", "1e-7")
  const numberText = (x) => String(x);

  // (control, key, raw) -> [stop index or -1 to ignore, repair or null]
  function coerce(control, key, raw) {
    const chars = Array.from(raw.replace(STRIP, "")).slice(0, MAX_VALUE_CHARS);
    raw = chars.join("");
    const shown = chars.length <= 24 ? raw : chars.slice(0, 24).join("") + "…";
    const values = control.values;
    if (control.kind === "boolean") {
      const low = raw.toLowerCase();
      if (TRUE.includes(low)) { return [values.indexOf(true), null]; }
      if (FALSE.includes(low)) { return [values.indexOf(false), null]; }
      return [-1, `${key}=${pythonRepr(shown)} is not on/off; ignored`];
    }
    if (control.kind === "choice") {
      const i = values.findIndex((v) => String(v).toLowerCase() === raw.toLowerCase());
      if (i >= 0) { return [i, null]; }
      return [-1, `${key}=${pythonRepr(shown)} is not one of ${values.join(", ")}; ignored`];
    }
    const number = asciiDigits(raw);
    if (!FLOAT.test(number)) {
      return [-1, `${key}=${pythonRepr(shown)} is not a number; ignored`];
    }
    const value = pythonFloat(number);
    if (!Number.isFinite(value)) {
      return [-1, `${key}=${pythonRepr(shown)} is not a finite number; ignored`];
    }
    const low = Math.min(...values);
    const high = Math.max(...values);
    const clamped = Math.min(Math.max(value, low), high);
    // whole-number stops: an Integer parameter, clamped and rounded as Python does; the page
    // takes the result where it is one of its stops ("4.2" is 4, as live), else the nearest
    if (values.every(Number.isInteger)) {
      const using = roundHalfEven(clamped);
      const i = values.indexOf(using);
      if (i >= 0) {
        return [i, using === value ? null
          : `${key}=${shown} is out of range; using ${numberText(using)}`];
      }
    }
    let best = 0;
    values.forEach((v, i) => {
      if (Math.abs(v - clamped) < Math.abs(values[best] - clamped)) { best = i; }
    });
    if (values[best] === value) { return [best, null]; }
    if (value < low || value > high) {
      return [best, `${key}=${shown} is out of range; using ${numberText(values[best])}`];
    }
    return [best, `${key}=${shown} is not one of this page's stops; ` +
      `using ${numberText(values[best])}` +
      " (the live explorable takes any value)"];
  }

  // --- writing: the address bar follows the controls -----------------------------------

  function encode(value) {
    if (value === true) { return "on"; }
    if (value === false) { return "off"; }
    return String(value);
  }

  // The address bar follows the controls, under the page's keys. It is written once the page
  // is idle after the change's frame (at most 60 ms on: a tap's address within 150 ms, p95, on
  // a slowed phone, benchmarks/first_touch.py; after a tap with no tap highlight Chromium gave
  // no idle time for over 120 ms), not before: Chromium treats each
  // replaceState as a navigation (0.2-3 ms here) and reads the page's icon again, work that
  // would otherwise delay the change's frame, or the next one while a slider is dragged.
  let pendingUrl = null;
  const whenIdle = typeof window.requestIdleCallback === "function"
    ? (fn) => window.requestIdleCallback(fn, {timeout: 60}) : (fn) => setTimeout(fn, 50);
  function flush() {
    if (pendingUrl === null) { return; }
    const href = pendingUrl;
    pendingUrl = null;
    try {
      if (href !== window.location.href) { window.history.replaceState(null, "", href); }
    } catch (e) { /* file:// pages may refuse; the state itself is applied */ }
  }
  window.addEventListener("pagehide", flush);

  function write(values) { // {key: value}: set in the address bar once the page is idle
    const url = new URL(pendingUrl === null ? window.location.href : pendingUrl);
    for (const [key, value] of Object.entries(values)) { url.searchParams.set(key, encode(value)); }
    if (pendingUrl === null) { requestAnimationFrame(() => whenIdle(flush)); }
    pendingUrl = url.href;
  }

  // --- the live twin ----------------------------------------------------------------------

  // The live counterpart of this page: AE.page.liveUrl if the page has one, else "live/"
  // at the site's root (the folder holding assets/, where this script lies), as `make serve`
  // has; then this page's own route (a chapter's keys only a chapter reads) and its query.
  const here = document.currentScript ? document.currentScript.src : window.location.href;
  function siteRoot() {
    const root = new URL(here);
    const at = root.pathname.lastIndexOf("/assets/");
    root.pathname = at >= 0 ? root.pathname.slice(0, at + 1)
      : root.pathname.slice(0, root.pathname.lastIndexOf("/") + 1);
    root.search = "";
    root.hash = "";
    return root;
  }

  function liveUrl() {
    flush();
    const root = siteRoot();
    const given = AE.page && AE.page.liveUrl; // page_head.js, from the <html> element
    const base = given ? String(given).replace(/\/$/, "")
      : new URL("live", root).href;
    let route = window.location.pathname.startsWith(root.pathname)
      ? window.location.pathname.slice(root.pathname.length) : "";
    route = route.replace(/(^|\/)index\.html$/, "").replace(/\/$/, "");
    return base + (route ? "/" + route : "") + window.location.search;
  }

  AE.url = {coerce, write, flush, liveUrl};
})();
