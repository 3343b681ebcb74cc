"""The HTML report of a real offline sweep (blind, oracle, tabular, rag over one scenario of each domain):
its structure as written, and the page as headless Chromium loads and draws it."""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest

from bench.headless import Chromium, chromium_path
from runner.cli import main
from runner.report import build_report
from runner.views.charts import CellKey
from runner.views.html_report import render_html
from tests.support import cli_sweep

SCENARIOS = ("retail_l1", "banking_l2", "pitch_l1")
METHODS = ("blind", "oracle", "tabular", "rag")


@pytest.fixture(scope="module")
def swept(built_suite: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """A finished offline sweep, as a user starts it; returns (journal, run id)."""
    # 8 tasks a window: enough task families for the windows' bands (runner.stats.exact's minimum).
    swept = cli_sweep(built_suite, tmp_path_factory.mktemp("sweep"), SCENARIOS, METHODS, "--pilot", "8")
    assert main(["runs", "--journal", str(swept[0]), "--json"]) == 0
    return swept


class _Figures(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.charts: list[dict[str, str | None]] = []
        self.external: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = dict(attrs)
        if tag == "figure":
            self.charts.append(values)
        for name in ("src", "href", "xlink:href"):
            target = values.get(name) or ""
            if re.match(r"[a-z]+:", target) and not target.startswith("data:"):
                self.external.append(target)


def _html_file(swept: tuple[Path, str], tmp_path: Path) -> Path:
    journal, run_id = swept
    out = tmp_path / "out" / "report.html"
    assert main(["report", run_id, "--journal", str(journal), "--html", str(out)]) == 0
    return out


def test_the_page_has_one_learning_curve_per_scenario_and_the_scatter(swept: tuple[Path, str],
                                                                      tmp_path: Path) -> None:
    page = _html_file(swept, tmp_path).read_text()
    figures = _Figures()
    figures.feed(page)
    kinds = [chart["data-chart"] for chart in figures.charts]
    assert kinds.count("scatter") == 1
    assert [chart["aria-label"] for chart in figures.charts if chart["data-chart"] == "learning-curve"] == \
        list(SCENARIOS)
    assert figures.external == []  # nothing is fetched at view time
    assert "Content-Security-Policy" in page
    for method in METHODS:
        assert f"<td>{method}</td>" in page
    assert swept[1] in page and "dataset fingerprint" in page


async def test_intervals_given_are_drawn_as_bands_and_printed(swept: tuple[Path, str]) -> None:
    journal, run_id = swept
    report = await build_report(journal, run_id)
    tabular = next(stream for stream in report.streams if stream.method == "tabular")
    setting = tabular.settings["retail_l1"]
    bands = {CellKey("scripted", "tabular", "retail_l1", "hidden", w.window): (1.0, 99.0)
             for w in setting.windows}
    assert tabular.avg_h is not None  # the planted band holds the point, as every real interval does
    low, high = round(tabular.avg_h) - 7.5, round(tabular.avg_h) + 13.5
    bands[CellKey("scripted", "tabular", None, "hidden")] = (low, high)
    with_bands, without = render_html(report, bands), render_html(report, {})
    assert f"[{low:.1f}, {high:.1f}]" in with_bands and f"[{low:.1f}, {high:.1f}]" not in without
    # A band is one filled polygon collection in the tabular curve.
    bands_drawn = re.compile(r'id="\w*PolyCollection_')
    assert len(bands_drawn.findall(with_bands)) == len(bands_drawn.findall(without)) + 1


async def test_by_default_the_page_draws_the_reports_own_intervals(swept: tuple[Path, str]) -> None:
    journal, run_id = swept
    report = await build_report(journal, run_id)
    tabular = next(stream for stream in report.streams if stream.method == "tabular")
    assert tabular.avg_h_ci is not None
    low, high = tabular.avg_h_ci
    page = render_html(report)
    assert f"[{low:.1f}, {high:.1f}]" in page
    bands_drawn = re.compile(r'id="\w*PolyCollection_')
    assert len(bands_drawn.findall(page)) > len(bands_drawn.findall(render_html(report, {})))


def test_a_run_not_in_the_journal_is_one_line_and_no_file(swept: tuple[Path, str], tmp_path: Path,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "report.html"
    assert main(["report", "r-nope", "--journal", str(swept[0]), "--html", str(out)]) == 2
    assert "no run 'r-nope'" in capsys.readouterr().err
    assert not out.exists() and list(tmp_path.iterdir()) == []


@pytest.mark.skipif(chromium_path() is None, reason="no Chromium on this machine (apt-get install chromium; "
                                                      ".ci/run installs it)")
def test_chromium_loads_the_page_without_errors_and_draws_every_chart(swept: tuple[Path, str],
                                                                      tmp_path: Path) -> None:
    probe = """JSON.stringify([...document.querySelectorAll('figure.chart')].map(figure => {
        const svg = figure.querySelector('svg'); const box = svg.getBoundingClientRect();
        const drawn = [...svg.querySelectorAll('g[id^=line2d] path, g[id^=line2d] use')]
            .filter(mark => { const b = mark.getBoundingClientRect(); return b.width > 0 || b.height > 0; });
        return {kind: figure.dataset.chart, label: figure.getAttribute('aria-label'),
                width: box.width, height: box.height, marks: drawn.length};
    }))"""
    with Chromium() as browser:
        page = browser.open(_html_file(swept, tmp_path), probe=probe)
    assert page.errors == []
    charts = json.loads(page.probe)
    assert [c["label"] for c in charts if c["kind"] == "learning-curve"] == list(SCENARIOS)
    assert sum(c["kind"] == "scatter" for c in charts) == 1
    for chart in charts:
        assert chart["width"] > 300 and chart["height"] > 150, chart
        assert chart["marks"] >= len(METHODS), chart  # every stream drew at least its line or point


def _report_in(swept: tuple[Path, str], capsys: pytest.CaptureFixture[str], *flags: str) -> str:
    journal, run_id = swept
    assert main(["report", run_id, "--journal", str(journal), *flags]) == 0
    return capsys.readouterr().out


def test_a_figure_over_one_task_family_says_no_interval_in_every_format(
        swept: tuple[Path, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # A pilot's pitch window holds its first tasks: one buyer profile, one family.
    journal, run_id = swept
    report = json.loads(_report_in(swept, capsys, "--json"))
    blind = next(s for s in report["streams"] if s["method"] == "blind")
    window = blind["settings"]["pitch_l1"]["windows"][0]
    assert window["hidden_ci"] == "no interval (1 family)"
    text = _report_in(swept, capsys)
    row = next(line for line in text.splitlines() if re.match(r"scripted\s+blind\s+pitch_l1\s+0\s", line))
    assert "no interval (1 family)" in row and "[" not in row
    markdown = _report_in(swept, capsys, "--md")
    assert re.search(r"\| scripted \| blind \| pitch_l1 \| 0 \| [\d.]+ \| no interval \(1 family\) \|", markdown)
    rows = _report_in(swept, capsys, "--csv", "--windows").splitlines()
    header = rows[0].split(",")
    pitch = next(line.split(",") for line in rows if ",blind,pitch_l1,0," in line)
    cells = dict(zip(header, pitch, strict=True))
    assert cells["h_ci_lo"] == cells["h_ci_hi"] == "no interval (1 family)"
    page = _html_file(swept, tmp_path).read_text()
    assert "none where a window has 1 task family" in page  # the learning curve's legend


def test_the_page_has_the_text_reports_audit_and_end_reason_tables(
        swept: tuple[Path, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = _report_in(swept, capsys)
    page = _html_file(swept, tmp_path).read_text()
    for title in ("State audits", "End reasons"):
        assert f"<h2>{title}</h2>" in page
    audits = text.split("State audits", 1)[1].splitlines()[3:3 + len(METHODS)]
    for line in audits:
        model, method, episodes, *_ = line.split()
        assert f"<td>{model}</td><td>{method}</td><td>{episodes}</td>" in page, line
    ends = text.split("End reasons", 1)[1].splitlines()[3:3 + len(METHODS)]
    for line in ends:
        model, method, reasons = line.split(None, 2)
        assert f"<td>{model}</td><td>{method}</td><td>{reasons.strip()}</td>" in page, line


def test_the_charts_explain_their_lines_keep_coinciding_lines_apart_and_start_cost_at_zero(
        swept: tuple[Path, str], tmp_path: Path) -> None:
    page = _html_file(swept, tmp_path).read_text()
    curve = page.split('aria-label="retail_l1"', 1)[1].split("</figure>", 1)[0]
    for key in ("H: hidden-dependent tasks", "F: fully specified tasks", *(f"scripted / {m}" for m in METHODS)):
        assert key in curve
    sizes = [float(size) for size in re.findall(r"font-size:\s*([\d.]+)px", curve.split("legend", 1)[1])]
    assert sizes and min(sizes) >= 8  # legible, not the 7 px it was
    # Every stream scores F 100 in most windows: their markers sit at the same height, apart in x.
    marks = [(float(x), float(y))
             for x, y in re.findall(r'<use xlink:href="#\w+" x="([\d.]+)" y="([\d.]+)"', curve)]
    top = min(y for _, y in marks)
    at_top = {round(x, 1) for x, y in marks if abs(y - top) < 0.5}
    windows = len(re.findall(r'<g id="xtick_\d+">', curve))
    assert len(at_top) > windows, (at_top, windows)
    scatter = page.split("data-chart=scatter", 1)[1].split("</figure>", 1)[0]
    first_tick = re.search(r'<g id="xtick_1">.*?<text[^>]*>([^<]+)</text>', scatter, re.S)
    assert first_tick is not None and float(first_tick.group(1)) == 0.0


def test_the_page_has_the_text_reports_cost_latency_and_window_tables(
        swept: tuple[Path, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = _report_in(swept, capsys, "--all")  # a pipe: one line a row
    page = _html_file(swept, tmp_path).read_text()
    assert "<h2>Tokens, cost and latency</h2>" in page and "<h2>Windows</h2>" in page
    assert "<th>p50 s</th>" in page and "<th>p95 s</th>" in page
    costs = text.split("Tokens, cost and latency", 1)[1].split("\n\n", 1)[0].splitlines()
    for line in [line for line in costs if line.startswith("scripted ")]:
        cells = line.split()
        assert "<td>" + "</td><td>".join(cells[:4]) + "</td>" in page, line
    windows = text.split("\nWindows\n", 1)[1].split("\n\n", 1)[0].splitlines()
    rows = [line.split()[:5] for line in windows if line.startswith("scripted ")]
    assert rows
    for cells in rows:
        assert "<td>" + "</td><td>".join(cells) + "</td>" in page, cells


async def test_each_kind_of_band_has_its_own_look_and_key_entry(swept: tuple[Path, str]) -> None:
    journal, run_id = swept
    report = await build_report(journal, run_id)
    tabular = next(stream for stream in report.streams if stream.method == "tabular")
    windows = [w.window for w in tabular.settings["retail_l1"].windows]
    hidden = {CellKey("scripted", "tabular", "retail_l1", "hidden", w): (1.0, 99.0) for w in windows}
    both = {**hidden, **{CellKey("scripted", "tabular", "retail_l1", "fully_specified", w): (5.0, 95.0)
                         for w in windows}}

    def curve(intervals: dict[CellKey, tuple[float, float]]) -> str:
        return render_html(report, intervals).split('aria-label="retail_l1"', 1)[1].split("</figure>", 1)[0]

    assert "H band: 95% interval" not in curve({}) and "F band (hatched)" not in curve({})
    assert "H band: 95% interval" in curve(hidden) and "F band (hatched)" not in curve(hidden)
    drawn = curve(both)
    assert "H band: 95% interval" in drawn and "F band (hatched): 95% interval" in drawn
    assert drawn.count("<pattern ") > curve(hidden).count("<pattern ")  # the F band is a hatch, not a second tint
