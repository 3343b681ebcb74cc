"""Views of a finished or running run, read from the journal: they never drive a run.

- `charts`: learning curves and the cost / score scatter as static SVG (matplotlib, the `html` extra).
- `html_report`: the report as one self-contained HTML page.
"""
