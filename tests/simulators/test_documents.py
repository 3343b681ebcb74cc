"""`read_docs` on the export's documents answers as the reference's readers do.

Reference: `servelearnbench/domains/retail/docs.py` (`lookup`, `toc`, `section_text`; the tier readers
`retail/l1/docs.py` `lookup` behave the same) and `servelearnbench/domains/banking/l1/docs.py` (`ReadDocs`).
The documents are the hand-written official-schema fixtures (tests/fixtures/official).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from simulators.dataset import load_scenario
from simulators.errors import ToolError
from simulators.protocol import Scenario, ScenarioEnvironment, ToolCall
from simulators.registry import get_domain
from simulators.session import ToolSession, read_document

OFFICIAL = Path(__file__).resolve().parents[1] / "fixtures" / "official"


@pytest.fixture(scope="module")
def retail() -> ScenarioEnvironment:
    return load_scenario(OFFICIAL, "retail_l1").environment


@pytest.fixture(scope="module")
def banking() -> ScenarioEnvironment:
    return load_scenario(OFFICIAL, "banking_l2").environment


def read(environment: ScenarioEnvironment, **arguments: object) -> str:
    return read_document(environment.docs, arguments, environment.system_prompt)


def test_retail_refusals_section_reads_by_the_slug_the_prompt_names(retail: ScenarioEnvironment) -> None:
    """The official retail prompt says read_docs(doc='workflow', section='refusals') before refusing."""
    text = read(retail, doc="workflow", section="refusals")
    assert text.startswith("## Refusals\n") and "over_threshold" in text and "## Inquiries" not in text


def test_retail_contents_when_no_section(retail: ScenarioEnvironment) -> None:
    assert read(retail, doc="policy") == (
        "policy document — sections (fetch one with read_docs(doc='policy', section='<slug>')):\n"
        "- cancellation — Cancellation\n- returns — Returns\n- exchanges — Exchanges\n"
        "- modifications — Modifications\n- placing-orders — Placing orders")


def test_retail_section_is_its_heading_and_body(retail: ScenarioEnvironment) -> None:
    text = read(retail, doc="policy", section="placing-orders")
    assert text.startswith("## Placing orders\n") and not text.endswith("\n")


def test_retail_errors(retail: ScenarioEnvironment) -> None:
    with pytest.raises(ToolError, match=r"^unknown section 'Refusals' \(available: procedure, refusals, inquiries\)$"):
        read(retail, doc="workflow", section="Refusals")
    with pytest.raises(ToolError, match=r"^unknown section '' \(available: procedure, refusals, inquiries\)$"):
        read(retail, doc="workflow", section="")
    with pytest.raises(ToolError, match=r"^unknown document \(available: policy, workflow\)$"):
        read(retail, doc="policy.md")


def test_banking_contents_are_the_json_list_of_sections(banking: ScenarioEnvironment) -> None:
    assert read(banking, doc="workflow") == json.dumps(["review_steps", "reasons"])
    assert read(banking, doc="policy", section="") == json.dumps(
        ["decisions", "case_forms", "transactions", "limits", "transfers"])


def test_banking_section_is_its_body_only(banking: ScenarioEnvironment) -> None:
    assert read(banking, doc="workflow", section="reasons") == (
        "corridor_blocked | over_limit | account_standing | cap_exceeded | reportable_amount | daily_cap | "
        "new_payee_review")


def test_banking_errors(banking: ScenarioEnvironment) -> None:
    with pytest.raises(ToolError, match=r"^unknown section \(have: review_steps, reasons\)$"):
        read(banking, doc="workflow", section="Reasons")
    with pytest.raises(ToolError, match=r"^unknown doc \(policy \| workflow\)$"):
        read(banking, doc="faq")
    with pytest.raises(ToolError, match=r"^unhashable type: 'list'$"):
        read(banking, doc=["policy"])


def _session(scenario: Scenario) -> ToolSession:
    world = get_domain(scenario.domain).new_world(scenario.environment, scenario.serving[0])
    return ToolSession(scenario.environment, world)


@pytest.mark.parametrize(("scenario", "arguments", "observation"), [
    ("retail_l1", {}, "Error: ReadDocsV2.invoke() missing 1 required positional argument: 'doc'"),
    ("retail_l1", {"doc": "faq"}, "Error: unknown document (available: policy, workflow)"),
    ("banking_l2", {"doc": "policy", "page": 2}, "Error: ReadDocs.invoke() got an unexpected keyword argument 'page'"),
    ("banking_l2", {"doc": "policy", "section": ["limits"]}, "Error: unhashable type: 'list'"),
])
def test_arguments_reach_the_reader_unchecked_as_in_the_reference(
        scenario: str, arguments: dict[str, object], observation: str) -> None:
    """The reference validates no schema before `ReadDocs.invoke(data=..., **arguments)` (agent.py, env.py)."""
    loaded = load_scenario(OFFICIAL, scenario)
    call = ToolCall("c", "read_docs", json.dumps(arguments))
    assert _session(loaded).execute(call).observation == observation
