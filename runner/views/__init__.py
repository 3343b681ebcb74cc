"""Views of a finished or running run, read from the journal: they never drive a run.

- `charts`: learning curves and the cost / score scatter as static SVG (matplotlib, the `html` extra).
- `html_report`: the report as one self-contained HTML page (`html_page`, `html_noise`, `html_batch` its parts);
  `compare_html`: a comparison's page.
- `runs`: `shiftbench runs`; `show`, `transcript`, `episodes`, `filters`: episodes as a person reads them;
  `states`: a method's learned state; `export`, `inspect_export`: JSONL and Inspect logs.

Arrows: views -> evidence, report, stats, cost, config, journal, common.
"""
