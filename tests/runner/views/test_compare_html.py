"""`compare --html` of a real offline sweep (oracle against blind over one scenario of each domain): the
page holds the same figures as `compare --json`, is built from the report page's blocks, and headless
Chromium loads and draws it."""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest

from bench.headless import Chromium, chromium_path
from runner.cli import main
from tests.runner.views.test_html_report import _Figures
from tests.support import cli_sweep

SCENARIOS = ("retail_l1", "banking_l2", "pitch_l1")


@pytest.fixture(scope="module")
def swept(built_suite: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    # 8 tasks a window: enough task families for every figure to have an interval (runner.stats.exact).
    return cli_sweep(built_suite, tmp_path_factory.mktemp("sweep"), SCENARIOS, ("blind", "oracle"), "--pilot", "8")


def _compare(swept: tuple[Path, str], *flags: str) -> list[str]:
    journal, run_id = swept
    return ["compare", f"{run_id}:scripted/oracle", f"{run_id}:scripted/blind", "--journal", str(journal), *flags]


class _Rows(HTMLParser):
    """The text of every table row, cell by cell."""

    def __init__(self) -> None:
        super().__init__()
        self.rows: list[list[str]] = []
        self._cell: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "tr":
            self.rows.append([])
        elif tag == "td":
            self._cell = []

    def handle_endtag(self, tag: str) -> None:
        if tag == "td" and self._cell is not None:
            self.rows[-1].append(" ".join("".join(self._cell).split()))
            self._cell = None

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)


def _page(swept: tuple[Path, str], tmp_path: Path) -> Path:
    out = tmp_path / "out" / "compare.html"
    assert main(_compare(swept, "--html", str(out))) == 0
    return out


def test_the_page_shows_every_paired_difference_with_its_interval(
    swept: tuple[Path, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(_compare(swept, "--json")) == 0
    expected = json.loads(capsys.readouterr().out)
    page = _page(swept, tmp_path).read_text()
    rows = _Rows()
    rows.feed(page)
    shown = {row[0]: row[1:] for row in rows.rows if row}
    figures = {"Avg H": expected["avg_h"], "Avg F": expected["avg_f"]}
    for name, setting in expected["settings"].items():
        figures[f"{name} H"] = setting
        if "f" in setting:
            figures[f"{name} F"] = setting["f"]
    assert {f"{name} H" for name in SCENARIOS} <= figures.keys()
    for label, figure in figures.items():
        low, high = figure["ci"]
        assert shown[label][:4] == [f"{figure['diff']:+.1f} [{low:.1f}, {high:.1f}]", str(figure["wins"]),
                                    str(figure["ties"]), str(figure["losses"])], label
    assert shown["turns"][0] == f"{expected['per_task']['turns']['a']:.1f}"
    charts = _Figures()
    charts.feed(page)
    assert [chart["data-chart"] for chart in charts.charts] == ["differences"]
    assert charts.external == []  # nothing is fetched at view time
    assert expected["a"] in page and expected["b"] in page and "dataset fingerprint" in page


def test_the_page_is_built_from_the_report_pages_blocks(swept: tuple[Path, str], tmp_path: Path) -> None:
    compare_page = _page(swept, tmp_path).read_text()
    report_page = tmp_path / "report.html"
    assert main(["report", swept[1], "--journal", str(swept[0]), "--html", str(report_page)]) == 0

    def head(text: str) -> str:
        return re.sub(r"<title>.*</title>", "", text.split("<body>")[0])

    assert head(compare_page) == head(report_page.read_text())  # same policy, same style


def test_streams_that_cannot_be_compared_write_no_page(swept: tuple[Path, str], tmp_path: Path,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    journal, run_id = swept
    out = tmp_path / "compare.html"
    assert main(["compare", f"{run_id}:scripted/oracle", "r-nope", "--journal", str(journal), "--html",
                 str(out)]) == 2
    assert "no run 'r-nope'" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []
    assert main(["compare", run_id, run_id, "--json", "--html", str(out), "--journal", str(journal)]) == 2
    assert "not allowed with argument" in capsys.readouterr().err


@pytest.mark.skipif(chromium_path() is None, reason="no Chromium on this machine (apt-get install chromium; "
                                                      ".ci/run installs it)")
def test_chromium_loads_the_page_without_errors_and_draws_every_difference(swept: tuple[Path, str],
                                                                          tmp_path: Path) -> None:
    probe = """JSON.stringify([...document.querySelectorAll('figure.chart')].map(figure => {
        const svg = figure.querySelector('svg'); const box = svg.getBoundingClientRect();
        const drawn = [...svg.querySelectorAll('g[id^=line2d] path, g[id^=line2d] use')]
            .filter(mark => { const b = mark.getBoundingClientRect(); return b.width > 0 || b.height > 0; });
        return {kind: figure.dataset.chart, width: box.width, height: box.height, marks: drawn.length,
                text: [...svg.querySelectorAll('text')].map(t => t.textContent)};
    }))"""
    with Chromium() as browser:
        page = browser.open(_page(swept, tmp_path), probe=probe)
    assert page.errors == []
    (chart,) = json.loads(page.probe)
    assert chart["kind"] == "differences"
    assert chart["width"] > 300 and chart["height"] > 150, chart
    labels = ["Avg H", "Avg F", *(f"{name} H" for name in SCENARIOS)]
    assert all(label in chart["text"] for label in labels), chart["text"]
    assert chart["marks"] >= len(labels)  # a point (and a bar where the interval has width) per figure
