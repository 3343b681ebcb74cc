"""A comparison as one self-contained HTML page: `shiftbench compare A B --html FILE`.

The same figures as `compare`'s text, built from the report page's blocks (`runner.views.html_page`):
a heading naming A and B and how the intervals were drawn, the paired differences A - B (Avg H, Avg F,
then each setting's H and F) as a chart of points with their intervals against the line of no
difference and as a table with win / tie / loss counts and the sign test, the per-task measures, and
where each side's numbers come from (run, config hash, dataset fingerprint, code version).
"""

from __future__ import annotations

from html import escape

from runner.evidence.compare import Comparison, PairedFigure, p_value_text
from runner.stats.outcomes import RunEvidence
from runner.views.charts import DiffRow, difference_svg
from runner.views.html_page import facts, figure, page, score, section, table

__all__ = ["render_compare_html"]


def render_compare_html(comparison: Comparison, a: RunEvidence, b: RunEvidence) -> str:
    rows = _rows(comparison)
    # A point without a bar says why on its own line: it rests on one task family.
    diffs = [DiffRow(label, f.diff, (f.ci.lo, f.ci.hi)) if f.ci is not None
             else DiffRow(f"{label}: {f.no_ci}", f.diff, None) for label, f in rows]
    chart = difference_svg(diffs, f"A - B: {comparison.a.name} vs {comparison.b.name}", "diff")
    return page(f"shiftbench compare {comparison.a} vs {comparison.b}", [
        _heading(comparison),
        section("Paired differences", figure(chart, "differences", "A - B per setting") + _differences(rows)),
        section("Per task", _per_task(comparison)),
        section("Provenance", _provenance(a, "A") + _provenance(b, "B")),
    ])


def _rows(comparison: Comparison) -> list[tuple[str, PairedFigure]]:
    """Avg H and Avg F first, then each setting's H and F, in the setting order `compare` prints."""
    found = [(label, f) for label, f in (("Avg H", comparison.avg_h), ("Avg F", comparison.avg_f)) if f is not None]
    found += [(f"{name} {label.upper()}", f) for name, figures in comparison.settings.items()
              for label, f in figures.items()]
    return found


def _heading(comparison: Comparison) -> str:
    spec = comparison.spec
    return (f"<header><h1>A {escape(str(comparison.a))} vs B {escape(str(comparison.b))}</h1>"
            f"<p>{comparison.pairs} paired test tasks</p>"
            "<p class=note>Differences are A - B in score points (mean reward x 100); H: hidden-dependent tasks, "
            f"F: fully specified tasks. Bracketed figures and bars are {spec.level:.0%} paired bootstrap intervals "
            f"({spec.draws} draws, seed {spec.seed}, {escape(spec.unit)}): both sides resampled by the same draws. "
            "The sign test is one-sided (A better), ties dropped. A bar that crosses 0 shows no difference "
            "either way.</p></header>")


def _differences(rows: list[tuple[str, PairedFigure]]) -> str:
    cells = [[escape(label), score(f.diff, f.no_ci if f.ci is None else (f.ci.lo, f.ci.hi), signed=True),
              str(f.wins), str(f.ties), str(f.losses), p_value_text(f.sign_test_p)] for label, f in rows]
    return table(["figure", "A - B", "win", "tie", "loss", "sign p"], cells)


def _per_task(comparison: Comparison) -> str:
    cells = []
    for name, m in comparison.per_task.items():
        digits = 6 if name == "cost_usd" else 1
        median_r = "-" if m.median_r is None else f"{m.median_r:.3f}"
        cells.append([escape(name), f"{m.a:.{digits}f}", f"{m.b:.{digits}f}", f"{m.diff:+.{digits}f}",
                      f"{m.r:.3f}", median_r])
    note = ("<p class=note>Means per task (less is better); r = (B - A) / max(1, B), the relative reduction of A "
            "against the base B.</p>")
    return note + table(["measure", "A", "B", "A - B", "r", "median r"], cells)


def _provenance(evidence: RunEvidence, side: str) -> str:
    return f"<h3>{side}: run {escape(evidence.run_id)}</h3>" + facts([
        ("config hash", evidence.config_hash), ("dataset fingerprint", evidence.dataset_fingerprint),
        ("code version", evidence.code_version)])
