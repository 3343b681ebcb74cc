from __future__ import annotations

import pytest

from simulators.errors import ToolError
from simulators.policy_block import merged_policy, parse_policy_blocks, render_policy_block
from simulators.schema import schema_problem
from simulators.session import read_document

BLOCK = render_policy_block({"a": 1})
DOC = f"# Policy\nintro\n## Returns\nwithin 30 days\n### Gift cards\nnever\n## Exchanges\nsame product\n{BLOCK}\n"


def test_built_in_documents_read_whole_and_by_heading() -> None:
    """A document carrying a policy block (the built-in suite's) keeps its own reader."""
    docs = {"policy": DOC}
    assert read_document(docs, {"doc": "policy"}) == DOC
    assert read_document(docs, {"doc": "policy.md", "section": "returns"}) == \
        "## Returns\nwithin 30 days\n### Gift cards\nnever"
    assert read_document(docs, {"doc": "policy", "section": "gift-cards"}) == "### Gift cards\nnever"
    assert read_document({"policy": f"# Order modifications\nok\n{BLOCK}"},
                         {"doc": "policy", "section": "modifications"}).startswith("# Order modifications\nok")
    with pytest.raises(ToolError, match="no section 'refunds'. Sections: Policy; Returns; Gift cards; Exchanges"):
        read_document(docs, {"doc": "policy", "section": "refunds"})
    with pytest.raises(ToolError, match="no document 'faq'"):
        read_document(docs, {"doc": "faq"})


def test_schema_problems_name_the_path() -> None:
    schema = {"type": "object", "required": ["pitch"], "properties": {
        "pitch": {"type": "string"}, "decision": {"type": "string", "enum": ["refuse"]},
        "decisions": {"type": "array", "items": {"type": "object", "required": ["line"]}}}}
    assert schema_problem({"pitch": "hi"}, schema) is None
    assert schema_problem({}, schema) == "arguments is missing required field 'pitch'"
    problem = schema_problem({"pitch": "", "decision": "ok"}, schema)
    assert problem == "arguments.decision must be one of ['refuse'], got 'ok'"
    assert "arguments.decisions[1] is missing required field 'line'" == \
        schema_problem({"pitch": "", "decisions": [{"line": 1}, {}]}, schema)
    assert schema_problem({"pitch": True}, {"properties": {"pitch": {"type": "integer"}}}) is not None


def test_policy_blocks_overlay_rule_by_rule_and_skip_damaged_ones() -> None:
    documented = "Docs\n" + render_policy_block({"a": 1, "b": {"x": 2}})
    bulletin = "Now:\n" + render_policy_block({"b": {"x": 3}}) + "\n```shiftbench-policy\n{broken\n```"
    assert merged_policy(documented, bulletin) == {"a": 1, "b": {"x": 3}}
    assert len(parse_policy_blocks(bulletin)) == 1
