// A panel's still, drawn in the browser: app/chapters/stills.py's figure_svg, line for line.
//
// A static page shows each panel's still (its charts as SVG, drawn by Python at build time)
// until BokehJS has loaded and its island mounts. With a description of the panel's figures
// (app/chapters/still_figures.py `describe`: what no state changes, as JSON data) and one
// state of its table (app/kit/states.py `table()`), AE.stills.draw gives the SVG stills.py
// would write for the panel in that state, so a control can switch the still before Bokeh
// has loaded. tests/test_stills_js.py holds the two to the byte, state by state.
//
// Numbers are written as Python writes them: round() halves to even, "%.1f" on the exact
// value, "%g", "{:,}". Strings are measured in code points, as Python's len().
// A classic script: one global, AE.stills; module.exports in node.
(function () {
  "use strict";
  const W = 320; // the view box's width (stills.py W)
  const CHAR = 7.0;
  const LINE = 15;
  const INK = new Set(["#000000", "#222222", "#e0e0e0", "#f2f2f2", "black"]);
  const MUTED = new Set(["#555555", "#6b6b6b", "#888888", "#999999", "#b8b8b8", "#a8a8a8",
    "#b5b5b5"]);
  const PAPER = new Set(["#ffffff", "#2b3035", "white"]);
  const DASHES = {dashed: "6", dotted: "2 4", dotdash: "2 4 6 4", dashdot: "6 4 2 4"};
  const RAD_TO_DEG = 180 / Math.PI; // CPython's math.degrees and math.radians constants
  const DEG_TO_RAD = Math.PI / 180;

  // --- Python's numbers and strings ---------------------------------------------------

  function roundHalfEven(v) { // Python's round(v) of a float
    const f = Math.floor(v);
    const d = v - f;
    if (d !== 0.5) { return d < 0.5 ? f : f + 1; }
    return f % 2 === 0 ? f : f + 1;
  }

  function fixed1(v) { // f"{round(v, 1):.1f}": toFixed, but an exact half goes to even
    const quarters = v * 4; // v is a tie at one decimal only when 4v is an odd integer
    if (Number.isInteger(quarters) && quarters % 2 !== 0) {
      const lo = Math.floor(v * 10);
      return ((lo % 2 === 0 ? lo : lo + 1) / 10).toFixed(1);
    }
    return v.toFixed(1);
  }

  function num(v) { // stills.num: whole units, or one decimal below 10
    const text = Math.abs(v) < 10 ? fixed1(v).replace(/0+$/, "").replace(/\.$/, "")
      : BigInt(roundHalfEven(v)).toString(); // every digit, as Python's int
    return text === "-0" ? "0" : text;
  }

  function pyRound(v, digits) { // round(v, digits) of a float, for a tick (never a tie)
    return Number.isInteger(v) ? v : Number(v.toFixed(digits));
  }

  function sixDigits(v) { // -> v.toExponential(5), but an exact half goes to even, as Python's
    // "%g" does (toExponential rounds it up); 100 digits hold a double of these sizes exactly
    const long = v.toExponential(99);
    const digits = long[long[0] === "-" ? 1 : 0] + long.split("e")[0].split(".")[1];
    if (digits[6] === "5" && /^0*$/.test(digits.slice(7)) && Number(digits[5]) % 2 === 0) {
      return `${v < 0 ? "-" : ""}${digits[0]}.${digits.slice(1, 6)}e${long.split("e")[1]}`;
    }
    return v.toExponential(5);
  }

  function formatG(v) { // f"{v:g}": six significant digits, zeros after the point dropped
    if (v === 0) { return Object.is(v, -0) ? "-0" : "0"; }
    const [mantissa, exp] = sixDigits(v).split("e");
    const e = Number(exp);
    const sign = v < 0 ? "-" : "";
    const digits = mantissa.replace("-", "").replace(".", "");
    const trim = (text) => (text.includes(".") ? text.replace(/0+$/, "").replace(/\.$/, "") : text);
    if (e >= -4 && e < 6) {
      const point = e >= 0 ? `${digits.slice(0, e + 1)}.${digits.slice(e + 1)}`
        : `0.${"0".repeat(-e - 1)}${digits}`;
      return sign + trim(point);
    }
    return `${sign}${trim(mantissa.replace("-", ""))}e${e < 0 ? "-" : "+"}`
      + String(Math.abs(e)).padStart(2, "0");
  }


  function grouped(v) { // f"{int(v):,}"
    const digits = String(Math.abs(Math.trunc(v))).replace(/\B(?=(\d{3})+(?!\d))/g, ",");
    return (v < 0 && Math.trunc(v) !== 0 ? "-" : "") + digits;
  }

  const len = (text) => [...text].length; // Python's len(): code points
  const bad = (v) => v === null || v === undefined || (typeof v === "number" && !Number.isFinite(v));
  const esc = (text) => String(text).replace(/&/g, "&amp;").replace(/</g, "&lt;")
    .replace(/>/g, "&gt;").replace(/"/g, "&quot;").replace(/'/g, "&#x27;");

  function pyMod(a, b) { // a % b as Python's floats give it: the sign of b
    let m = a % b;
    if (m !== 0 && (b < 0) !== (m < 0)) { m += b; }
    return m;
  }

  function zip(...columns) {
    const n = Math.min(...columns.map((c) => c.length));
    return [...Array(n).keys()].map((i) => columns.map((c) => c[i]));
  }

  function hypot(x, y) { // math.hypot of two, correctly rounded (CPython 3.10+)
    return Math.hypot(x, y);
  }

  // --- values: a glyph's property, for every row of its source ------------------------

  // a colour a colour mapper gave (stills.Exact): drawn as it is, never the theme's ink
  const exact = (c) => ({exact: c});
  const isExact = (c) => c !== null && typeof c === "object" && "exact" in c;
  const plainColour = (c) => (isExact(c) ? c.exact : c);

  // the Python twins of a figure's browser transforms (app/kit/transforms.py), by name
  const TWINS = {
    "app.panels.heatmap.centre_py": (positions, data) => {
      const n = data.n;
      return positions.map((p, i) => (n[i] > 0 ? (p + 0.5) / n[i] : NaN));
    },
    "app.panels.heatmap.share_py": (part, lengths) => lengths.map((n) => (n > 0 ? part / n : 0)),
    "app.panels.sqrt_dk.key_centre_py": (keys) => keys.map((k) => (k - 0.5) / keys.length),
    "app.panels.sqrt_dk.key_width_py": (keys) => keys.map(() => 0.8 / keys.length),
  };

  function mapped(values, t) { // a LinearColorMapper
    const {mapper: palette, low: lo, high: hi} = t;
    return values.map((v) => {
      if (v === null || v === undefined || Number.isNaN(v)) { return exact(t.nan_color); }
      if (v < lo) { return exact(t.low_color || palette[0]); }
      if (v > hi) { return exact(t.high_color || palette[palette.length - 1]); }
      const i = Math.trunc((v - lo) / (hi - lo) * palette.length);
      return exact(palette[Math.min(i, palette.length - 1)]);
    });
  }

  function transformed(values, t, data) {
    if (t.mapper !== undefined) { return mapped(values, t); }
    const twin = TWINS[t.twin];
    if (twin === undefined) { throw new Error(`a still cannot apply the transform ${t.twin}`); }
    return twin(...t.args, values, data);
  }

  function column(glyph, prop, data, n) { // -> [value] * n rows: a field of the source or one value
    let spec = glyph[prop];
    let field = null;
    let transform = null;
    const isObject = spec !== null && typeof spec === "object" && !Array.isArray(spec);
    if (isObject && "field" in spec) {
      [field, transform] = [spec.field, spec.transform];
    } else if (typeof spec === "string" && spec in data && !/_(units|align)$/.test(prop)) {
      field = spec;
    } else if (isObject && "value" in spec) {
      spec = spec.value;
    }
    if (field === null) { return Array(n).fill(spec); }
    if (!(field in data)) { throw new Error(`no column ${field} for ${prop}`); }
    const values = [...data[field]];
    return transform ? transformed(values, transform, data) : values;
  }

  function rows(data) { // one, with no columns: a glyph of values alone
    const lengths = Object.values(data).map((v) => v.length);
    return lengths.length ? Math.max(...lengths) : 1;
  }

  // --- paint: colours as attributes, or the theme's classes ---------------------------

  function colourOf(c) { // a Bokeh colour -> "#rrggbb" / a name (or an exact one), or null
    if (c === null || c === undefined || isExact(c)) { return c ?? null; }
    if (Array.isArray(c)) {
      return "#" + c.slice(0, 3).map((x) => Math.trunc(x).toString(16).padStart(2, "0")).join("");
    }
    return String(c).toLowerCase();
  }

  function stroke(colour, width = 1, dash = null, alpha = 1.0) { // -> [attributes, classes]
    const c = colourOf(colour);
    if (c === null || alpha === 0) { return ["", ["n"]]; }
    let attrs = "";
    const cls = [];
    if (!isExact(c) && INK.has(c)) { cls.push("k"); }
    else if (MUTED.has(plainColour(c))) { cls.push("m"); }
    else { attrs += ` stroke="${plainColour(c)}"`; }
    if (width !== 1) { attrs += ` stroke-width="${num(width)}"`; }
    if (dash && dash.length) {
      const d = typeof dash === "string" ? (DASHES[dash] ?? dash) : dash.map(String).join(" ");
      if (d && d !== "solid") { attrs += ` stroke-dasharray="${d}"`; }
    }
    if (alpha !== 1) { attrs += ` stroke-opacity="${num(alpha * 100)}%"`; }
    return [attrs, cls];
  }

  function fill(colour, alpha = 1.0) { // -> [attributes, classes]; ink is the default fill
    const c = colourOf(colour);
    if (c === null || alpha === 0) { return [' fill="none"', []]; }
    let attrs = "";
    const cls = [];
    if (isExact(c)) { attrs = ` fill="${c.exact}"`; }
    else if (INK.has(c)) { /* the default */ }
    else if (MUTED.has(c)) { cls.push("q"); }
    else if (PAPER.has(c)) { cls.push("p"); }
    else { attrs = ` fill="${c}"`; }
    if (alpha !== 1) { attrs += ` fill-opacity="${num(alpha * 100)}%"`; }
    return [attrs, cls];
  }

  function tag(name, attrs, classes = [], text = null) {
    const cls = [...new Set(classes.filter((c) => c))].join(" ");
    const c = cls ? ` class="${cls}"` : "";
    return text === null ? `<${name}${attrs}${c}/>` : `<${name}${attrs}${c}>${text}</${name}>`;
  }

  function thin(points, tolerance = 0.6) { // Douglas-Peucker, as stills.thin
    if (points.length < 3) { return points; }
    const [[x0, y0], [x1, y1]] = [points[0], points[points.length - 1]];
    const [dx, dy] = [x1 - x0, y1 - y0];
    const norm = hypot(dx, dy) || 1.0;
    let [far, at] = [-1.0, 0];
    for (let i = 1; i < points.length - 1; i++) {
      const [x, y] = points[i];
      const d = Math.abs(dy * (x - x0) - dx * (y - y0)) / norm;
      if (d > far) { [far, at] = [d, i]; }
    }
    if (far <= tolerance) { return [points[0], points[points.length - 1]]; }
    return [...thin(points.slice(0, at + 1), tolerance).slice(0, -1),
      ...thin(points.slice(at), tolerance)];
  }

  function pathOf(points) { // "M1 2 3 4": later points are implicit line-tos
    const out = [];
    for (const [x, y] of points) {
      const p = [num(x), num(y)];
      const last = out[out.length - 1];
      if (last === undefined || last[0] !== p[0] || last[1] !== p[1]) { out.push(p); }
    }
    return "M" + out.map(([x, y]) => `${x} ${y}`).join(" ");
  }

  // --- the frame: data to view-box units ----------------------------------------------

  class Frame {
    constructor(fig, left, top, width, height) {
      Object.assign(this, {left, top, width, height, xlog: fig.xlog, ylog: fig.ylog});
      [this.x0, this.x1] = [fig.x_range.start, fig.x_range.end];
      [this.y0, this.y1] = [fig.y_range.start, fig.y_range.end];
    }

    static t(v, a, b, log) {
      if (log) {
        if (v === null || v === undefined || v <= 0) { return NaN; }
        [v, a, b] = [Math.log10(v), Math.log10(a), Math.log10(b)];
      }
      return (v - a) / (b - a);
    }

    x(v) { return this.left + Frame.t(v, this.x0, this.x1, this.xlog) * this.width; }

    y(v) { return this.top + (1 - Frame.t(v, this.y0, this.y1, this.ylog)) * this.height; }

    dx(v, at) { return Math.abs(this.x(at + v / 2) - this.x(at - v / 2)); }

    dy(v, at) { return Math.abs(this.y(at + v / 2) - this.y(at - v / 2)); }
  }

  // --- axes ---------------------------------------------------------------------------

  function tickLabel(axis, v) {
    const override = axis.overrides.find(([key]) => key === v);
    if (override !== undefined) { return override[1]; }
    if (Number.isInteger(v) && Math.abs(v) >= 1) { return grouped(v); }
    return formatG(v);
  }

  function ticks(axis, lo, hi, log) { // -> the axis's major tick values inside [lo, hi]
    [lo, hi] = [Math.min(lo, hi), Math.max(lo, hi)];
    let values = [];
    if (axis.ticks !== null) {
      values = [...axis.ticks];
    } else if (log) {
      for (let e = Math.floor(Math.log10(lo)); e <= Math.ceil(Math.log10(hi)); e++) {
        values.push(10 ** e >= 1 ? 10 ** e : Number("1e" + e));
      }
    } else {
      const raw = (hi - lo) / 4;
      const mag = raw > 0 ? Number("1e" + Math.floor(Math.log10(raw))) : 1;
      const step = [1, 2, 2.5, 5, 10].map((s) => s * mag).find((s) => s >= raw);
      const first = Math.ceil(lo / step - 1e-9) + 0; // an int: never -0
      for (let i = first; i < first + 12; i++) {
        if (i * step <= hi + 1e-9) { values.push(pyRound(i * step, 10)); }
      }
    }
    return values.filter((v) => lo - 1e-9 <= v && v <= hi + 1e-9);
  }

  function spaced(xticks, frame) { // every other x tick dropped while labels collide
    let step = 1;
    const every = (s) => xticks.filter((_, i) => i % s === 0);
    while (step < xticks.length) {
      const shown = every(step);
      const ok = shown.slice(1).every(([b, t], i) => {
        const [a, s] = shown[i];
        return frame.x(b) - frame.x(a) >= (len(s) + len(t)) * CHAR / 2 + 6;
      });
      if (ok) { break; }
      step += 1;
    }
    return every(step);
  }

  function wrap(text, width) { // -> the text in lines of at most `width` units
    const lines = [""];
    for (const word of text.split(/\s+/).filter((w) => w)) {
      const last = lines[lines.length - 1];
      if (last && (len(last) + 1 + len(word)) * CHAR > width) { lines.push(word); }
      else { lines[lines.length - 1] = `${last} ${word}`.trim(); }
    }
    return lines.join("\n");
  }

  function labelText(label) { // a LegendItem's label (a Value, a dict or text) -> text
    if (label !== null && typeof label === "object") { label = label.value ?? ""; }
    return label === null || label === undefined ? "" : String(label);
  }

  const visibleAxes = (fig, side) => fig[side].filter((a) => a.visible);

  // --- glyphs -------------------------------------------------------------------------

  function textEl(x, y, text, align = "left", baseline = "bottom", angle = 0.0, colour = null,
    halo = false, bold = false) {
    const lines = String(text).split("\n");
    let shift = {top: 10, middle: 4, bottom: -3, alphabetic: 0}[baseline] ?? 0;
    shift -= {top: 0, middle: (lines.length - 1) * LINE / 2}[baseline] ?? (lines.length - 1) * LINE;
    let attrs = ` x="${num(x)}" y="${num(y + shift)}"`;
    if (angle) { // turned about its anchor: the baseline's shift turns with it
      attrs += ` transform="rotate(${num(-(angle * RAD_TO_DEG))} ${num(x)} ${num(y)})"`;
    }
    const [a, fillCls] = colour !== null && colour !== undefined ? fill(colour) : ["", []];
    const cls = [...fillCls, {center: "c", right: "e"}[align] ?? "", halo ? "h" : "",
      bold ? "b" : ""];
    const body = esc(lines[0]) + lines.slice(1)
      .map((line) => `<tspan x="${num(x)}" dy="${LINE}">${esc(line)}</tspan>`).join("");
    return tag("text", attrs + a, cls, body);
  }

  function marker(kind, x, y, size, line, fillColour, lineWidth = 1) {
    const r = size / 2;
    const [sAttrs, sCls] = stroke(line, lineWidth);
    const [X, Y, S] = [num(x), num(y), num(size)];
    const cross = `M${num(x - r)} ${Y}h${S}M${X} ${num(y - r)}v${S}`;
    if (kind === "dash" || kind === "x" || kind === "cross") {
      const d = {dash: `M${num(x - r)} ${Y}h${S}`,
        x: `M${num(x - r)} ${num(y - r)}l${S} ${S}m0 -${S}l-${S} ${S}`, cross}[kind];
      return tag("path", ` d="${d}" fill="none"` + sAttrs, sCls);
    }
    const [fAttrs, fCls] = fill(fillColour);
    const circle = tag("circle", ` cx="${X}" cy="${Y}" r="${num(r)}"` + fAttrs + sAttrs,
      [...fCls, ...sCls]);
    if (kind === "circle_cross") { // a sum: the circle, then its cross
      return circle + tag("path", ` d="${cross}" fill="none"` + sAttrs, sCls);
    }
    if (kind === "square") {
      return tag("rect", ` x="${num(x - r)}" y="${num(y - r)}" width="${S}" height="${S}"`
        + fAttrs + sAttrs, [...fCls, ...sCls]);
    }
    return circle;
  }

  function lineSvg(g, col, frame) {
    const runs = [];
    let run = [];
    for (const [x, y] of zip(col("x"), col("y"))) {
      const [px, py] = bad(x) || bad(y) ? [NaN, NaN] : [frame.x(x), frame.y(y)];
      if (Number.isNaN(px) || Number.isNaN(py)) {
        runs.push(run);
        run = [];
      } else {
        run.push([px, py]);
      }
    }
    runs.push(run);
    const d = runs.filter((r) => r.length > 1).map((r) => pathOf(thin(r))).join("");
    if (!d) { return []; }
    const [attrs, cls] = stroke(g.line_color, g.line_width, g.line_dash, g.line_alpha);
    return [tag("path", ` d="${d}" fill="none"` + attrs, cls)];
  }

  function scatterSvg(g, col, frame) {
    const out = [];
    const width = col("line_width")[0];
    for (const [x, y, m, size, lc, fc] of zip(col("x"), col("y"), col("marker"), col("size"),
      col("line_color"), col("fill_color"))) {
      if (!(bad(x) || bad(y))) { out.push(marker(m, frame.x(x), frame.y(y), size, lc, fc, width)); }
    }
    return out;
  }

  function boxes(kind, col, frame) { // a VBar's or Rect's boxes [x, y, w, h] (null: not drawn)
    if (kind === "VBar") {
      return zip(col("x"), col("width"), col("bottom"), col("top")).map(([x, w, b, t]) => (
        [x, w, b, t].some(bad) ? null
          : [frame.x(x) - frame.dx(w, x) / 2, frame.y(t), frame.dx(w, x), frame.y(b) - frame.y(t)]));
    }
    return zip(col("x"), col("y"), col("width"), col("height")).map(([x, y, w, h]) => {
      if ([x, y, w, h].some(bad) || !w || !h) { return null; }
      const [pw, ph] = [frame.dx(w, x), frame.dy(h, y)];
      return [frame.x(x) - pw / 2, frame.y(y) - ph / 2, pw, ph];
    });
  }

  function boxSvg(kind, col, frame) {
    const out = [];
    for (const [box, fc, fa, lc, lw] of zip(boxes(kind, col, frame), col("fill_color"),
      col("fill_alpha"), col("line_color"), col("line_width"))) {
      if (box === null) { continue; }
      let [x, y, w, h] = box;
      if (h < 0) { [y, h] = [y + h, -h]; }
      const [fAttrs, fCls] = fill(fc, fa);
      const [sAttrs, sCls] = lc !== null && lc !== undefined ? stroke(lc, lw) : ["", []];
      out.push(tag("rect", ` x="${num(x)}" y="${num(y)}" width="${num(w)}" height="${num(h)}"`
        + fAttrs + sAttrs, [...fCls, ...sCls]));
    }
    return out;
  }

  function segmentSvg(g, col, frame) {
    const byPaint = new Map(); // a dict keyed by the colour: its first key, its paths
    for (const [x0, y0, x1, y1, lc] of zip(col("x0"), col("y0"), col("x1"), col("y1"),
      col("line_color"))) {
      if ([x0, y0, x1, y1].some(bad)) { continue; }
      const key = plainColour(lc);
      if (!byPaint.has(key)) { byPaint.set(key, [lc, []]); }
      byPaint.get(key)[1].push(pathOf([[frame.x(x0), frame.y(y0)], [frame.x(x1), frame.y(y1)]]));
    }
    return [...byPaint.values()].map(([lc, parts]) => {
      const [attrs, cls] = stroke(lc, g.line_width, g.line_dash, g.line_alpha);
      return tag("path", ` d="${parts.join("")}"` + attrs, cls);
    });
  }

  function textSvg(g, col, frame) {
    const out = [];
    for (const [x, y, text, colour, xo, yo, angle] of zip(col("x"), col("y"), col("text"),
      col("text_color"), col("x_offset"), col("y_offset"), col("angle"))) {
      if (bad(x) || bad(y) || text === null || text === undefined || text === "") { continue; }
      out.push(textEl(frame.x(x) + (xo || 0), frame.y(y) + (yo || 0), text, g.text_align,
        g.text_baseline, angle || 0.0, colour, false, g.text_font_style === "bold"));
    }
    return out;
  }

  function wedgeSvg(kind, g, col, frame, n) {
    const out = [];
    const deg = (g.start_angle_units ?? "rad") === "deg";
    const arc = kind === "Arc";
    const fills = arc ? Array(Math.max(n, 1)).fill(null) : col("fill_color");
    const alphas = arc ? Array(Math.max(n, 1)).fill(0) : col("fill_alpha");
    for (let [x, y, r, a0, a1, fc, fa, lc] of zip(col("x"), col("y"),
      col(kind === "AnnularWedge" ? "outer_radius" : "radius"), col("start_angle"),
      col("end_angle"), fills, alphas, col("line_color"))) {
      if (deg) { [a0, a1] = [a0 * DEG_TO_RAD, a1 * DEG_TO_RAD]; }
      const [cx, cy] = [frame.x(x), frame.y(y)];
      const [rx, ry] = [frame.dx(2 * r, x) / 2, frame.dy(2 * r, y) / 2];
      const p0 = [cx + rx * Math.cos(a0), cy - ry * Math.sin(a0)];
      const p1 = [cx + rx * Math.cos(a1), cy - ry * Math.sin(a1)];
      const large = pyMod(a1 - a0, 2 * Math.PI) > Math.PI ? 1 : 0;
      const path = `A${num(rx)} ${num(ry)} 0 ${large} 0 ${num(p1[0])} ${num(p1[1])}`;
      if (arc) {
        if (Math.abs(a1 - a0) < 1e-6) { continue; }
        const [attrs, cls] = stroke(lc, g.line_width);
        out.push(tag("path", ` d="M${num(p0[0])} ${num(p0[1])}${path}" fill="none"` + attrs, cls));
      } else {
        const [fAttrs, fCls] = fill(fc, fa);
        const [sAttrs, sCls] = stroke(lc, g.line_width);
        const d = `M${num(cx)} ${num(cy)}L${num(p0[0])} ${num(p0[1])}${path}Z`;
        out.push(tag("path", ` d="${d}"` + fAttrs + sAttrs, [...fCls, ...sCls]));
      }
    }
    return out;
  }

  const KINDS = {Line: "line", Scatter: "point", VBar: "bar", Rect: "cell", Segment: "line",
    Text: "text", AnnularWedge: "gauge", Wedge: "gauge", Arc: "gauge"};

  function glyphSvg(renderer, sources, frame) { // -> [[SVG element], kind] of one renderer
    const g = renderer.glyph;
    const data = sources[renderer.source];
    const n = rows(data);
    const col = (prop) => column(g, prop, data, n);
    const kind = g.kind;
    let out;
    if (kind === "Line") { out = lineSvg(g, col, frame); }
    else if (kind === "Scatter") { out = scatterSvg(g, col, frame); }
    else if (kind === "VBar" || kind === "Rect") { out = boxSvg(kind, col, frame); }
    else if (kind === "Segment") { out = segmentSvg(g, col, frame); }
    else if (kind === "Text") { out = textSvg(g, col, frame); }
    else if (kind in KINDS) { out = wedgeSvg(kind, g, col, frame, n); }
    else { throw new Error(`a still cannot draw a ${kind} glyph`); }
    return [out, KINDS[kind]];
  }

  function arrowSvg(a, frame) {
    const [x0, y0, x1, y1] = [frame.x(a.x_start), frame.y(a.y_start), frame.x(a.x_end),
      frame.y(a.y_end)];
    const length = hypot(x1 - x0, y1 - y0) || 1.0;
    const [ux, uy] = [(x1 - x0) / length, (y1 - y0) / length];
    const size = a.end_size;
    const [attrs, cls] = stroke(a.line_color, a.line_width);
    let d = pathOf([[x0, y0], [x1, y1]]);
    if (size) {
      const back = [x1 - ux * size, y1 - uy * size];
      d += `M${num(back[0] - uy * size / 2)} ${num(back[1] + ux * size / 2)}`
        + `L${num(x1)} ${num(y1)}L${num(back[0] + uy * size / 2)} ${num(back[1] - ux * size / 2)}`;
    }
    return [tag("path", ` d="${d}" fill="none"` + attrs, cls)];
  }

  function annotationSvg(a, frame) { // -> [SVG element] of a Span, Label or Arrow
    if (!(a.visible ?? true)) { return []; }
    if (a.kind === "Span") {
      if (bad(a.location)) { return []; }
      const [attrs, cls] = stroke(a.line_color, a.line_width, a.line_dash, a.line_alpha);
      const d = a.dimension === "width"
        ? `M${num(frame.left)} ${num(frame.y(a.location))}h${num(frame.width)}`
        : `M${num(frame.x(a.location))} ${num(frame.top)}v${num(frame.height)}`;
      return [tag("path", ` d="${d}"` + attrs, cls)];
    }
    if (a.kind === "Label") {
      return [textEl(frame.x(a.x) + (a.x_offset || 0), frame.y(a.y) + (a.y_offset || 0),
        a.text, a.text_align, a.text_baseline, a.angle || 0.0, a.text_color, a.background_fill_color !== null
          && a.background_fill_color !== undefined)];
    }
    if (a.kind === "Arrow") { return arrowSvg(a, frame); }
    throw new Error(`a still cannot draw a ${a.kind}`);
  }

  function swatch(renderer, sources, x, y) { // a legend item's sample of its glyph
    const g = renderer.glyph;
    const data = sources[renderer.source];
    const first = (prop) => column(g, prop, data, Math.max(rows(data), 1))[0];
    if (g.kind === "Line" || g.kind === "Segment") {
      const [attrs, cls] = stroke(g.line_color, g.line_width, g.line_dash, g.line_alpha);
      return tag("path", ` d="M${num(x)} ${num(y)}h16"` + attrs, cls);
    }
    if (g.kind === "Scatter") {
      return marker(first("marker"), x + 8, y, 9, first("line_color"), first("fill_color"),
        first("line_width"));
    }
    const [fAttrs, fCls] = fill(first("fill_color"));
    return tag("rect", ` x="${num(x + 2)}" y="${num(y - 6)}" width="12" height="12"` + fAttrs, fCls);
  }

  // --- a figure -----------------------------------------------------------------------

  function describe(fig, kinds, legend) { // -> the picture's accessible name
    const xa = [...visibleAxes(fig, "below"), ...visibleAxes(fig, "above")].map((a) => a.label);
    const ya = [...visibleAxes(fig, "left"), ...visibleAxes(fig, "right")].map((a) => a.label);
    const has = (k) => kinds.includes(k);
    const what = fig.diagram ? "Diagram" : has("cell") && !has("bar") ? "Heat map"
      : has("gauge") ? "Gauge" : has("bar") ? "Bar chart" : has("line") ? "Line chart" : "Chart";
    const title = fig.title !== null && fig.title.text ? fig.title.text : "";
    let text = title ? `${what}: ${title}` : what;
    if (ya.some((t) => t) && xa.some((t) => t)) { text += `${title ? "," : ""} ${ya[0]} against ${xa[0]}`; }
    else if (xa.some((t) => t)) { text += `${title ? "," : ""} by ${xa[0]}`; }
    if (legend.length) { text += " (" + legend.join("; ") + ")"; }
    return text + ", as the panel opens";
  }

  function legendItems(fig) { // -> [[label, renderer]] of the visible items
    const out = [];
    for (const layout of fig.legends) {
      if (!layout.visible) { continue; }
      for (const item of layout.items) {
        const live = item.renderers.map((i) => fig.renderers[i]).filter((r) => r.visible);
        if (item.visible && live.length) { out.push([labelText(item.label), live[0]]); }
      }
    }
    return out;
  }

  function layout(fig, width) { // -> the frame's place, the ticks, title and legend
    const fixed = fig.fixed && fig.width && fig.width <= width;
    width = fixed ? fig.width : width;
    const frameH = fixed ? fig.height - 20 : Math.max(70, Math.min(200, roundHalfEven(fig.height * 0.55)));
    const [below, left] = [visibleAxes(fig, "below"), visibleAxes(fig, "left")];
    const tickList = (axis, range, log) => ticks(axis, range.start, range.end, log)
      .map((v) => [v, tickLabel(axis, v)]);
    const yticks = left.length ? tickList(left[0], fig.y_range, fig.ylog) : [];
    let xticks = below.length ? tickList(below[0], fig.x_range, fig.xlog) : [];
    const title = wrap(fig.title !== null && fig.title.text && fig.title.visible ? fig.title.text
      : "", width - 8);
    let padL = 0;
    if (left.length) { padL = Math.max(0, ...yticks.map(([, t]) => len(t))) * CHAR + (yticks.length ? 8 : 0); }
    padL = Math.max(padL, fixed ? 4 : (fig.min_border_left || 0), 6);
    let padT = fixed ? 4 : Math.max(fig.min_border_top || 0, 8);
    const yTitle = left.length ? left[0].label : "";
    padT += (title ? LINE * (title.split("\n").length) + 6 : 0) + (yTitle ? LINE + 4 : 0);
    let padR = Math.max(12, xticks.length ? len(xticks[xticks.length - 1][1]) * CHAR / 2 : 0);
    if (fixed) { padR = 4; }
    let padB = 6;
    if (below.length) { padB = (xticks.length ? LINE + 6 : 4) + (below[0].label ? LINE + 2 : 0) + 4; }
    const frame = new Frame(fig, padL, padT, width - padL - padR, frameH);
    xticks = spaced(xticks, frame);
    return {width, frame, below, left, xticks, yticks, title, yTitle, padB,
      legend: legendItems(fig)};
  }

  function axesSvg(at) { // -> the axes' lines, ticks, labels and titles, and the title
    const {frame, below, left, xticks, yticks, width} = at;
    const axes = [];
    const bottom = frame.top + frame.height;
    if (below.length) {
      axes.push(tag("path", ` d="M${num(frame.left)} ${num(bottom)}h${num(frame.width)}"`, ["k"]));
      const marks = xticks.map(([v]) => `M${num(frame.x(v))} ${num(bottom)}v4`).join("");
      if (marks) { axes.push(tag("path", ` d="${marks}"`, ["k"])); }
      axes.push(...xticks.map(([v, t]) => textEl(frame.x(v), bottom + 6, t, "center", "top")));
      const xTitle = below[0].label;
      if (xTitle) { // centred under the frame, inside the picture
        const half = len(xTitle) * CHAR / 2;
        const x = Math.min(Math.max(frame.left + frame.width / 2, half + 2), width - half - 2);
        axes.push(textEl(x, bottom + (xticks.length ? LINE + 8 : 6), xTitle, "center", "top"));
      }
    }
    if (left.length) {
      axes.push(tag("path", ` d="M${num(frame.left)} ${num(frame.top)}v${num(frame.height)}"`, ["k"]));
      const marks = yticks.map(([v]) => `M${num(frame.left - 4)} ${num(frame.y(v))}h4`).join("");
      if (marks) { axes.push(tag("path", ` d="${marks}"`, ["k"])); }
      axes.push(...yticks.map(([v, t]) => textEl(frame.left - 6, frame.y(v), t, "right", "middle")));
      if (at.yTitle) { axes.push(textEl(4, frame.top - 8, "↑ " + at.yTitle, "left", "bottom")); }
    }
    if (at.title) { axes.push(textEl(4, 4, at.title, "left", "top", 0.0, null, false, true)); }
    return axes;
  }

  function legendSvg(at, sources, top) { // -> [the legend's keys, the picture's height]
    const keys = [];
    let [x, y] = [4.0, top + 8];
    for (const [label, renderer] of at.legend) {
      const need = 22 + len(label) * CHAR;
      if (x > 4 && x + need > at.width) { [x, y] = [4.0, y + LINE + 2]; }
      keys.push(swatch(renderer, sources, x, y));
      keys.push(textEl(x + 20, y, label, "left", "middle"));
      x += need + 12;
    }
    return [keys, at.legend.length ? y + LINE - 4 : top];
  }

  function figureSvg(fig, sources, width = W) { // a described figure in a state -> its SVG
    const at = layout(fig, width);
    const {frame} = at;
    const [clipped, over, kinds] = [[], [], []];
    for (const r of fig.renderers) {
      if (!r.visible) { continue; }
      const [parts, kind] = glyphSvg(r, sources, frame);
      kinds.push(kind);
      (["glyph", "underlay", "image"].includes(r.level) ? clipped : over).push(...parts);
    }
    for (const a of fig.annotations) { over.push(...annotationSvg(a, frame)); }
    const axes = axesSvg(at);
    const [keys, height] = legendSvg(at, sources, frame.top + frame.height + at.padB);
    const name = describe(fig, kinds, at.legend.map(([label]) => label));
    let inner = clipped.join("");
    if (inner) { // the data, clipped to the frame as Bokeh clips it: a nested viewport
      const [l, t, w, h] = [frame.left, frame.top, frame.width, frame.height].map(num);
      inner = `<svg x="${l}" y="${t}" width="${w}" height="${h}" viewBox="${l} ${t} ${w} ${h}">`
        + `${inner}</svg>`;
    }
    const body = compact(axes.join("") + inner + over.join("") + keys.join(""));
    return `<svg class="ae-chart" viewBox="0 0 ${num(at.width)} ${num(height)}" role="img" `
      + `aria-label="${esc(name)}">${body}</svg>`;
  }

  const RECT = /<rect x="([^"]+)" y="([^"]+)" width="([^"]+)" height="([^"]+)"([^>]*)\/>/g;
  const TEXT = /<text( x="[^"]+" y="[^"]+")((?: (?!transform)[a-z-]+="[^"]*")*)>(.*?)<\/text>/g;

  function runs(pattern, keyGroup, text, join) { // each run of matches with one key, joined
    const out = [];
    let [at, run, key] = [0, [], null];
    const flush = () => {
      if (run.length) { out.push(run.length > 1 ? join(run, key) : run[0][0]); }
      run = [];
    };
    for (const m of text.matchAll(pattern)) {
      const k = m[keyGroup] ?? "";
      if (m.index !== at || k !== key) {
        flush();
        out.push(text.slice(at, m.index));
      }
      run.push(m);
      [key, at] = [k, m.index + m[0].length];
    }
    flush();
    out.push(text.slice(at));
    return out.join("");
  }

  function compact(body) { // a run of rects of one paint is one path; of texts, one <g>
    const rects = (run, key) => `<path d="${run.map((m) => `M${m[1]} ${m[2]}h${m[3]}v${m[4]}h-${m[3]}z`).join("")}"${key}/>`;
    const texts = (run, key) => `<g${key}>${run.map((m) => `<text${m[1]}>${m[3]}</text>`).join("")}</g>`;
    return runs(TEXT, 2, runs(RECT, 5, body, rects), texts);
  }

  // --- a description and a state ------------------------------------------------------

  function revive(v) { // a non-finite float, which JSON cannot hold: {"float": "NaN"}
    if (Array.isArray(v)) { return v.map(revive); }
    if (v !== null && typeof v === "object") {
      if (Object.keys(v).length === 1 && typeof v.float === "string") { return Number(v.float); }
      return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, revive(x)]));
    }
    return v;
  }

  function modelsOf(v, out = new Map()) { // every described model that carries an id
    if (Array.isArray(v)) { v.forEach((x) => modelsOf(x, out)); }
    else if (v !== null && typeof v === "object") {
      if (typeof v.id === "string") { out.set(v.id, v); }
      Object.values(v).forEach((x) => modelsOf(x, out));
    }
    return out;
  }

  function inState(description, state) { // -> the figures and sources, the state applied
    const {panes, sources} = revive(description);
    const models = modelsOf(panes);
    for (const {name, kind, attr, id} of description.targets) { // records: targets.py
      if (!(name in state)) { continue; }
      if (kind === "source") {
        sources[id] = {...sources[id], ...state[name]};
      } else {
        const model = models.get(id);
        if (model === undefined) { throw new Error(`no model ${id} for ${name}`); }
        model[attr] = state[name];
      }
    }
    return {panes, sources};
  }

  // -> the SVG of each pane's figures (stills.stills_of) for the panel in `state`
  function draw(description, state) {
    const {panes, sources} = inState(description, state);
    return panes.map((figs) => figs.filter((f) => f.visible)
      .map((f) => figureSvg(f, sources)).join(""));
  }

  // --- readouts: a Readout's HTML in a still (app/chapters/chapter_page.py still_html) -----

  const HOLE_ELEMENT = /(<(\w+)[^>]*?\sdata-s="([\w-]+)"[^>]*>)(<\/\2>)/g; // app/kit/readout.py
  const LIVE_ONLY = / (?:data-s|aria-live)="[^"]*"/g;
  const EMPTY = new RegExp("<(li|span|b|small|sup|sub|p|div|ul|em|strong)(?: [^>]*)?></\\1>"
    + "|(?:<t([dh])(?: [^>]*)?></t\\2>)+(?=</tr>)|<tr></tr>", "g");

  function filled(template, values) { // Readout.filled: each hole's text, escaped
    const escText = (t) => String(t).replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
    return template.replace(HOLE_ELEMENT, (m, open, tagName, name, close) => {
      if (!(name in values)) { throw new Error(`no value for the hole ${name}`); }
      return open + escText(values[name]) + close;
    });
  }

  // a line the panels' stylesheets hide while its hole is empty (chapter_page.UNMET)
  const UNMET = new RegExp('<div class="ae-end">(?:(?!</div>)[\\s\\S])*?<b data-s="[\\w-]+"></b>'
    + "(?:(?!</div>)[\\s\\S])*?</div>"
    + '|<div class="ae-if">(?:(?!</div>)[\\s\\S])*?<(b|span) data-s="[\\w-]+"></\\1>'
    + "(?:(?!</div>)[\\s\\S])*?</div>", "g");

  function stillHtml(text) { // no holes, no live regions, no empty element, no unmet line
    let before = null;
    text = text.replace(UNMET, "").replace(LIVE_ONLY, "").split(' role="status"').join("");
    while (before !== text) { [before, text] = [text, text.replace(EMPTY, "")]; }
    return text;
  }

  // -> per readout of the description, {html, empty}: its still's HTML in `state`, and
  // whether it shows no text (a still leaves such a readout out)
  function readouts(description, state) {
    return description.readouts.map((r) => {
      const values = {...r.values};
      for (const name of r.targets) { Object.assign(values, state[name] ?? {}); }
      const html = stillHtml(filled(r.template, values));
      return {html, empty: html.replace(/<[^>]+>/g, "").trim() === ""};
    });
  }

  function stateAt(table, at) { // a table of states and each control's stop -> the state
    const state = {};
    for (const part of table.parts) {
      let index = 0;
      for (const c of part.controls) { index = index * table.controls[c].raw.length + at[c]; }
      Object.assign(state, part.values[part.index[index]]);
    }
    return state;
  }

  const api = {draw, readouts, stateAt, num, formatG};
  if (typeof window !== "undefined") {
    const AE = window.AE = window.AE || {};
    AE.stills = api;
  }
  if (typeof module !== "undefined") { module.exports = api; }
})();
