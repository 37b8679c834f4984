"""What each way of compressing the live server's bundles costs: bytes and server CPU.

    python benchmarks/live_compression.py [--repeat 5]

For each bundle a live page loads (Bokeh's, Panel's): its size on disk; Tornado's
`compress_response` (gzip level 6, done again for every response: bytes and CPU per reader);
and app/hosting/compressed_assets.py (gzip 9 and brotli 11, done once per process: bytes, and
CPU once). CPU is this process's time, the median of --repeat runs.
"""

import argparse
import functools
import gzip
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from app.hosting import compressed_assets

BUNDLES = [("js/bokeh.min.js", compressed_assets.bokehjs_dir()),
           ("js/bokeh-widgets.min.js", compressed_assets.bokehjs_dir()),
           ("js/bokeh-tables.min.js", compressed_assets.bokehjs_dir()),
           ("panel.min.js", compressed_assets.panel_dist_dir())]


def cpu_ms(fn, repeat):  # -> (result, median CPU ms)
    times = []
    for _ in range(repeat):
        t0 = time.process_time()
        out = fn()
        times.append((time.process_time() - t0) * 1000)
    return out, statistics.median(times)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--repeat", type=int, default=5)
    args = p.parse_args(argv)
    import brotli

    print("| bundle | on disk B | gzip 6 per response: B, CPU ms each | gzip 9 once: B, CPU ms "
          "| brotli 11 once: B, CPU ms |")
    print("|---|---|---|---|---|")
    for name, root in BUNDLES:
        raw = (root / name).read_bytes()
        g6, t6 = cpu_ms(functools.partial(gzip.compress, raw, 6), args.repeat)
        g9, t9 = cpu_ms(functools.partial(gzip.compress, raw, 9), args.repeat)
        br, tb = cpu_ms(functools.partial(brotli.compress, raw, quality=11),
                        max(1, args.repeat // 2))
        print(f"| {Path(name).name} | {len(raw):,} | {len(g6):,}, {t6:.0f} | {len(g9):,}, "
              f"{t9:.0f} | {len(br):,}, {tb:.0f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
