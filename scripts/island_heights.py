"""Print each island's mounted height in its chapter, at 1280 x 900 and on a Pixel 5, beside
what its record in app/kit/registry.py holds (`island_height`, `phone_height`), and the same
on the panel's page of its own (`page_height`, `page_phone_height`: there it has its title
and what its own() holds).

A panel that grows or shrinks needs its record updated, or the page moves under the reader
when the island mounts (tests/browser/test_island_heights.py holds each within 40 px or 8%).
Run it after changing a panel, and copy the figures it prints into the record:

    .venv/bin/python scripts/island_heights.py [--site DIR]

It builds the static site into a temporary folder (or reads DIR) and drives Debian's
Chromium (/usr/bin/chromium) with Playwright.
"""

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

from playwright.sync_api import sync_playwright

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from app.kit import registry

MOUNTED_JS = """() => [...document.querySelectorAll('.ae-island')].map((el) =>
  [el.dataset.slot, el.classList.contains('ae-mounted'), el.getBoundingClientRect().height])"""


def measure(page, url):  # -> {slot: mounted height in px}, once two reads 300 ms apart agree
    page.goto(url)
    page.wait_for_function("() => window.AE && AE.islands")
    page.evaluate("AE.islands.mountAll()")
    page.wait_for_function(f"() => ({MOUNTED_JS})().every(([, mounted]) => mounted)",
                           timeout=120_000)
    last = None
    while True:
        page.wait_for_timeout(300)
        now = page.evaluate(MOUNTED_JS)
        if now == last:
            return {slot: round(height) for slot, _, height in now}
        last = now


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--site", type=Path, help="a built static site (default: build one)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        site = args.site
        if site is None:
            site = Path(tmp) / "site"
            print(f"building the static site into {site} ...", file=sys.stderr)
            subprocess.run([sys.executable, "-m", "app.hosting.cli", "build", str(site)],
                           check=True, cwd=ROOT, stdout=subprocess.DEVNULL)
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path="/usr/bin/chromium",
                                        args=["--no-sandbox", "--disable-gpu"])
            devices = {"island_height": {"viewport": {"width": 1280, "height": 900}},
                       "phone_height": p.devices["Pixel 5"]}
            found = {}
            for field, options in devices.items():
                context = browser.new_context(**options)
                page = context.new_page()
                for chapter in registry.CHAPTERS:
                    folder = chapter.route.strip("/")
                    url = (site / folder / "index.html").as_uri()
                    for slot, px in measure(page, url).items():
                        found.setdefault(slot, {})[field] = px
                for record in registry.PANELS:  # each panel's page of its own
                    url = (site / record.route.strip("/") / "index.html").as_uri()
                    for slot, px in measure(page, url).items():
                        found.setdefault(slot, {})[f"page {field}"] = px
                context.close()
            browser.close()
    heads = ("1280 px", "Pixel 5", "own page, 1280 px", "own page, Pixel 5")
    print(f"{'slot':10} " + " ".join(f"{head:>21}" for head in heads))
    for slot, px in found.items():
        cells = [f"{px[f]:>6} (record {getattr(registry, f)(slot):>5})"
                 for f in ("island_height", "phone_height")]
        cells += [f"{px['page ' + f]:>6} (record {getattr(registry, f)(slot, own_page=True):>5})"
                  for f in ("island_height", "phone_height")]
        print(f"{slot:10} {' '.join(cells)}")


if __name__ == "__main__":
    main()
