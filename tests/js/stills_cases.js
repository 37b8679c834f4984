// Runs static/stills.js (or the copy named in argv[2]) on the cases tests/test_stills_js.py
// writes to stdin as JSON: {"panels": [{"description": {...}, "table": "<JS text>"}],
// "cases": [{"panel": i, "at": [stop, ...], "state": {...}?}]}. A table travels as the
// JavaScript text a page's table script carries (canonical JSON, which may hold NaN), read
// here as the browser reads it; a case's "state", when given, is used instead of the
// table's (a negative control). Writes one JSON array: per case {"panes": [svg of each
// pane], "readouts": [each readout's still HTML, null when it shows no text]} or
// {"error": message}. "numbers", when given, go through num and formatG (stills.num and
// f"{v:g}"): the output is then {"cases": [...], "num": [...], "g": [...]}.
"use strict";
const path = require("path");
const vm = require("vm");
const stills = require(path.resolve(process.argv[2] || path.join(__dirname, "..", "..",
  "static", "stills.js")));

let input = "";
process.stdin.setEncoding("utf8");
process.stdin.on("data", (chunk) => { input += chunk; });
process.stdin.on("end", () => {
  const job = JSON.parse(input);
  const tables = job.panels.map((p) => vm.runInNewContext("(" + p.table + ")"));
  const out = job.cases.map((c) => {
    try {
      const state = c.state ?? stills.stateAt(tables[c.panel], c.at);
      const description = job.panels[c.panel].description;
      return {panes: stills.draw(description, state),
        readouts: stills.readouts(description, state).map((r) => (r.empty ? null : r.html))};
    } catch (e) {
      return {error: String(e && e.stack || e)};
    }
  });
  const numbers = (job.numbers ?? []).map((v) => (typeof v === "string" ? Number(v) : v));
  process.stdout.write(JSON.stringify({cases: out, num: numbers.map(stills.num),
    g: numbers.map(stills.formatG)}));
});
