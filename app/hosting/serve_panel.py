"""The article for Panel's own command line: `attention-explorable serve` without our CLI.

    panel serve app/hosting/serve_panel.py --port 5006 --plugins app.hosting.compressed_assets
    # -> http://localhost:5006/serve_panel   (add --index serve_panel to serve it at "/")

The plugin sends Bokeh's and Panel's bundles compressed (app/hosting/compressed_assets.py);
the page defers them and leaves bokeh-gl out, as the live server's pages do.

It builds the same page as "/" of `attention-explorable serve` (one fresh article per
session, `?theme=dark` and the panels' URL keys included). The single-panel routes
(/heatmap, /ladder, ...) come only with `attention-explorable serve`.
"""

import sys
from pathlib import Path

ROOT = str(Path(__file__).resolve().parents[2])
if ROOT not in sys.path:  # `panel serve` runs this file as a script, not as part of `app`
    sys.path.insert(0, ROOT)

from app.chapters import live_chapter
from app.hosting import routes
from app.kit import panel_internals

panel_internals.install()  # Panel's input hold to 0, one message per interaction, as `serve`
live_chapter.page().servable(title=routes.SITE_TITLE)
