"""The HTML report's batch section (a run that sent anything through a provider's batch API): the
report's batch tables (`runner.report.batch_tables`), read from the same model as the text report."""

from __future__ import annotations

from html import escape

from runner.report import Report
from runner.report.batch_tables import batch_sections
from runner.views.html_page import table

__all__ = ["batch_html"]


def batch_html(report: Report) -> str:
    return "".join(f"<p class=note>{escape(title)}</p>" + table(headers, [[escape(cell) for cell in row]
                                                                         for row in rows])
                   for title, (headers, rows), _ in batch_sections(report))
