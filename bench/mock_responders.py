"""What the mock answers when nothing is scripted: `tool_loop()`, a generic agent that plays any
tool-calling episode to its end, with arguments made up from the tools' schemas (`minimal_value`),
and the pages a local server publishes about itself (`llama_cpp_info`, `vllm_info`)."""

from __future__ import annotations

from collections.abc import Mapping

from bench.mock_types import JSON, Call, MockUsage, Recorded, Reply, Responder, Response

__all__ = ["llama_cpp_info", "minimal_value", "tool_loop", "vllm_info"]


def llama_cpp_info(slots: int = 1, n_ctx: int = 8192, alias: str = "smol") -> dict[str, JSON]:
    """llama.cpp's /props and /slots as its server sends them (the fields shiftbench reads, and their
    neighbours, from llama.cpp served by xllamacpp 2026.10 with `-c 8192 -np 1`; bench/README.md)."""
    props = {"default_generation_settings": {"params": {"temperature": 0.8, "top_k": 40, "max_tokens": -1,
                                                        "n_predict": -1, "stream": False},
                                             "n_ctx": n_ctx},
             "total_slots": slots, "model_alias": alias, "model_ftype": "Q4_1",
             "modalities": {"vision": False, "video": False, "audio": False},
             "endpoint_slots": True, "endpoint_props": False, "endpoint_metrics": False,
             "chat_template": "{{ messages }}", "build_info": "b0-unknown"}
    per_slot = [{"id": i, "n_ctx": n_ctx, "speculative": False, "is_processing": False} for i in range(slots)]
    return {"/props": props, "/slots": per_slot}


def vllm_info(model: str = "Qwen/Qwen3-32B", max_model_len: int = 32_768) -> dict[str, JSON]:
    """vLLM's /v1/models: the context (`max_model_len`) is there; its --max-num-seqs is published nowhere."""
    return {"/v1/models": {"object": "list", "data": [
        {"id": model, "object": "model", "created": 0, "owned_by": "vllm", "root": model, "parent": None,
         "max_model_len": max_model_len, "permission": []}]}}


def tool_loop(calls_before_finish: int = 2, tool: str | None = None, finish: str = "finish",
              output_tokens: int = 20) -> Responder:
    """Answer any tool-calling conversation: call `tool` (default: the first tool that is not `finish`)
    until the conversation holds `calls_before_finish` tool results, then call `finish`. Arguments
    are the smallest values the schemas allow. Without tools, reply with text."""

    def respond(request: Recorded) -> Response:
        tools = dict(request.tools())
        usage = MockUsage(input_tokens=max(1, len(request.raw) // 4), output_tokens=output_tokens)
        if not tools:
            return Reply(text="ok", usage=usage)
        others = [name for name in tools if name != finish]
        chosen = tool if tool in tools else (others[0] if others else finish)
        name = finish if request.tool_results() >= calls_before_finish and finish in tools else chosen
        return Reply(tool_calls=(Call(name, minimal_value(tools[name])),), usage=usage)

    return respond


def minimal_value(schema: Mapping[str, JSON]) -> JSON:
    """The simplest value a (JSON) schema accepts: required properties only, first enum entry, ..."""
    for key in ("const", "default"):
        if key in schema:
            return schema[key]
    if schema.get("enum"):
        return schema["enum"][0]
    for key in ("anyOf", "oneOf", "allOf"):
        if schema.get(key):
            return minimal_value(schema[key][0])
    kind = schema.get("type", "object")
    kind = next((k for k in kind if k != "null"), "null") if isinstance(kind, list) else kind
    if kind == "object":
        properties = schema.get("properties") or {}
        return {name: minimal_value(properties.get(name, {})) for name in schema.get("required") or ()}
    if kind == "array":
        return [minimal_value(schema.get("items") or {}) for _ in range(int(schema.get("minItems", 0)))]
    simple: dict[str, JSON] = {"string": "x" * max(1, int(schema.get("minLength", 1))),
                               "integer": int(schema.get("minimum", 0)), "number": schema.get("minimum", 0),
                               "boolean": False, "null": None}
    return simple.get(kind)
