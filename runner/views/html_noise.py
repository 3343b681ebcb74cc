"""The HTML report's noise floor across stream replicas: the report's noise tables (`runner.report`), or
the notice that one serving stream per setting measures none of it."""

from __future__ import annotations

from html import escape

from runner.report import Report
from runner.report.noise_tables import noise_lines, noise_sections
from runner.views.html_page import table

__all__ = ["noise_html"]


def noise_html(report: Report) -> str:
    notes = "".join(f"<p class=note>{escape(line)}</p>" for line in noise_lines(report))
    parts = [f"<h3>{escape(title)}</h3>" + table(headers, [[escape(cell) for cell in row] for row in rows])
             for title, (headers, rows), _ in noise_sections(report)]
    if parts:
        notes += ("<p class=note>On the learning curves, the darker band of a stream is the range of its "
                  "replicas' own scores per window.</p>")
    return notes + "".join(parts)
