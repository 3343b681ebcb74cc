"""The HTML report in a real browser: at 390 px (a phone) and 1280 px the page never scrolls sideways,
and at 390 px its wide tables scroll inside their own box instead.

Headless Chromium (Debian's `chromium`) loads the page in an iframe of the width under test (headless
windows are at least 500 px wide), a copy of the page with one added script that reports, to the host
page, the document's scroll width, the viewport's width and how many table boxes scroll. Skipped,
with the line that installs it, where Chromium is not installed.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from runner.cli import main
from tests.support import cli_sweep

CHROMIUM = shutil.which("chromium")
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="no chromium: apt-get install -y chromium")

PROBE = ('<script>parent.postMessage([document.documentElement.scrollWidth, innerWidth, '
         '[...document.querySelectorAll(".wide")].filter(b => b.scrollWidth > b.clientWidth).length].join(" "), '
         '"*")</script></body>')
HOST = ('<!DOCTYPE html><html><body style="margin:0"><iframe src="probe.html" style="width:{width}px;'
        'height:900px;border:0"></iframe><script>addEventListener("message", '
        'e => document.body.setAttribute("data-measured", e.data))</script></body></html>')


@pytest.fixture(scope="module")
def report_page(built_suite: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("html")
    journal, run_id = cli_sweep(built_suite, folder, ("retail_l1", "pitch_l1"), ("blind", "tabular"))
    assert main(["report", run_id, "--html", str(folder / "report.html"), "--journal", str(journal)]) == 0
    return folder / "report.html"


def measure(page: Path, width: int, folder: Path) -> tuple[int, int, int]:
    """(document scroll width, viewport width, table boxes that scroll) of `page` shown `width` px wide."""
    # The page's own CSP forbids scripts (rightly); the probe's copy drops it to run one.
    text = re.sub(r'<meta http-equiv="Content-Security-Policy"[^>]*>', "", page.read_text())
    (folder / "probe.html").write_text(text.replace("</body>", PROBE))
    (folder / "host.html").write_text(HOST.format(width=width))
    assert CHROMIUM is not None
    done = subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", f"--user-data-dir={folder / 'p'}",
                           "--virtual-time-budget=20000", "--window-size=1400,1000", "--dump-dom",
                           (folder / "host.html").as_uri()], capture_output=True, text=True, timeout=180)
    found = re.search(r'data-measured="(\d+) (\d+) (\d+)"', done.stdout)
    assert found, (done.returncode, done.stdout[-500:], done.stderr[-2000:])
    scroll, viewport, boxes = (int(n) for n in found.groups())
    return scroll, viewport, boxes


@pytest.mark.parametrize("width", [390, 1280])
def test_the_page_never_scrolls_sideways(report_page: Path, tmp_path: Path, width: int) -> None:
    scroll, viewport, boxes = measure(report_page, width, tmp_path)
    assert width - 20 <= viewport <= width  # the iframe's width, less a scrollbar
    assert scroll <= viewport, f"the page is {scroll} px wide in a {viewport} px viewport"
    if width == 390:  # the wide tables are there, and scroll in their own boxes
        assert boxes > 0
