"""The building blocks every shiftbench HTML page shares: one self-contained document, its style, and
the sections, tables, charts and provenance lists inside it.

A page is one file, nothing fetched at view time: styles inline, charts inline SVG (`runner.views.charts`),
and a Content-Security-Policy that forbids every network load, so a page that would reach out fails
loudly in the browser instead of silently depending on the network. `report --html` and `compare --html`
both build on these, so the two pages look and behave alike.

The page reads on a phone (390 px) as on a desktop: the page itself never scrolls sideways. A table
sits in a box of its own that scrolls sideways when the table is wider than the screen; charts take
the screen's width (one a row below 500 px); long words (hashes, paths, a model's JSON) break rather
than widen the page; the provenance list puts each value under its name on a narrow screen.
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

__all__ = ["CSP", "facts", "figure", "page", "score", "section", "table"]

CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"


def page(title: str, sections: Sequence[str]) -> str:
    """The whole document; `sections` are HTML already."""
    return _PAGE.format(title=escape(title), csp=CSP, style=_STYLE, body="\n".join(sections))


def section(title: str, content: str) -> str:
    return f"<section><h2>{escape(title)}</h2>\n{content}\n</section>"


def figure(svg: str, kind: str, caption: str) -> str:
    """A chart, marked with its kind and caption so a test (or a reader's tool) can find it."""
    return f"<figure class=chart data-chart={kind} aria-label=\"{escape(caption)}\">{svg}</figure>"


def score(value: float | None, bounds: tuple[float, float] | str | None = None, signed: bool = False) -> str:
    """A score (or a difference, `signed`) with its interval in brackets, or '-' when there is none; a
    figure with no interval says why (`bounds` a note such as "no interval (1 family)")."""
    if value is None:
        return "-"
    shown = f"{value:+.1f}" if signed else f"{value:.1f}"
    if bounds is None:
        return shown
    if isinstance(bounds, str):
        return f"{shown} <span class=ci>{escape(bounds)}</span>"
    return f"{shown} <span class=ci>[{bounds[0]:.1f}, {bounds[1]:.1f}]</span>"


def table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """Cells are HTML already (escaped by the caller)."""
    head = "".join(f"<th>{escape(h)}</th>" for h in headers)
    body = "".join("<tr>" + "".join(f"<td>{cell}</td>" for cell in row) + "</tr>" for row in rows)
    return f"<div class=wide><table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></div>"


def facts(items: Sequence[tuple[str, str]]) -> str:
    """A definition list of plain-text facts (provenance: hashes, paths, versions)."""
    return "<dl>" + "".join(f"<dt>{escape(k)}</dt><dd><code>{escape(v)}</code></dd>" for k, v in items) + "</dl>"


_STYLE = """
body{font:14px/1.45 system-ui,sans-serif;margin:2em auto;max-width:1100px;padding:0 1em;color:#222;
overflow-wrap:anywhere}
.wide{overflow-x:auto;max-width:100%}.wide td,.wide th{overflow-wrap:normal}
h1{font-size:1.5em}h2{font-size:1.2em;border-bottom:1px solid #ddd;padding-bottom:.2em;margin-top:2em}
h3{font-size:1em}table{border-collapse:collapse;margin:.5em 0}
th,td{padding:.25em .7em;border-bottom:1px solid #eee;text-align:left}th{background:#f6f6f6}
td:nth-child(n+3){font-variant-numeric:tabular-nums}.ci{color:#777;font-size:.85em}
.charts{display:grid;grid-template-columns:repeat(auto-fill,minmax(min(500px,100%),1fr));gap:.5em 1.5em}
figure.chart{margin:0}figure.chart svg{max-width:100%;height:auto}
pre{background:#f7f7f7;padding:.5em;overflow-x:auto;white-space:pre-wrap;font-size:12px}
details{border:1px solid #e4e4e4;border-radius:4px;margin:.4em 0;padding:.3em .6em}
summary{cursor:pointer}.note{color:#666;font-size:.9em}.thought{color:#555;font-style:italic}
dt{font-weight:bold;float:left;clear:left;width:11em}dd{margin-left:12em}
@media (max-width:600px){body{margin:1em auto;padding:0 .6em}dt{float:none;width:auto}dd{margin-left:1em}}
"""

_PAGE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="{csp}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{title}</title>
<style>{style}</style>
</head>
<body>
{body}
</body>
</html>
"""
