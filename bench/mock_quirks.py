"""Server quirks for the loopback mock: the ways real OpenAI-compatible servers deviate, one switch each.

    async with serve_mock(with_quirks(MODES["llama-cpp-python"])) as mock: ...

`with_quirks(quirks, inner)` wraps a responder (default `tool_loop()`): it refuses what the server
refuses and changes what it sends, the way the server does. The modes reproduce what was seen on
this machine's real servers (issue 9), so `shiftbench probe --full` and the client fixes are tested
against each behaviour without building one:

    rejects_null_content     an assistant turn with `"content": null` -> HTTP 500, a request-validation
                             error in the body (llama-cpp-python's pydantic check, caught as a 500)
    stream_usage             False: `stream_options.include_usage` is ignored, no usage in the stream
    streamed_tool_calls      False: a streamed request with tools gets an empty 200 (the server's own
                             error happens after the headers)
    tool_calls_need_auto     tool calls only with `tool_choice: "auto"`; otherwise a text reply
    tool_calls_need_required tool calls only with `tool_choice: "required"` (llama.cpp with a model whose
                             template has no tool format: its grammar forces the call)
    sees_tool_results        False: the chat template drops `role: tool` messages (not in the prompt,
                             so not in `prompt_tokens` either)
    tool_choice_needs_tools  `tool_choice` without `tools` -> HTTP 400 (a strict server)
    rejects_unknown_fields   a body field outside the chat-completions fields it implements (KNOWN_FIELDS,
                             which has no `prompt_cache_key`) -> HTTP 400, as a request model that forbids
                             extra fields answers
    parses_call_arguments    an assistant tool call in the history whose `arguments` are not JSON -> HTTP
                             500 "Failed to parse tool call arguments as JSON" (llama.cpp, with a template
                             that takes arguments as an object: it parses them before rendering; a reply
                             cut at max_tokens inside a call leaves such arguments)
    context_tokens           a prompt longer than this -> HTTP 400 in `context_error`'s shape

Prompt tokens are counted as ~4 bytes of the visible messages and tools, so a dropped tool result
shows in the usage exactly as it would on the real server.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

import orjson

from bench.mock_provider import JSON, Failure, Recorded, Reply, Responder, Response, tool_loop

__all__ = ["KNOWN_FIELDS", "MODES", "Quirks", "context_failure", "visible_prompt_tokens", "with_quirks"]

ContextError = Literal["openai", "llama.cpp"]

# What llama-cpp-python's server answers for a request its pydantic model refuses (str() of the
# validation error, in an OpenAI-style error with type internal_server_error, HTTP 500).
NULL_CONTENT_ERROR = ("[{'type': 'string_type', 'loc': ('body', 'messages', 2, 'typed-dict', 'content'), "
                      "'msg': 'Input should be a valid string', 'input': None}]")

# llama.cpp's words (common/chat.cpp) when an assistant tool call's `arguments` string is not JSON.
CALL_ARGUMENTS_ERROR = ("Failed to parse tool call arguments as JSON: [json.exception.parse_error.101] parse error "
                        "at line 1, column 26: syntax error while parsing value - unexpected end of input; "
                        "expected '[', '{', or a literal")


KNOWN_FIELDS = frozenset({
    "model", "messages", "tools", "tool_choice", "parallel_tool_calls", "max_tokens", "max_completion_tokens",
    "stream", "stream_options", "temperature", "top_p", "stop", "seed", "n", "response_format",
    "presence_penalty", "frequency_penalty", "logit_bias", "user"})
"""The fields a strict server of the mock implements: the long-standing chat-completions ones."""


@dataclass(frozen=True)
class Quirks:
    rejects_null_content: bool = False
    stream_usage: bool = True
    streamed_tool_calls: bool = True
    tool_calls_need_auto: bool = False
    tool_calls_need_required: bool = False
    sees_tool_results: bool = True
    tool_choice_needs_tools: bool = False
    rejects_unknown_fields: bool = False
    parses_call_arguments: bool = False
    context_tokens: int | None = None
    context_error: ContextError = "openai"


MODES: Mapping[str, Quirks] = {
    "compliant": Quirks(),
    "strict": Quirks(tool_choice_needs_tools=True, rejects_unknown_fields=True, context_tokens=32_768),
    "llama.cpp": Quirks(parses_call_arguments=True, context_tokens=8_192, context_error="llama.cpp"),
    "llama.cpp-small-model": Quirks(tool_calls_need_required=True, parses_call_arguments=True, context_tokens=8_192,
                                    context_error="llama.cpp"),
    "llama-cpp-python": Quirks(rejects_null_content=True, stream_usage=False, streamed_tool_calls=False,
                               tool_calls_need_auto=True, sees_tool_results=False, context_tokens=2_048),
}


def with_quirks(quirks: Quirks, inner: Responder | None = None) -> Responder:
    answer = inner or tool_loop()

    def respond(request: Recorded) -> Response:
        refused = _refusal(request, quirks)
        if refused is not None:
            return refused
        body = request.body if isinstance(request.body, dict) else {}
        if body.get("tools") and request.streaming and not quirks.streamed_tool_calls:
            return Reply(end_after=0)
        reply = answer(request)
        if not isinstance(reply, Reply):
            return reply
        needed = "auto" if quirks.tool_calls_need_auto else "required" if quirks.tool_calls_need_required else ""
        if reply.tool_calls and needed and body.get("tool_choice") != needed:
            reply = dataclasses.replace(reply, tool_calls=(), text="I would look that up.")
        usage = dataclasses.replace(reply.usage, input_tokens=visible_prompt_tokens(request, quirks))
        return dataclasses.replace(reply, usage=usage, stream_usage=quirks.stream_usage and reply.stream_usage)

    return respond


def _refusal(request: Recorded, quirks: Quirks) -> Failure | None:
    body = request.body if isinstance(request.body, dict) else {}
    messages = body.get("messages") or []
    if quirks.rejects_null_content and any(m.get("role") == "assistant" and m.get("content") is None
                                           for m in messages):
        return Failure(500, body={"error": {"message": NULL_CONTENT_ERROR, "type": "internal_server_error",
                                            "param": None, "code": None}})
    unknown = sorted(set(body) - KNOWN_FIELDS) if quirks.rejects_unknown_fields else []
    if unknown:
        return Failure(400, body={"error": {"type": "invalid_request_error", "param": unknown[0], "code": None,
                                            "message": f"{unknown[0]}: Extra inputs are not permitted"}})
    if quirks.parses_call_arguments and any(not _is_json(c.get("function", {}).get("arguments", "{}"))
                                            for m in messages for c in m.get("tool_calls") or ()):
        return Failure(500, body={"error": {"code": 500, "type": "server_error", "message": CALL_ARGUMENTS_ERROR}})
    if quirks.tool_choice_needs_tools and "tool_choice" in body and not body.get("tools"):
        return Failure(400, message="\"tool_choice\" is only allowed when \"tools\" are specified")
    tokens = visible_prompt_tokens(request, quirks)
    if quirks.context_tokens is not None and tokens >= quirks.context_tokens:
        return context_failure(tokens, quirks.context_tokens, quirks.context_error)
    return None


def _is_json(arguments: object) -> bool:
    if not isinstance(arguments, str):
        return True
    try:
        orjson.loads(arguments)
    except orjson.JSONDecodeError:
        return False
    return True


def visible_prompt_tokens(request: Recorded, quirks: Quirks) -> int:
    """~4 bytes a token of what the chat template renders: the messages it keeps, and the tools."""
    body = request.body if isinstance(request.body, dict) else {}
    messages = [m for m in body.get("messages") or ()
                if quirks.sees_tool_results or m.get("role") != "tool"]
    rendered = orjson.dumps({"messages": messages, "tools": body.get("tools") or []})
    return max(1, len(rendered) // 4)


def context_failure(tokens: int, limit: int, shape: ContextError) -> Failure:
    """The overflow error in the server's own words: OpenAI's (also vLLM's and llama-cpp-python's
    wording) or llama.cpp's `exceed_context_size_error` with `n_ctx`."""
    body: JSON
    if shape == "llama.cpp":
        body = {"error": {"code": 400, "type": "exceed_context_size_error", "n_prompt_tokens": tokens,
                          "n_ctx": limit,
                          "message": f"request ({tokens} tokens) exceeds the available context size "
                                     f"({limit} tokens), try increasing it"}}
    else:
        body = {"error": {"type": "invalid_request_error", "param": "messages", "code": "context_length_exceeded",
                          "message": f"This model's maximum context length is {limit} tokens. However, your "
                                     f"messages resulted in {tokens} tokens. Please reduce the length of the "
                                     "messages."}}
    return Failure(400, body=body)
