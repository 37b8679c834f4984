"""The fence: every private name and undocumented surface of Panel, Bokeh and Tornado that
this project depends on, what each is for, and the versions checked.

Nothing outside this module reaches a private name of Panel, Bokeh or Tornado; torch's are
in kernels/torch_internals.py, BokehJS's in static/bokeh_fence.js.
tests/test_fence.py scans the sources and fails on a new private access anywhere else;
tests/test_panel_internals.py checks that each name below is still there and still works.

Panel and Bokeh are pinned in pyproject.toml to the minor versions this module was checked
against (CHECKED). A minor upgrade may rename or drop any name below; check_versions() says
so loudly (tests/test_panel_internals.py fails, and install() warns on a server start)
instead of letting a patch switch itself off and the app slow down quietly. After an
upgrade: run tests/test_panel_internals.py and benchmarks/app_latency.py, fix what broke
here, then move CHECKED and the pins.

Public APIs are used where they do the job: pn.io.hold() is what holds a document through
one interaction; pn.state.rel_path and pn.state.location give a session's paths;
Document.template_variables holds a session's dist_url; BokehTornado.applications maps a
route to its context. Panel is imported inside the functions, so that the build and
`--help` can read the patterns below without loading it.

The patches (install(): called by a live server as it starts, app.hosting.server.main, and by
app/hosting/serve_panel.py for `panel serve`; nothing is patched at import):

1. panel.reactive.Syncable._debounce = 0
   Panel holds each incoming widget change 50 ms to batch bursts. The sliders here report
   on release (value_throttled) or are cheap to recompute, so answer at once.
2. Syncable._change_event and Syncable._process_bokeh_event, run inside pn.io.hold(doc)
   One interaction, one websocket message. Panel writes each component's model changes as
   a PATCH-DOC message of its own, so a click on the head went out as 16 messages, each
   serialized and written in turn; these two methods are where every incoming change and
   event is handled, and no public hook wraps them. Holding the document through them
   sends the interaction's changes as one message: the server's share of a click on
   /heatmap fell from about 40 ms to 12-16 ms (benchmarks/app_latency.py).
3. Syncable._change_coroutine and Syncable._event_coroutine, after pending socket writes
   Bokeh answers the browser's change with an "OK" while our handler is already running;
   when the handler's patch is ready and that reply still holds the socket's write lock,
   Panel parks the patch and retries 10 ms later. Waiting for pending writes first lets the
   patch go out as soon as it is made. Reads Bokeh's ServerSession._subscribed_connections,
   ServerConnection._socket and WSHandler.write_lock (write_locks()).

Other internals, used through the functions here:

4. panel.io.state.state._sessions and state._session_key_funcs (cache_reused_session)
   Panel's reused first paints: Panel's DocHandler looks a request's key up in these two.
   Filling them before any visitor arrives makes every first paint the plain page. A real
   GET to the server itself would do it publicly, but with --num-procs the forked
   processes share one port and a GET may land on another process: each must fill its own.
5. bokeh.server.server.Server._tornado (tornado_app)
   The Tornado application itself: to add handlers ahead of Bokeh's routes (app/hosting/server.py)
   and to reach a route's context. Bokeh's Server offers no public accessor.
6. panel.config._admin and state._admin_context (admin_context; app/hosting/security.py)
   What `panel serve --admin` sets: Panel keeps every session's history for the dashboard,
   and its server loop runs the admin context's hooks. No public API mounts the dashboard
   on routes of our own (behind a password).

7. panel.viewable.Viewable._preprocessing_hooks (after panel.links.Callback._process_callbacks)
   A hook Panel runs on each root it renders, after its links' hook has made the CustomJS
   (jscallback_with_one_argument). Panel turns a Panel object in a callback's `args` into
   that root's Bokeh model only at the top level: a list or dict of them goes out as it is.
   The hook gathers the top-level models it was given into the one object the script reads;
   it reads each planned widget's model in the root from Viewable._models. It is installed
   by the first static panel built (not by install()) and stays: a live session's root then
   costs a dict lookup for each static widget still alive (167 after a whole build, which
   `serve` runs in its own process: microseconds).

8. panel.io.state.state._locations (session_location)
   Panel's Location.from_request reads each all-digit query value with int(), which Python
   refuses past 4,300 digits: a session built from such a URL (a GET with
   --no-reuse-sessions) failed, and the page answered 500. Where it fails, the session's
   Location starts blank, as a reused session's does; the app reads the value from the
   session's arguments and repairs it as it repairs any bad value.

The undocumented surfaces, text Panel and Bokeh write that we read (SURFACES):

9. What a saved page holds, asked of the functions panel.io.save.file_html calls rather than
   read back out of the page it writes (document_parts): the document's JSON, which root
   renders into which element, and the scripts to load (app/chapters/chapter_page.py ships them; the
   build drops the scripts a page does not use).
10. The file names on Bokeh's CDN (BOKEH_CDN, bokeh_cdn_file; app/hosting/build.py maps them onto
   the package's own files).
11. Panel's autoload.js names es-module-shims by a path relative to the page
   (AUTOLOAD_RELATIVE_STATIC, absolute_static_urls; app/hosting/security.py makes it absolute), and
   takes the server's URL from its `bokeh-absolute-url` argument (AUTOLOAD_URL_ARG).
12. The admin routes Panel mounts for an application (panel.io.server.per_app_patterns).
13. Panel reads a session's asset base from its "dist_url" template variable (set_dist_url).
14. The script tags Panel's page writes into its `bokeh_js` template variable (its
    js_resources.html: one `<script type="text/javascript" src=...>` per bundle, inline
    `<script type="text/javascript">` snippets). deferred_scripts writes them again, deferred
    and without bokeh-gl: Panel's bundle_resources keeps every one of Bokeh's default
    components (Bokeh's own bundle drops bokeh-gl when no plot draws with WebGL, Panel's does
    not), and no setting or argument of Panel's or Bokeh's server chooses them.
"""

import functools
import logging
import re
import warnings
import weakref
from importlib.metadata import version

log = logging.getLogger(__name__)

# package -> (major, minor) this module was checked against; pyproject.toml pins the same
CHECKED = {"panel": (1, 9), "bokeh": (3, 9)}

# (internal, where it lives, what we do with it): the private names this module touches
INTERNALS = (
    ("Syncable._debounce", "panel.reactive", "set to 0: no 50 ms hold on incoming changes"),
    ("Syncable._change_event", "panel.reactive", "run inside pn.io.hold(doc): one message"),
    ("Syncable._process_bokeh_event", "panel.reactive", "run inside pn.io.hold(doc)"),
    ("Syncable._change_coroutine", "panel.reactive", "waits for pending socket writes"),
    ("Syncable._event_coroutine", "panel.reactive", "waits for pending socket writes"),
    ("ServerSession._subscribed_connections", "bokeh.server.session", "read: the connections"),
    ("ServerConnection._socket", "bokeh.server.connection", "read: the connection's socket"),
    ("WSHandler.write_lock", "bokeh.server.views.ws", "awaited: pending writes"),
    ("state._sessions", "panel.io.state", "filled: reused first paints"),
    ("state._session_key_funcs", "panel.io.state", "filled: the reuse key of a route"),
    ("Server._tornado", "bokeh.server.server", "read: the Tornado app (handlers, contexts)"),
    ("config._admin", "panel.config", "set: keep every session's history for the dashboard"),
    ("state._admin_context", "panel.io.state", "set: the server loop runs the admin's hooks"),
    ("Viewable._preprocessing_hooks", "panel.viewable", "appended: one CustomJS argument"),
    ("Callback._process_callbacks", "panel.links", "read: the hook that makes the CustomJS"),
    ("Viewable._models", "panel.viewable", "read: a widget's Bokeh model in one root"),
    ("state._locations", "panel.io.state", "filled: a blank Location where Panel's parse fails"),
)

# (surface, who writes it, what we read): undocumented text and names, no underscore
SURFACES = (
    ("document_parts", "panel.io.save.file_html", ("its steps, called in the same order: "
     "bokeh.embed.util's OutputDocumentFor and standalone_docs_json_and_render_items, "
     "panel.io.resources' Resources.from_bokeh, set_resource_mode and bundle_resources")),
    ("BOKEH_CDN", "bokeh.resources.CDN", "the CDN's file names, mapped onto the package"),
    ("AUTOLOAD_RELATIVE_STATIC", "panel autoload.js", "es-module-shims' relative path"),
    ("AUTOLOAD_URL_ARG", "bokeh autoload.js", "the server's URL, as the embed passed it"),
    ("per_app_patterns", "panel.io.server", "the routes an application is served on"),
    ("dist_url", "panel.io.resources", "the template variable naming a session's assets"),
    ("bokeh_js", "panel/_templates/js_resources.html", "its script tags, to defer them"),
)

DEBOUNCE_MS = 0
HELD = ("_change_event", "_process_bokeh_event")
AFTER_WRITES = ("_change_coroutine", "_event_coroutine")
MARK = "_attention_explorable_patch"  # set on our wrappers: install() runs once


class InternalsChanged(RuntimeError):
    """A Panel or Bokeh internal this project relies on is missing or has another shape."""


# ---------------------------------------------------------------- versions

def minor(text):  # "1.9.4" -> (1, 9); "1.10.0rc1" -> (1, 10)
    major, rest = text.split(".", 1)
    return int(major), int(re.match(r"\d*", rest).group() or 0)


def installed_versions():  # -> {"panel": "1.9.4", "bokeh": "3.9.2"}
    return {name: version(name) for name in CHECKED}


def version_problems(installed=None):  # -> [str]: each package off the minor checked here
    installed = installed_versions() if installed is None else installed
    out = []
    for name, want in CHECKED.items():
        got = minor(installed[name])
        if got != want:
            newer = "a newer" if got > want else "an older"
            out.append(f"{name} {installed[name]} is {newer} minor than the {want[0]}.{want[1]} "
                       f"that app/kit/panel_internals.py was checked against")
    return out


def check_versions(strict=True):  # -> [problems]; raises InternalsChanged when strict
    problems = version_problems()
    if problems and strict:
        raise InternalsChanged("; ".join(problems) + ": run tests/test_panel_internals.py, "
                               "fix app/kit/panel_internals.py, then move CHECKED and the pins")
    for problem in problems:
        warnings.warn(f"{problem}; its patches may be inactive (tests/test_panel_internals.py)",
                      RuntimeWarning, stacklevel=2)
    return problems


# ---------------------------------------------------------------- the patches

def _syncable():
    from panel.reactive import Syncable
    return Syncable


def _held(process):  # Syncable method (self, doc, ...) -> the same, inside pn.io.hold(doc)
    import panel as pn
    from panel.io.state import set_curdoc

    @functools.wraps(process)
    def run(self, doc, *args, **kwargs):
        with set_curdoc(doc), pn.io.hold(doc):
            return process(self, doc, *args, **kwargs)

    setattr(run, MARK, "held")
    return run


def write_locks(doc):  # -> the write locks of every socket subscribed to doc's session
    context = doc.session_context
    session = getattr(context, "session", None) if context is not None else None
    if session is None:  # not a server session (a notebook, a test): nothing to wait for
        return []
    try:
        return [conn._socket.write_lock for conn in list(session._subscribed_connections)]
    except AttributeError as e:
        raise InternalsChanged(f"Bokeh's session no longer has the expected connections, "
                               f"sockets or write locks ({e})") from e


_warned = set()


def _warn_once(key, message):
    if key not in _warned:
        _warned.add(key)
        log.error(message)
        warnings.warn(message, RuntimeWarning, stacklevel=3)


def _after_pending_writes(coroutine):  # async Syncable method -> the same, after pending writes
    @functools.wraps(coroutine)
    async def run(self, doc, *args, **kwargs):
        try:
            locks = write_locks(doc)
        except InternalsChanged as e:  # never break an interaction: say so loudly, go on
            _warn_once("write_locks", f"app/kit/panel_internals.py: {e}")
            locks = []
        for lock in locks:
            async with lock:
                pass
        return await coroutine(self, doc, *args, **kwargs)

    setattr(run, MARK, "after pending writes")
    return run


def _require(owner, name):
    if not callable(getattr(owner, name, None)):
        raise InternalsChanged(f"{owner.__module__}.{owner.__name__}.{name} is gone: "
                               "app/kit/panel_internals.py must be updated for this Panel")


def install():  # -> {patch: "installed" | "already"}; idempotent; raises InternalsChanged
    check_versions(strict=False)
    Syncable = _syncable()
    if not hasattr(Syncable, "_debounce"):
        raise InternalsChanged("panel.reactive.Syncable._debounce is gone")
    Syncable._debounce = DEBOUNCE_MS
    done = {"_debounce": "installed"}
    for names, wrap in ((HELD, _held), (AFTER_WRITES, _after_pending_writes)):
        for name in names:
            _require(Syncable, name)
            current = getattr(Syncable, name)
            if getattr(current, MARK, None):
                done[name] = "already"
                continue
            setattr(Syncable, name, wrap(current))
            done[name] = "installed"
    return done


def active():  # -> {patch: bool}: whether each patch is in place on Syncable right now
    Syncable = _syncable()
    out = {"_debounce": getattr(Syncable, "_debounce", None) == DEBOUNCE_MS}
    for name in HELD + AFTER_WRITES:
        out[name] = bool(getattr(getattr(Syncable, name, None), MARK, None))
    return out


# ---------------------------------------------------------------- the other internals

def session_location(doc):  # -> the session's Location (pn.state.location): a blank one
    # where Panel cannot parse the URL it was built from (item 8 above)
    import panel as pn

    try:
        return pn.state.location
    except ValueError:
        from panel.io.location import Location

        location = pn.state._locations[doc] = Location()
        return location


def set_dist_url(doc, dist_url):  # where this session's Panel stylesheets and assets load from
    doc.template_variables["dist_url"] = dist_url


def dist_url(doc):  # -> the session's asset base, or None when Panel would use its default
    return doc.template_variables.get("dist_url")


def tornado_app(server):  # a started or unstarted pn.serve(...) server -> its BokehTornado
    return server._tornado


def application_context(server, path):  # -> the ApplicationContext serving path, or None
    return tornado_app(server).applications.get(path)


def is_reused(key):  # -> whether Panel holds a reused first-paint session under this key
    from panel.io.state import state
    return key in state._sessions


def cache_reused_session(path, key_func, key, session):
    # make `session` the first paint Panel's DocHandler reuses for requests whose key is `key`
    from panel.io.state import state
    state._session_key_funcs[path] = key_func
    state._sessions[key] = session
    session.block_expiration()


async def warm_reused_sessions(server, paths, key_func, themes=("default", "dark")):
    # -> [keys cached]: build each route's reused first paint from the plain URL (and its
    # ?theme=dark), as a GET would, before any visitor's request can
    from bokeh.util.token import generate_jwt_token, generate_session_id
    from tornado.httputil import HTTPHeaders, HTTPServerRequest, RequestStartLine

    app = tornado_app(server)
    cached = []
    for path in paths:
        context = application_context(server, path)
        for theme in themes:
            uri = path if theme == "default" else f"{path}?theme={theme}"
            request = HTTPServerRequest(
                start_line=RequestStartLine("GET", uri, "HTTP/1.1"),
                headers=HTTPHeaders({"Host": f"127.0.0.1:{server.port}"}))
            key = key_func(request)
            if context is None or is_reused(key):
                continue
            session_id = generate_session_id(secret_key=app.secret_key, signed=app.sign_sessions)
            token = generate_jwt_token(
                session_id, secret_key=app.secret_key, signed=app.sign_sessions,
                expiration=app.session_token_expiration,
                extra_payload={"headers": {}, "cookies": {},
                               "arguments": dict(request.arguments.items())})
            session = await context.create_session_if_needed(session_id, request, token)
            cache_reused_session(path, key_func, key, session)
            cached.append(key)
    return cached


# ---------------------------------------------------------------- the admin page

def admin_context(app, unused_ms, path):  # -> Panel's admin ApplicationContext, mounted at path
    # what `panel serve --admin` sets up (panel.command.serve), for routes of our own
    from panel.command.serve import AdminApplicationContext
    from panel.config import config
    from panel.io.state import state

    config._admin = True
    state._admin_context = context = AdminApplicationContext(app, unused_timeout=unused_ms,
                                                             url=path)
    return context


def app_routes():  # -> [(route suffix, handler class, ...)]: the routes Panel serves an app on
    from panel.io.server import per_app_patterns
    return list(per_app_patterns)


# ---------------------------------------------------------------- one argument for a CustomJS

GATHER_PLAN = "_attention_explorable_gather"  # a callback's args hold it until the hook runs
_planned = weakref.WeakSet()  # the widgets whose callbacks wait to be gathered


def jscallback_with_one_argument(widgets, prop, code, name, **parts):
    # each widget's `prop` change runs `code` with one argument, `name`: {part: its model, or
    # [their models] for a list}, the models of the root the page renders (only those: Panel's
    # own `source` and `target` are not passed). Panel resolves only top-level args, so each
    # model goes as its own ("part.i") and the hook gathers them.
    if not widgets:
        return
    args, plan = {}, {}
    for part, value in parts.items():
        if isinstance(value, list | tuple):
            plan[part] = [f"{part}.{i}" for i in range(len(value))]
            args.update(zip(plan[part], value))
        else:
            plan[part] = part
            args[part] = value
    args[GATHER_PLAN] = {"name": name, "plan": plan}
    for widget in dict.fromkeys(widgets):
        widget.jscallback(**{prop: code}, args=args)
        _planned.add(widget)
    _install_gather()


def _install_gather():  # once, after Panel's links hook (which the jscallback above installed)
    from panel.links import Callback
    from panel.viewable import Viewable
    hooks = Viewable._preprocessing_hooks
    if _gather in hooks:
        return
    if Callback._process_callbacks not in hooks:
        raise InternalsChanged("panel.links.Callback no longer registers its hook at init")
    hooks.append(_gather)


def _gather(viewable, root):  # Panel's hook, on every root it renders or changes: cheap, as
    # it looks only at the planned widgets' models in this root, not at the whole tree
    from bokeh.models import CustomJS
    ref = root.ref["id"]
    for widget in list(_planned):
        model = widget._models.get(ref, (None,))[0]
        for callbacks in (model.js_property_callbacks.values() if model is not None else ()):
            for callback in callbacks:
                if isinstance(callback, CustomJS) and GATHER_PLAN in callback.args:
                    gather(callback)


def gather(callback):  # a CustomJS's planned args -> one object; a model this root lacks: null
    args, plan = callback.args, callback.args[GATHER_PLAN]
    callback.args = {plan["name"]: {
        part: [args.get(k) for k in keys] if isinstance(keys, list) else args.get(keys)
        for part, keys in plan["plan"].items()}}


def gather_hook_installed():  # -> whether the hook is in Panel's list, after the links hook
    from panel.links import Callback
    from panel.viewable import Viewable
    hooks = Viewable._preprocessing_hooks
    return (_gather in hooks and Callback._process_callbacks in hooks
            and hooks.index(Callback._process_callbacks) < hooks.index(_gather))


# ---------------------------------------------------------------- the text Panel and Bokeh write

def document_parts(doc):  # a Document of Panel roots -> (docs_json, render_items, scripts):
    # docs_json the JSON text of {docid: document}, render_items [{docid, roots: {root id:
    # element id}, root_ids}], scripts [CDN URL]: what Panel's own save puts in a page, asked
    # of the functions it calls instead of read back out of the page it writes
    # (panel.io.save.file_html does exactly these steps)
    import bokeh.resources
    from bokeh.core.json_encoder import serialize_json
    from bokeh.embed.util import OutputDocumentFor, standalone_docs_json_and_render_items
    from panel.io.resources import Resources, bundle_resources, set_resource_mode

    resources = Resources.from_bokeh(bokeh.resources.CDN, absolute=True)
    with set_resource_mode(resources.mode), OutputDocumentFor(doc.roots):
        docs_json, items = standalone_docs_json_and_render_items(doc.roots,
                                                                 suppress_callback_warning=True)
        scripts = [str(url) for url in bundle_resources(doc.roots, resources).js_files]
    return serialize_json(docs_json), [item.to_json() for item in items], scripts


# Bokeh's CDN: https://cdn.bokeh.org/bokeh/release/bokeh-widgets-3.9.2.min.js
BOKEH_CDN = "https://cdn.bokeh.org/bokeh/release/"


def bokeh_cdn_file(bokeh_version):  # -> pattern: (bundle, ".min" or None) of a CDN file name
    return re.compile(rf"^(bokeh(?:-[a-z]+)?)-{re.escape(bokeh_version)}(\.min)?\.js$")


# Panel's autoload.js: the server's URL arrives as this argument, and es-module-shims is named
# by a path relative to the page ("../static/...", "../../static/..." under /live/<route>)
AUTOLOAD_URL_ARG = "bokeh-absolute-url"
AUTOLOAD_RELATIVE_STATIC = re.compile(rb"""(["'])(?:\.\./)+static/""")


def absolute_static_urls(js, server_url):  # bytes, "http://host" -> bytes
    # In a script embed the page is the course's, so the relative path would point at the
    # course site; every other resource in the script is already absolute. Make this one
    # absolute too, on the server the script came from.
    prefix = server_url.encode()
    return AUTOLOAD_RELATIVE_STATIC.sub(lambda m: m.group(1) + prefix + b"/static/", js)


# Panel's js_resources.html: a bundle's tag, and an inline snippet's (Bokeh.set_log_level)
SCRIPT_SRC = re.compile(r'<script type="text/javascript" src="([^"]+)"></script>')
SCRIPT_INLINE = re.compile(r'<script type="text/javascript">(.*?)</script>', re.DOTALL)
WEBGL_BUNDLE = re.compile(r"(^|/)bokeh-gl(\.min)?\.js(\?|$)")


def deferred_scripts(bokeh_js, webgl=False):  # Panel's `bokeh_js` HTML -> the same, deferred
    # Each bundle's tag gets `defer`: it loads beside the page's text and runs after the page
    # is parsed, in order, before DOMContentLoaded, which Bokeh's own plot script waits for.
    # An inline snippet (it calls Bokeh) becomes a module script: deferred as they are, it
    # runs after the bundles before it, in the page's order. (A live chapter holds the tags
    # in a <template> that static/live_page.js runs in order, the snippets as classic
    # scripts once the bundles before them have loaded.) bokeh-gl goes
    # unless webgl: no figure of this project draws with WebGL (app/hosting/build.py checks
    # the same on static pages).
    def bundle(match):
        if not webgl and WEBGL_BUNDLE.search(match.group(1)):
            return ""
        return f'<script defer src="{match.group(1)}"></script>'

    def inline(match):
        return f'<script type="module">{match.group(1)}</script>'

    return SCRIPT_INLINE.sub(inline, SCRIPT_SRC.sub(bundle, str(bokeh_js or "")))


def uses_webgl(doc):  # -> whether a model of the session's document draws with WebGL
    return any(getattr(m, "output_backend", None) == "webgl" for m in doc.models)
