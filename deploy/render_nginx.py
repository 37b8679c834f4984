"""Writes deploy/nginx.conf with its {{...}} fields filled: the site's own (where nginx
listens, the build's folder, the app processes) from the command line, and the single-panel
pages from the registry of panels (app/kit/registry.py), so adding a panel needs no edit here.

    python deploy/render_nginx.py --run-dir /run/explorable-nginx --listen 80 \\
        --server-name explorable.example.edu --site-root /srv/explorable/site \\
        --frame-ancestors "'self' https://course.example.edu" \\
        --backend 127.0.0.1:5101 --backend 127.0.0.1:5102 > /etc/nginx/explorable.conf

Run it with the Python the app is installed in (it reads the registry); tests/test_nginx.py
renders the config it starts with `render` below.
"""

import argparse
import re
import sys
from pathlib import Path

TEMPLATE = Path(__file__).resolve().with_name("nginx.conf")
FIELD = re.compile(r"\{\{(\w+)\}\}")
# a route nginx's pattern can hold as it is: lowercase words and hyphens, as every panel's
ROUTE = re.compile(r"/[a-z0-9][a-z0-9-]*")


def panel_routes():  # -> "heatmap|ladder|...": the single-panel pages, for the template's maps
    try:
        from app.kit import registry
    except ImportError:  # a checkout the app is not installed from: its root holds `app`
        sys.path.append(str(TEMPLATE.parents[1]))
        from app.kit import registry
    routes = list(registry.panel_routes())
    for route in routes:
        if not ROUTE.fullmatch(route):
            raise ValueError(f"the route {route!r} is not one nginx's pattern takes as it is "
                             "(lowercase words and hyphens after one '/')")
    return "|".join(route.lstrip("/") for route in routes)


def render(template, *, run_dir, listen, server_name, site_root, frame_ancestors, backends):
    # -> the config; backends: ["127.0.0.1:5101", ...]; a field left unfilled is a ValueError
    fields = {
        "run_dir": str(run_dir), "listen": str(listen), "server_name": server_name,
        "site_root": str(site_root), "frame_ancestors": frame_ancestors,
        "backends": " ".join(f"server {b} max_fails=1 fail_timeout=10s;" for b in backends),
        "panel_routes": panel_routes(),
    }
    unknown = set(FIELD.findall(template)) - set(fields)
    if unknown:
        raise ValueError(f"the template has fields nothing fills: {sorted(unknown)}")
    return FIELD.sub(lambda m: fields[m.group(1)], template)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--run-dir", required=True, help="nginx's pid, logs and temp folders")
    parser.add_argument("--listen", required=True, help="nginx's listen: 80, 127.0.0.1:8080")
    parser.add_argument("--server-name", required=True)
    parser.add_argument("--site-root", required=True,
                        help="the folder `attention-explorable build` wrote")
    parser.add_argument("--frame-ancestors", default="'self'",
                        help="who may frame the single-panel pages: 'self' and the course sites "
                             "given to each app process as --embed-origin")
    parser.add_argument("--backend", action="append", required=True, metavar="HOST:PORT",
                        help="an `attention-explorable serve` process; once per process")
    parser.add_argument("--template", type=Path, default=TEMPLATE)
    args = parser.parse_args(argv)
    sys.stdout.write(render(args.template.read_text(encoding="utf-8"), run_dir=args.run_dir,
                            listen=args.listen, server_name=args.server_name,
                            site_root=args.site_root, frame_ancestors=args.frame_ancestors,
                            backends=args.backend))
    return 0


if __name__ == "__main__":
    sys.exit(main())
