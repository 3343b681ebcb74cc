"""One reply's body in each dialect, whole (JSON) or streamed (SSE events): OpenAI-compatible chat
completions (chunks with `tool_calls` deltas, usage last when asked for) and Anthropic Messages
(content blocks with their start/delta/stop events). Every text is streamed in two pieces so that a
client is shown that deltas must be joined. The batch APIs (bench/mock_batches.py) reuse the whole bodies."""

from __future__ import annotations

from collections.abc import Mapping

import orjson

from bench.mock_types import JSON, Ids, MockUsage, Recorded, Reply

__all__ = ["anthropic_message", "openai_completion", "sse", "whole"]


def whole(request: Recorded, reply: Reply, ids: Ids) -> JSON:
    if request.dialect == "anthropic":
        return anthropic_message(request, reply, ids)
    return openai_completion(request, reply, ids)


def sse(request: Recorded, reply: Reply, ids: Ids) -> list[bytes]:
    if request.dialect == "anthropic":
        return [f"event: {e['type']}\ndata: ".encode() + orjson.dumps(e) + b"\n\n"
                for e in _anthropic_events(request, reply, ids)]
    chunks = [b"data: " + orjson.dumps(c) + b"\n\n" for c in _openai_chunks(request, reply, ids)]
    return chunks + [b"data: [DONE]\n\n"]


def _openai_chunks(request: Recorded, reply: Reply, ids: Ids) -> list[JSON]:
    completion_id, model = f"chatcmpl-{next(ids)}", reply.served_model or request.body.get("model", "mock")

    def chunk(choices: list[JSON], **extra: JSON) -> JSON:
        return {"id": completion_id, "object": "chat.completion.chunk", "created": 0, "model": model,
                "choices": choices, **extra}

    deltas: list[JSON] = [{"role": "assistant"}]
    deltas += [{reply.reasoning_field: piece} for piece in _halves(reply.reasoning)]
    for index, detail in enumerate(reply.reasoning_details):
        deltas += [{"reasoning_details": [piece]} for piece in _detail_pieces(index, detail)]
    deltas += [{"content": piece} for piece in _halves(reply.text)]
    for index, call in enumerate(reply.tool_calls):
        call_id = call.id or f"call_{next(ids)}"
        deltas.append({"tool_calls": [{"index": index, "id": call_id, "type": "function",
                                       "function": {"name": call.name, "arguments": ""}}]})
        deltas += [{"tool_calls": [{"index": index, "function": {"arguments": piece}}]}
                   for piece in _halves(call.arguments_text())]
    chunks = [chunk([{"index": 0, "delta": delta, "finish_reason": None}]) for delta in deltas]
    finish = "tool_calls" if reply.tool_calls else "stop"
    chunks.append(chunk([{"index": 0, "delta": {}, "finish_reason": finish}]))
    if reply.stream_usage and (request.body.get("stream_options") or {}).get("include_usage"):
        chunks.append(chunk([], usage=_openai_usage(reply.usage)))
    return chunks


def openai_completion(request: Recorded, reply: Reply, ids: Ids) -> JSON:
    message: dict[str, JSON] = {"role": "assistant", "content": reply.text or None}
    if reply.reasoning:
        message[reply.reasoning_field] = reply.reasoning
    if reply.reasoning_details:
        message["reasoning_details"] = [dict(d) for d in reply.reasoning_details]
    if reply.tool_calls:
        message["tool_calls"] = [{"id": c.id or f"call_{next(ids)}", "type": "function",
                                  "function": {"name": c.name, "arguments": c.arguments_text()}}
                                 for c in reply.tool_calls]
    return {"id": f"chatcmpl-{next(ids)}", "object": "chat.completion", "created": 0,
            "model": reply.served_model or request.body.get("model", "mock"), "usage": _openai_usage(reply.usage),
            "choices": [{"index": 0, "message": message,
                         "finish_reason": "tool_calls" if reply.tool_calls else "stop"}]}


def _openai_usage(usage: MockUsage) -> JSON:
    details: dict[str, JSON] = {"cached_tokens": usage.cached_tokens}
    if usage.cache_write_tokens:
        details["cache_write_tokens"] = usage.cache_write_tokens
    out: dict[str, JSON] = {"prompt_tokens": usage.input_tokens, "completion_tokens": usage.output_tokens,
                            "total_tokens": usage.input_tokens + usage.output_tokens,
                            "prompt_tokens_details": details}
    if usage.cost_usd is not None:
        out["cost"] = usage.cost_usd
    return out


def _anthropic_prompt_usage(usage: MockUsage) -> dict[str, JSON]:
    """Anthropic's prompt counts: uncached, written (in total and split by TTL) and read apart."""
    return {"input_tokens": usage.input_tokens - usage.cached_tokens - usage.cache_write_tokens,
            "cache_creation_input_tokens": usage.cache_write_tokens,
            "cache_read_input_tokens": usage.cached_tokens,
            "cache_creation": {"ephemeral_5m_input_tokens": usage.cache_write_tokens - usage.cache_write_1h_tokens,
                               "ephemeral_1h_input_tokens": usage.cache_write_1h_tokens}}


def _anthropic_events(request: Recorded, reply: Reply, ids: Ids) -> list[JSON]:
    usage = reply.usage
    start_usage = {**_anthropic_prompt_usage(usage), "output_tokens": 1}
    message: dict[str, JSON] = {"id": f"msg_{next(ids)}", "type": "message", "role": "assistant", "content": [],
               "model": reply.served_model or request.body.get("model", "mock"), "stop_reason": None,
               "stop_sequence": None,
               "usage": start_usage}
    events: list[JSON] = [{"type": "message_start", "message": message}, {"type": "ping"}]
    for index, block in enumerate(_anthropic_blocks(reply, ids)):
        events += _block_events(index, block)
    stop_reason = "tool_use" if reply.tool_calls else "end_turn"
    events.append({"type": "message_delta", "delta": {"stop_reason": stop_reason, "stop_sequence": None},
                   "usage": {"output_tokens": usage.output_tokens}})
    events.append({"type": "message_stop"})
    return events


def anthropic_message(request: Recorded, reply: Reply, ids: Ids) -> JSON:
    usage = reply.usage
    return {"id": f"msg_{next(ids)}", "type": "message", "role": "assistant",
            "model": reply.served_model or request.body.get("model", "mock"),
            "content": [{k: v for k, v in b.items() if k != "_text"} for b in _anthropic_blocks(reply, ids)],
            "stop_reason": "tool_use" if reply.tool_calls else "end_turn", "stop_sequence": None,
            "usage": {**_anthropic_prompt_usage(usage), "output_tokens": usage.output_tokens}}


def _anthropic_blocks(reply: Reply, ids: Ids) -> list[dict[str, JSON]]:
    blocks: list[dict[str, JSON]] = []
    if reply.reasoning:
        blocks.append({"type": "thinking", "thinking": reply.reasoning, "signature": reply.signature})
    if reply.text:
        blocks.append({"type": "text", "text": reply.text})
    for call in reply.tool_calls:
        # `_text` is what the stream sends as input_json_delta pieces (possibly malformed on purpose).
        arguments = {} if isinstance(call.arguments, str) else call.arguments
        blocks.append({"type": "tool_use", "id": call.id or f"toolu_{next(ids)}", "name": call.name,
                       "input": arguments, "_text": call.arguments_text()})
    return blocks


def _block_events(index: int, block: Mapping[str, JSON]) -> list[JSON]:
    kind = block["type"]
    deltas: list[JSON]
    if kind == "thinking":
        start: JSON = {"type": "thinking", "thinking": "", "signature": ""}
        deltas = [{"type": "thinking_delta", "thinking": p} for p in _halves(block["thinking"])]
        deltas.append({"type": "signature_delta", "signature": block["signature"]})
    elif kind == "text":
        start = {"type": "text", "text": ""}
        deltas = [{"type": "text_delta", "text": p} for p in _halves(block["text"])]
    else:
        start = {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}
        deltas = [{"type": "input_json_delta", "partial_json": p} for p in _halves(block["_text"])]
    return ([{"type": "content_block_start", "index": index, "content_block": start}]
            + [{"type": "content_block_delta", "index": index, "delta": d} for d in deltas]
            + [{"type": "content_block_stop", "index": index}])


def _detail_pieces(index: int, detail: Mapping[str, JSON]) -> list[JSON]:
    """An OpenRouter reasoning detail as streamed: its text in two deltas, the signature on the last."""
    text = detail.get("text")
    if not isinstance(text, str) or len(text) < 2:
        return [{**detail, "index": index}]
    first, second = _halves(text)
    head = {k: v for k, v in detail.items() if k not in ("text", "signature")}
    tail = {"type": detail.get("type"), "index": index, "text": second, "signature": detail.get("signature")}
    return [{**head, "index": index, "text": first, "signature": None}, tail]


def _halves(text: str) -> list[str]:
    """Text in two pieces, so clients are shown that deltas must be joined."""
    middle = len(text) // 2
    return [piece for piece in (text[:middle], text[middle:]) if piece]
