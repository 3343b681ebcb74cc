"""The audits' names, for the command line to offer without importing the audits (which load the
episode loop, the simulators and the providers): faults and their fixed results, verdicts, relations,
the built-in transforms and the default validity bound. The audit modules take them from here."""

from __future__ import annotations

__all__ = ["BUILT_IN_TRANSFORMS", "DEFAULT_MIN_KEPT", "FAULTS", "RELATIONS", "VERDICTS"]

FAULTS: dict[str, str] = {
    "error": '{"error":"internal error"}',
    "timeout": '{"error":"timeout"}',
    "malformed": '{"raw":"{\\"status\\": "}',
}
VERDICTS = ("recovered", "escalated", "acted_wrongly", "failed", "missing", "not_applicable")
RELATIONS = ("same_state", "same_actions", "same_output")
DEFAULT_MIN_KEPT = 0.9
BUILT_IN_TRANSFORMS = ("injection", "irrelevant_detail", "reorder", "rename")
"""The names of `runner.audits.transforms.BUILT_IN`, in its order (a test holds them equal)."""
