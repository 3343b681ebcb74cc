"""A small JSON-schema checker for tool arguments (the subset tool schemas use).

Tool schemas in the OpenAI function format use `type`, `properties`, `required`, `enum`, `items`
and `additionalProperties`. That subset is all we check, and a message names the offending path so the
model can correct itself.
"""

from __future__ import annotations

from collections.abc import Mapping

from simulators.protocol import JSON

__all__ = ["schema_problem", "check_schema_shape"]

_TYPES: dict[str, tuple[type, ...]] = {
    "object": (dict,),
    "array": (list,),
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "null": (type(None),),
}


def _type_ok(value: JSON, expected: str | list[str]) -> bool:
    names = [expected] if isinstance(expected, str) else expected
    for name in names:
        kinds = _TYPES.get(name)
        if kinds is None:
            continue
        if isinstance(value, bool) and name in ("integer", "number"):
            continue
        if isinstance(value, kinds):
            return True
    return False


def schema_problem(value: JSON, schema: Mapping[str, JSON], path: str = "arguments") -> str | None:
    """The first way `value` breaks `schema`, or None when it conforms."""
    expected = schema.get("type")
    if expected is not None and not _type_ok(value, expected):
        return f"{path} must be of type {expected}, got {type(value).__name__}"
    if "enum" in schema and value not in schema["enum"]:
        return f"{path} must be one of {schema['enum']}, got {value!r}"
    if isinstance(value, dict):
        return _object_problem(value, schema, path)
    if isinstance(value, list) and len(value) < int(schema.get("minItems", 0)):
        return f"{path} must have at least {schema['minItems']} item(s)"
    if isinstance(value, list) and isinstance(schema.get("items"), dict):
        for index, item in enumerate(value):
            problem = schema_problem(item, schema["items"], f"{path}[{index}]")
            if problem:
                return problem
    return None


def _object_problem(value: dict[str, JSON], schema: Mapping[str, JSON], path: str) -> str | None:
    properties: Mapping[str, JSON] = schema.get("properties", {})
    for name in schema.get("required", []):
        if name not in value:
            return f"{path} is missing required field '{name}'"
    if schema.get("additionalProperties") is False:
        extra = sorted(set(value) - set(properties))
        if extra:
            return f"{path} has unexpected field(s) {extra}"
    for name, sub in properties.items():
        if name in value and isinstance(sub, dict):
            problem = schema_problem(value[name], sub, f"{path}.{name}")
            if problem:
                return problem
    return None


def check_schema_shape(schema: JSON) -> str | None:
    """Why a tool's parameter schema cannot be used, or None if it can."""
    if not isinstance(schema, dict):
        return "parameters must be a JSON object schema"
    if schema.get("type", "object") != "object":
        return "parameters must have type 'object'"
    properties = schema.get("properties", {})
    if not isinstance(properties, dict):
        return "parameters.properties must be an object"
    required = schema.get("required", [])
    if not isinstance(required, list) or not all(isinstance(r, str) for r in required):
        return "parameters.required must be a list of names"
    for name, sub in properties.items():
        if not isinstance(sub, dict):
            return f"parameters.properties.{name} must be an object"
    return None
