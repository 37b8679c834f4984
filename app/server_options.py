"""Command-line options of `attention-explorable serve` (no panel import: --help stays fast)."""

import os


def add_serve_arguments(p):
    p.add_argument("--port", type=int, default=int(os.environ.get("PORT", "5006")),
                   help="port to listen on (default 5006, or $PORT)")
    p.add_argument("--address", default=os.environ.get("ADDRESS", "127.0.0.1"),
                   help="address to bind (default 127.0.0.1)")
    p.add_argument("--allow-websocket-origin", action="append", default=None, metavar="HOST[:PORT]",
                   help="websocket origins to accept (repeatable); default: the bound address")
    p.add_argument("--show", action="store_true", help="open a browser tab")
    return p
