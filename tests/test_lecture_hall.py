"""benchmarks/lecture_hall.py at CI size: 30 fresh readers over 3 s on "/" and on "/heatmap",
against a server the script starts. Every reader gets the page and every asset it names, and
none needs a websocket (the static pages cost no session). README has the full-size run."""

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# Not serial: it asserts what each reader got (pages, assets, no websocket, bytes), no time,
# so it runs beside the other tests; the README's figures come from the benchmark run alone.


def test_thirty_readers_no_errors_no_websocket():
    out = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "lecture_hall.py"), "--json",
                          "--route", "/", "--route", "/heatmap", "--readers", "30",
                          "--seconds", "3", "--time-limit", "240"],
                         capture_output=True, text=True, timeout=400, cwd=ROOT, check=False)
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-3000:]
    reports = {r["route"]: r for r in json.loads(out.stdout)}
    assert set(reports) == {"/", "/heatmap"}
    for route, r in reports.items():
        assert r["errors"] == 0, (route, r["error_samples"])
        assert r["websocket_readers"] == 0, route
        # a chapter's reader fetches its text and two small scripts before scrolling; a
        # panel's own page mounts its island at once: Bokeh, Panel, its table, its document
        fewest = 3 if route == "/" else 8
        assert r["readers"] == 30 and r["requests_per_reader"] >= fewest, r
        assert r["bytes_per_reader"] < 2_000_000, r  # compressed: about 0.9 MB here
        assert r["server_cpu_ms_per_reader"] is not None, r


def test_refuses_a_url_off_loopback():
    out = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "lecture_hall.py"),
                          "--url", "http://example.com", "--readers", "1", "--seconds", "1"],
                         capture_output=True, text=True, timeout=60, cwd=ROOT, check=False)
    assert out.returncode != 0 and "loopback" in out.stderr
