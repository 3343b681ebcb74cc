"""`read_docs(doc[, section])`: the scenario's documents, read the way their dataset expects.

Two readers, chosen per document:

- Sectioned (the public reference's, for every document without a machine-readable policy block):
  `read_docs(doc)` answers a table of contents and `read_docs(doc, section)` one section, found by
  its slug exactly. The export writes two dialects, and each is answered as its reference reader
  answers it:
  - banking (`servelearnbench/domains/banking/l1|l2|l3/docs.py`, `ReadDocs`): the document is only
    `## <slug>` sections; the contents are the JSON list of slugs, a section is its body, errors are
    `unknown doc (policy | workflow)` and `unknown section (have: a, b)`;
  - retail (`servelearnbench/domains/retail/docs.py`, `lookup` / `toc`): a `# Title` line, then
    `## <Title>` sections whose slugs the system prompt lists ("- policy: cancellation, returns");
    the contents are one line per slug, a section is `## <Title>` and its body, errors are
    `unknown document (available: policy, workflow)` and `unknown section 'x' (available: a, b)`.
- Whole (the built-in suite's, whose documents carry a `shiftbench-policy` block the scripted
  agent and learning methods read in one call): `read_docs(doc)` is the whole document and a
  section is found by heading text or slug, whole or as the heading's ending, at any level.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass

from simulators.errors import ToolError
from simulators.policy_block import FENCE
from simulators.protocol import JSON
from simulators.pycompat import signature_error, unhashable_error

__all__ = ["DocumentSection", "argument_error", "is_sectioned", "read_document", "sections_of",
           "table_of_contents"]

_SLUG_HEADING = re.compile(r"[a-z0-9_-]+")


@dataclass(frozen=True)
class DocumentSection:
    slug: str
    title: str
    body: str


def read_document(docs: Mapping[str, str], arguments: Mapping[str, JSON], system_prompt: str = "") -> str:
    """The observation of one `read_docs` call; a refusal raises `ToolError` (the text after `Error: `)."""
    doc, section = arguments.get("doc"), arguments.get("section")
    problem = unhashable_error(doc)
    if problem:
        raise ToolError(problem)
    if is_sectioned(docs):
        return _read_sectioned(docs, doc, section, system_prompt)
    return _read_whole(docs, str(doc if doc is not None else ""), section)


def is_sectioned(docs: Mapping[str, str]) -> bool:
    """The reference's reader applies: no document carries a machine-readable policy block."""
    return not any(FENCE in text for text in docs.values())


def argument_error(docs: Mapping[str, str], arguments: Mapping[str, JSON]) -> str | None:
    """For sectioned documents, Python's TypeError text when the call does not bind to the reference
    reader's `invoke(data, doc, section=...)` (class `ReadDocs` for banking, `ReadDocsV2` for retail):
    the reference checks no schema first, so a missing `doc` or an unknown argument reads like this."""
    qualname = ("ReadDocs" if all(_keyed(text) for text in docs.values()) else "ReadDocsV2") + ".invoke"
    if "data" in arguments:
        return f"{qualname}() got multiple values for keyword argument 'data'"
    return signature_error(qualname, ("doc",), ("section",), arguments)


def _keyed(text: str) -> bool:
    """The banking dialect: no title line, every heading a bare slug."""
    lines = text.splitlines()
    if any(line.startswith("# ") for line in lines):
        return False
    headings = [line[3:].strip() for line in lines if line.startswith("## ")]
    return bool(headings) and all(_SLUG_HEADING.fullmatch(h) for h in headings)


# ---------------------------------------------------------------------------------------- sectioned

def _read_sectioned(docs: Mapping[str, str], doc: JSON, section: JSON, system_prompt: str) -> str:
    names = [name for name in ("policy", "workflow") if name in docs] + \
        [name for name in docs if name not in ("policy", "workflow")]
    keyed = all(_keyed(text) for text in docs.values())
    if not isinstance(doc, str) or doc not in docs:
        if keyed:
            raise ToolError(f"unknown doc ({' | '.join(names)})")
        raise ToolError(f"unknown document (available: {', '.join(names)})")
    sections = sections_of(docs[doc], doc, system_prompt)
    slugs = [s.slug for s in sections]
    if keyed:
        if not section:
            return json.dumps(slugs)
        problem = unhashable_error(section)
        if problem:
            raise ToolError(problem)
        found = next((s for s in sections if s.slug == section), None)
        if found is None:
            raise ToolError(f"unknown section (have: {', '.join(slugs)})")
        return found.body
    if section is None:
        return table_of_contents(doc, sections)
    found = next((s for s in sections if s.slug == section), None)
    if found is None:
        raise ToolError(f"unknown section '{section}' (available: {', '.join(slugs)})")
    return f"## {found.title}\n{found.body}"


def table_of_contents(doc: str, sections: tuple[DocumentSection, ...]) -> str:
    """The retail reference's contents: a header line, then `- slug — Title` per section."""
    lines = [f"{doc} document — sections (fetch one with read_docs(doc='{doc}', section='<slug>')):"]
    lines += [f"- {s.slug} — {s.title}" for s in sections]
    return "\n".join(lines)


@functools.lru_cache(maxsize=64)
def sections_of(text: str, doc: str, system_prompt: str = "") -> tuple[DocumentSection, ...]:
    """The `## ` sections of a document, with their slugs: the system prompt's list for this document
    when it names one slug per section (the export writes titles, not slugs, into the file), else
    the heading itself when it is a slug, else the heading made into one."""
    found: list[tuple[str, list[str]]] = []
    for line in text.splitlines():
        if line.startswith("## "):
            found.append((line[3:].strip(), []))
        elif found:
            found[-1][1].append(line)
    listed = _listed_slugs(system_prompt, doc)
    if len(listed) != len(found):
        listed = [title if _SLUG_HEADING.fullmatch(title) else _slug(title) for title, _ in found]
    return tuple(DocumentSection(slug, title, "\n".join(body).strip("\n"))
                 for slug, (title, body) in zip(listed, found, strict=True))


def _listed_slugs(system_prompt: str, doc: str) -> list[str]:
    match = re.search(rf"^[ \t]*-?[ \t]*{re.escape(doc)}:[ \t]*(.+)$", system_prompt, re.MULTILINE)
    return [part.strip() for part in match.group(1).split(",") if part.strip()] if match else []


# ---------------------------------------------------------------------------------------- whole

def _read_whole(docs: Mapping[str, str], doc: str, section: JSON) -> str:
    name = doc.strip().lower().removesuffix(".md")
    if name not in docs:
        raise ToolError(f"no document '{name}'. Documents: {', '.join(sorted(docs))}.")
    text = docs[name]
    if not section:
        return text
    return _heading_section(text, str(section))


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def _find_heading(titles: list[str], wanted: str) -> int | None:
    """A heading by its text or its slug, whole first, else as the heading's ending: prompts name
    sections both ways (`Order modifications`, `order-modifications`, `modifications`)."""
    target = _slug(wanted)
    if not target:
        return None
    slugs = [_slug(title) for title in titles]
    for index, slug in enumerate(slugs):
        if slug == target:
            return index
    for index, slug in enumerate(slugs):
        if slug.endswith(f"-{target}"):
            return index
    return None


def _heading_section(text: str, wanted: str) -> str:
    lines = text.splitlines()
    headings = [(i, line.lstrip("#").strip()) for i, line in enumerate(lines) if line.startswith("#")]
    index = _find_heading([title for _, title in headings], wanted)
    if index is not None:
        start = headings[index][0]
        level = len(lines[start]) - len(lines[start].lstrip("#"))
        end = len(lines)
        for later, _ in headings[index + 1:]:
            if len(lines[later]) - len(lines[later].lstrip("#")) <= level:
                end = later
                break
        return "\n".join(lines[start:end]).strip()
    titles = "; ".join(title for _, title in headings)
    raise ToolError(f"no section '{wanted}'. Sections: {titles}.")
