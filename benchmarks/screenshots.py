"""Screenshot pages of the built book at a 1280-px window and report any table, figure or output wider than the
page's content column.

    python benchmarks/screenshots.py [--html _build/html] [--out screenshots] [--width 1280] PAGE...

PAGE is a path under the build (``book/course.html``, ``book/chapters/04_annotators.html``). Needs Chromium
(Debian: ``apt-get install chromium``); runs offline on the built files. For each page it writes
``OUT/<page>.png`` (the whole page, up to ``--max-height`` pixels) and prints one line per element wider than the
content column, or ``ok``, and each figure shown at less than ``SHRINK`` (60 %) of the width it was drawn at (its text
shrinks with it). Exit code 1 when any element is too wide.

How it measures: a copy of the page with a small script added is loaded headless with ``--dump-dom``; the script
compares each element's right edge with the content column's and writes what sticks out into the DOM, which
``--dump-dom`` prints. An element inside a scrolling box counts too: a reader must scroll sideways to see it.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

# the content column of the sphinx-book-theme; the first that exists is the reference width
COLUMN = ["article.bd-article", "main .bd-article", "#main-content", "main", "body"]
# what a reader sees as one thing: tables, figures, images, cell outputs, formulas
# (code cells are left out: their lines are as long as the code's style allows, and scroll by design)
CHECKED = "table, img, figure, .cell_output > *, .cell_output pre, mjx-container[display='true']"
#: a figure shown at less than this share of the width it was drawn at is listed: its text shrinks with it
#: (farmlib.plotting.FONT_SCALE draws the book's text large enough for figures shown down to about 0.6)
SHRINK = 0.6

MEASURE = """
<script>
window.addEventListener("load", () => setTimeout(() => {
  const col = %(column)s.map(s => document.querySelector(s)).find(e => e);
  const right = col.getBoundingClientRect().right, left = col.getBoundingClientRect().left;
  const wide = [];
  for (const el of col.querySelectorAll(%(checked)s)) {
    const w = Math.max(el.scrollWidth, el.getBoundingClientRect().width);
    if (el.getBoundingClientRect().width === 0) continue;
    if (el.getBoundingClientRect().left + w > right + 1) {
      const text = (el.innerText || el.getAttribute("alt") || "").trim().slice(0, 60).replace(/\\s+/g, " ");
      wide.push({tag: el.tagName.toLowerCase(), cls: el.className && el.className.baseVal === undefined ?
                 String(el.className).slice(0, 40) : "", width: Math.round(w),
                 over: Math.round(el.getBoundingClientRect().left + w - right), text});
    }
  }
  const shrunk = [];  // figures drawn wider than the column: the browser shrinks their text with them
  for (const img of col.querySelectorAll("img")) {
    const shown = img.getBoundingClientRect().width;
    if (img.naturalWidth && shown / img.naturalWidth < %(shrink)s)
      shrunk.push({src: img.getAttribute("src").split("/").pop().slice(0, 12), scale: shown / img.naturalWidth});
  }
  const out = document.createElement("pre");
  out.id = "farm-width-report";
  out.textContent = JSON.stringify({column: Math.round(right - left), height: document.documentElement.scrollHeight,
                                    wide, shrunk});
  document.body.appendChild(out);
}, 1500));
</script>
"""


def chromium() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        if path := shutil.which(name):
            return path
    sys.exit("no Chromium found: apt-get install chromium")


def run(args: list[str], timeout: int = 120) -> str:
    base = [chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
            "--allow-file-access-from-files", "--virtual-time-budget=8000"]
    with tempfile.TemporaryDirectory() as profile:  # a fresh profile: no state from another run
        return subprocess.run([*base, f"--user-data-dir={profile}", *args], capture_output=True, text=True,
                              timeout=timeout).stdout


def measure(page: Path, width: int) -> dict:
    """The content column's width, the page's height and the elements wider than the column."""
    probe = page.with_name(f".probe-{page.name}")  # beside the page, so its relative links still resolve
    script = MEASURE % {"column": json.dumps(COLUMN), "checked": json.dumps(CHECKED), "shrink": SHRINK}
    probe.write_text(page.read_text().replace("</body>", script + "</body>"))
    try:
        dom = run([f"--window-size={width},900", "--dump-dom", probe.resolve().as_uri()])
    finally:
        probe.unlink()
    m = re.search(r'<pre id="farm-width-report">(.*?)</pre>', dom, re.S)
    if not m:
        raise RuntimeError(f"{page}: the measuring script left no report")
    import html

    return json.loads(html.unescape(m.group(1)))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("pages", nargs="+")
    ap.add_argument("--html", default="_build/html")
    ap.add_argument("--out", default="screenshots")
    ap.add_argument("--width", type=int, default=1280)
    ap.add_argument("--max-height", type=int, default=16000)
    a = ap.parse_args()
    out, bad = Path(a.out), 0
    out.mkdir(parents=True, exist_ok=True)
    for name in a.pages:
        page = Path(a.html) / name
        report = measure(page, a.width)
        height = min(report["height"], a.max_height)
        png = out / (name.replace("/", "_").removesuffix(".html") + ".png")
        run([f"--window-size={a.width},{height}", f"--screenshot={png.resolve()}", page.resolve().as_uri()])
        print(f"{name}: column {report['column']} px, page {report['height']} px -> {png}")
        for w in report["wide"]:
            bad += 1
            print(f"  too wide: <{w['tag']} class='{w['cls']}'> {w['width']} px, {w['over']} px past the column: "
                  f"{w['text']!r}")
        if not report["wide"]:
            print("  ok: nothing wider than the column")
        for f in report["shrunk"]:  # a note, not a failure: the figure fits, its text is smaller than drawn
            print(f"  shrunk: figure {f['src']} shown at {100 * f['scale']:.0f} % of its drawn width")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
