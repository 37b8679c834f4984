"""When a page is ready, as the browser tests and benchmarks/a11y_race.py both judge it (one
definition, so the benchmark measures what the tests assert).

Each is a JavaScript function for Playwright's `wait_for_function`: it returns a falsy value
until the condition holds.
"""

# Statements: return `not_ready` unless every island is mounted (on a chapter page the panels
# are islands that mount as a reader nears them, static/islands.js: asking mounts them all
# first, as a reader scrolling through would), a live chapter's session is attached (it
# attaches as a reader nears a part, static/live_page.js: asking attaches it) and every Bokeh
# document is idle.
def _until_mounted_and_idle(not_ready):
    return f"""
  const textOnly = window.AE !== undefined && (
    (AE.islands !== undefined && document.querySelectorAll(".ae-island").length === 0)
    || (AE.livePage !== undefined && !AE.livePage.attach()));  // text alone (/numbers)
  if (window.AE !== undefined && AE.islands !== undefined) {{
    AE.islands.mountAll();
    const islands = document.querySelectorAll(".ae-island");
    if (document.querySelectorAll(".ae-island.ae-mounted").length < islands.length) {{
      return {not_ready};
    }}
  }}
  if (!textOnly && (window.Bokeh === undefined || Bokeh.documents.length === 0
      || !Bokeh.documents.every((doc) => doc.is_idle))) {{ return {not_ready}; }}
  // a live chapter's panel shows its still until its session's panel takes over
  // (static/live_stills.js)
  if (document.querySelector(".ae-live-panel > .ae-island:not(.ae-mounted)")) {{
    return {not_ready};
  }}"""


# Every <link rel=stylesheet> of the page and of every shadow root has loaded (its sheet is
# null until then): Panel links a component's theme stylesheets, and a colour read before a
# dark theme's sheet arrives is the default's, dark on dark.
STYLESHEETS_LOADED_JS = """() => {
  const roots = [document];
  while (roots.length > 0) {
    for (const el of roots.pop().querySelectorAll("*")) {
      if (el.shadowRoot) { roots.push(el.shadowRoot); }
      if (el.localName === "link" && el.rel === "stylesheet" && el.sheet === null) {
        return false;
      }
    }
  }
  return true;
}"""


# Every Bokeh document on the page has rendered (islands mounted first).
DOCUMENT_IDLE_JS = "() => {" + _until_mounted_and_idle("false") + "\n  return true;\n}"

# -> every shown control without an accessible name, through shadow roots: [what]. The
# test's own look, not static/a11y.js's (AE.a11y.unnamed), which it checks.
UNNAMED_JS = """() => {
  const out = [], roots = [document];
  const named = (el) => Boolean((el.getAttribute("aria-label") || "").trim()
    || el.getAttribute("aria-labelledby") || (el.getAttribute("title") || "").trim()
    || el.closest("label")
    || (el.id && el.getRootNode().querySelector(`label[for="${CSS.escape(el.id)}"]`)));
  while (roots.length > 0) {
    const root = roots.pop();
    for (const el of root.querySelectorAll("*")) {
      if (el.shadowRoot) { roots.push(el.shadowRoot); }
      if (el.getClientRects().length === 0 || el.closest("[aria-hidden=true]")) { continue; }
      const role = el.getAttribute("role"), tag = el.localName;
      const field = (tag === "input" && !["hidden", "button", "submit"].includes(el.type))
        || tag === "select" || tag === "textarea";
      const bad = role === "slider" || role === "spinbutton" || field ? !named(el)
        : tag === "button" || role === "button" ? !named(el) && !el.textContent.trim()
        : el.classList.contains("ae-scroll") ? el.tabIndex < 0 : false;
      if (bad) { out.push(`${tag}.${[...el.classList].join(".")}`); }
    }
  }
  return out;
}"""

# The page is ready: every island mounted (asking mounts them all, as a reader scrolling
# through a chapter would), every Bokeh document idle, no panel still to come (a live
# chapter's deferred panels show a loading placeholder until they arrive). Nothing of
# static/a11y.js is waited for: in the same turn of the page's loop as the condition
# first holds, the condition returns what lacks a name then (UNNAMED_JS), and AE.a11y.ready()
# must agree. Polled every animation frame.
READY_JS = "() => {" + _until_mounted_and_idle("null") + """
  const roots = [document];
  while (roots.length > 0) {
    const root = roots.pop();
    if (root.querySelector(".pn-loading")) { return null; }
    for (const el of root.querySelectorAll("*")) {
      if (el.shadowRoot) { roots.push(el.shadowRoot); }
    }
  }
  return {unnamed: (""" + UNNAMED_JS + """)(),
          ready: textOnly ? true  // no panel: nothing of a11y.js to wait for, nor loaded
            : window.AE && AE.a11y && AE.a11y.ready ? AE.a11y.ready() : null};
}"""


def settled_js(js):  # a function's text -> one that returns its answer once two polls agree
    # (null until then; `token` starts a new count). Poll it at the interval that stands for
    # "laid out": wait_for_function(settled_js(js), arg=token, polling=300)
    return """(token) => {
  const now = (""" + js + """)(), key = JSON.stringify(now);
  const s = window.__settled;
  if (!s || s.token !== token) { window.__settled = {token, key}; return null; }
  if (key !== s.key) { s.key = key; return null; }
  return now;
}"""
