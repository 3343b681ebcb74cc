"""The edge table's items 1 and 2 (issue 21): reading results (`show`, `state`, `export` with what the run
lacks, and the README's walkthrough), and numbers that say what they are (`estimate`, `compare`).
"""

from __future__ import annotations

from collections.abc import Iterator

from bench.edge_rows import Bench, Edge, Row, attempt, setup_run

__all__ = ["item1", "item2"]


# --- item 1: reading results -----------------------------------------------------------------------


def item1(bench: Bench) -> Iterator[Row]:
    run, journal = bench.runs["quickstart"], ".shiftbench/journal.sqlite"
    t = "state of tabular, retail_l1 window 3"
    edges = [
        ("show: a stream the run lacks", ("show", run, "--stream", "scripted/oracle"), ("scripted/blind",)),
        ("show: a scenario the run lacks", ("show", run, "--scenario", "retail_l9"), ("retail_l1",)),
        ("show: a window no scenario has", ("show", run, "--window", "99"), ("0, 1",)),
        ("show: a window past retail_l1's last (5)",
         ("show", run, "--stream", "scripted/blind", "--scenario", "retail_l1", "--window", "6"), ("5",)),
        ("show: a unit the run lacks", ("show", run, "--unit", "scripted|blind|retail_l1|test|rt_nope"), ()),
        ("show: a replica the run lacks", ("show", run, "--replica", "1"), ("replica",)),
        ("show: a run the journal lacks", ("show", "r-no-such-run"), ("runs",)),
        ("state: a stream the run lacks", ("state", run, "--stream", "scripted/oracle", "--scenario", "retail_l1"),
         ("scripted/tabular",)),
        ("state: a scenario the run lacks", ("state", run, "--scenario", "retail_l9"), ("retail_l1",)),
        ("state: a window past retail_l1's last (5)", ("state", run, "--scenario", "retail_l1", "--window", "6"),
         ("5",)),
        ("state: a replica (state has no --replica)",
         ("state", run, "--stream", "scripted/tabular", "--scenario", "retail_l1", "--replica", "1"), ()),
    ]
    for edge, argv, want in edges:
        yield attempt(bench, Edge("1", edge, argv, journal, want=want))
    for edge, argv in (
        ("show, README walkthrough (failed blind episodes)",
         ("show", run, "--failed", "--stream", "scripted/blind", "--scenario", "retail_l1", "--limit", "3")),
        ("state, README walkthrough (every stream)", ("state", run, "--scenario", "retail_l1", "--window", "3")),
        (f"{t}, as text", ("state", run, "--stream", "scripted/tabular", "--scenario", "retail_l1", "--window", "3")),
        (f"{t}, --json",
         ("state", run, "--stream", "scripted/tabular", "--scenario", "retail_l1", "--window", "3", "--json")),
    ):
        yield attempt(bench, Edge("1", edge, argv, journal, expect=0))
    yield attempt(bench, Edge("1", "export: a run the journal lacks", ("export", "r-no-such-run", "--out", "logs"),
                              "logs"))
    yield attempt(bench, Edge("1", "export: a stream (export has no filters)",
                              ("export", run, "--out", "logs", "--stream", "scripted/oracle"), "logs"))
    yield attempt(bench, Edge("1", "export, README walkthrough", ("export", run, "--format", "jsonl", "--out", "logs/"),
                              "logs", expect=0, made="dir"))


# --- item 2: numbers that say what they are --------------------------------------------------------


def item2(bench: Bench) -> Iterator[Row]:
    yield setup_run(bench, "2", "other", "--methods", "blind", "--scenarios", "retail_l1,banking_l1")
    run, other, journal = bench.runs["quickstart"], bench.runs["other"], ".shiftbench/journal.sqlite"
    yield attempt(bench, Edge("2", "estimate from the offline run", ("estimate", run), journal, want=("pilot",)))
    yield attempt(bench, Edge("2", "estimate from the offline run for a priced model",
                              ("estimate", run, "--models", "openai:gpt-4.1-mini", "--json"), journal,
                              want=("pilot",)))
    pair = (f"{run}:scripted/blind", f"{other}:scripted/blind")
    yield attempt(bench, Edge("2", "compare: runs over different scenarios", ("compare", *pair), journal,
                              want=("retail_l2",)))
    yield attempt(bench, Edge("2", "compare: the same, --shared", ("compare", *pair, "--shared"), journal,
                              expect=0))
