"""The HTML report in a real browser: at 390 px (a phone) and 1280 px the page never scrolls sideways,
and at 390 px its wide tables scroll inside their own box instead.

Headless Chromium (Debian's `chromium`, driven by `bench.headless` over the DevTools protocol, its
viewport set to the width under test) loads the page as a reader opens it and reports the document's
scroll width, the viewport's width and how many table boxes scroll. Skipped, with the line that
installs it, where Chromium is not installed. Besides the page's scroll width, no element outside a
table's box may reach past the viewport's right edge (what `overflow: hidden` somewhere would hide).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench.headless import Chromium, chromium_path
from runner.cli import main
from tests.support import cli_sweep

pytestmark = pytest.mark.skipif(chromium_path() is None, reason="no chromium: apt-get install -y chromium")

PROBE = """JSON.stringify([document.documentElement.scrollWidth, innerWidth,
    [...document.querySelectorAll('.wide')].filter(box => box.scrollWidth > box.clientWidth).length,
    [...document.querySelectorAll('body *')].filter(e => !e.parentElement.closest('.wide')
        && e.getBoundingClientRect().right > innerWidth + 0.5)
        .map(e => e.tagName + '.' + e.className).slice(0, 5)])"""


@pytest.fixture(scope="module")
def report_page(built_suite: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("html")
    journal, run_id = cli_sweep(built_suite, folder, ("retail_l1", "pitch_l1"), ("blind", "tabular"))
    assert main(["report", run_id, "--html", str(folder / "report.html"), "--journal", str(journal)]) == 0
    return folder / "report.html"


@pytest.mark.parametrize("width", [390, 1280])
def test_the_page_never_scrolls_sideways(report_page: Path, width: int) -> None:
    with Chromium(width=width) as browser:
        page = browser.open(report_page, probe=PROBE)
    assert page.errors == []
    scroll, viewport, boxes, outside = json.loads(page.probe)
    assert viewport == width
    assert scroll <= viewport and outside == [], f"the page is {scroll} px wide in {viewport} px: {outside}"
    if width == 390:  # the wide tables are there, and scroll in their own boxes
        assert boxes > 0
