"""Command-line options of `attention-explorable serve` (no panel import: --help stays fast).

The defaults are a public teaching site's: sessions a browser never connects to, or left
behind by a closed tab, are dropped after 15 s; a dropped connection reconnects on its own;
the admin page is off unless asked for with a password. Each option can also come from an
environment variable (a flag given on the command line wins), so a service file or a
container can configure a deployment without a long command line.
"""

import argparse
import os


def env_list(name, environ=None):  # "a, b c" in $name -> ["a", "b", "c"]
    raw = (environ or os.environ).get(name, "")
    return [item for item in raw.replace(",", " ").split() if item]


def env_flag(name, default, environ=None):  # "1"/"true"/"on"/"yes" or "0"/"false"/... -> bool
    raw = (environ or os.environ).get(name, "").strip().lower()
    if raw in ("1", "true", "on", "yes"):
        return True
    if raw in ("0", "false", "off", "no"):
        return False
    return default


def env_number(name, default, kind=int, environ=None):
    raw = (environ or os.environ).get(name, "").strip()
    if not raw:
        return default
    try:
        return kind(raw)
    except ValueError:
        raise SystemExit(f"attention-explorable serve: ${name}={raw!r} is not a number")


def seconds(text):  # "15" / "2.5" -> float seconds, > 0
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected seconds, got {text!r}")
    if not 0 < value <= 86_400:
        raise argparse.ArgumentTypeError(f"expected 0 < seconds <= 86400, got {value:g}")
    return value


def procs(text):  # "4" -> 4; 0 means one per CPU core
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}")
    if not 0 <= value <= 256:
        raise argparse.ArgumentTypeError(f"expected 0..256, got {value}")
    return value


class _Help(argparse.ArgumentDefaultsHelpFormatter):  # "(default: X)", except when X is None
    def _get_help_string(self, action):
        return action.help if action.default is None else super()._get_help_string(action)


def seconds_option(p, flag, env, default, help_text):  # a duration that $env gives unless the
    # flag does; the help names the variable
    p.add_argument(flag, type=seconds, metavar="SECONDS", default=env_number(env, default, float),
                   help=f"{help_text} (${env})")


def flag_option(p, flag, env, default, help_text):  # --flag / --no-flag, likewise from $env
    p.add_argument(flag, action=argparse.BooleanOptionalAction, default=env_flag(env, default),
                   help=f"{help_text} (${env})")


def add_serve_arguments(p):
    p.formatter_class = _Help
    p.description = (
        "Serve the explorable: the article at /, each panel alone at its own route for "
        "iframes and script embeds, /health for a load balancer. Every option also reads the "
        "environment variable named in its help.")
    p.add_argument("--port", type=int, default=env_number("PORT", 5006),
                   help="port to listen on ($PORT)")
    p.add_argument("--address", default=os.environ.get("ADDRESS", "127.0.0.1"),
                   help="address to bind; 0.0.0.0 for every interface ($ADDRESS)")
    p.add_argument("--allow-websocket-origin", action="append", metavar="HOST[:PORT]",
                   help="the public host name(s) browsers reach this site by, e.g. "
                        "explorable.example.edu or 127.0.0.1:8080 (repeatable; when no flag "
                        "is given, $AE_WEBSOCKET_ORIGINS, comma-separated). Default: localhost "
                        "and 127.0.0.1 at --port. A page from any other origin cannot open a "
                        "session")
    p.add_argument("--embed-origin", action="append", metavar="ORIGIN",
                   help="a course site allowed to embed the single-panel routes, as "
                        "scheme://host[:port] (repeatable; when no flag is given, "
                        "$AE_EMBED_ORIGINS). It joins those routes' CSP frame-ancestors and "
                        "the websocket allow-list. Default: none, so only this site may "
                        "frame them")
    p.add_argument("--num-procs", type=procs, default=env_number("AE_NUM_PROCS", 1),
                   metavar="N",
                   help="server processes sharing the port (forked before any session; "
                        "0 = one per CPU core; $AE_NUM_PROCS)")
    seconds_option(p, "--unused-session-lifetime", "AE_UNUSED_SESSION_LIFETIME_S", 15.0,
                   "drop a session this long after its last browser connection closed, or "
                   "after its page was sent when no browser ever connected")
    seconds_option(p, "--check-unused-sessions", "AE_CHECK_UNUSED_SESSIONS_S", 5.0,
                   "how often to look for unused sessions")
    seconds_option(p, "--keep-alive", "AE_KEEP_ALIVE_S", 30.0,
                   "websocket ping interval, under a proxy's idle timeout (nginx: 60 s)")
    flag_option(p, "--reconnect", "AE_RECONNECT", True,
                "after a dropped connection the page reconnects on its own and gets a fresh "
                "session from its URL")
    seconds_option(p, "--reconnect-within", "AE_RECONNECT_WITHIN_S", 8 * 3600.0,
                   "how long after a page was served it may still (re)connect: the life of "
                   "its session token")
    flag_option(p, "--reuse-sessions", "AE_REUSE_SESSIONS", True,
                "answer a page's GET from one cached session per route and theme, built from "
                "the plain URL at start-up (the first paint, about 10x faster to send); the "
                "visitor's own session, deep link included, is built when the page connects")
    flag_option(p, "--behind-proxy", "AE_BEHIND_PROXY", False,
                "trust X-Forwarded-For / X-Real-Ip / X-Forwarded-Proto from a reverse proxy "
                "such as nginx")
    flag_option(p, "--admin", "AE_ADMIN", False,
                "serve Panel's admin dashboard at /admin behind HTTP Basic auth; needs a "
                "password in $AE_ADMIN_PASSWORD or --admin-password-file")
    p.add_argument("--admin-password-file", metavar="FILE",
                   default=os.environ.get("AE_ADMIN_PASSWORD_FILE"),
                   help="file whose first line is the admin password (a password on the "
                        "command line would show in `ps`; $AE_ADMIN_PASSWORD_FILE)")
    p.add_argument("--show", action="store_true", help="open a browser tab")
    return p


def admin_password(args, environ=None):  # -> the password, or SystemExit saying what is missing
    environ = os.environ if environ is None else environ
    if args.admin_password_file:
        try:
            with open(args.admin_password_file, encoding="utf-8") as f:
                password = f.readline().strip()
        except OSError as e:
            raise SystemExit(f"attention-explorable serve: cannot read the admin password "
                             f"file: {e.strerror}")
    else:
        password = environ.get("AE_ADMIN_PASSWORD", "").strip()
    if len(password) < 8:
        raise SystemExit("attention-explorable serve: --admin needs a password of at least 8 "
                         "characters in $AE_ADMIN_PASSWORD or --admin-password-file")
    return password
