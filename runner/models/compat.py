"""`shiftbench probe MODEL --full`: what an OpenAI-compatible server supports, and the sweep-file
settings that make a run work on it.

Local servers differ in ways a run only finds out hours in (issue 9: llama-cpp-python returns tool
calls only non-streamed and only with `tool_choice: "auto"`, sends no usage when streaming, drops
tool results from its chat template, rejects `"content": null`). So the check asks, through the same
client a run uses (short retry policy, `purpose` agent so agent-scoped `extra_body` applies):

    1  a tool-calling request, not streamed       (again with tool_choice "auto", then "required", when
                                                    no call came: a grammar-constrained server such as
                                                    llama.cpp then forces a call from any model)
    2  the same request, streamed                 (with whatever 1 needed)
    3  a plain request, streamed, asking for usage
    4  a follow-up with a short tool result, then one with a long result: if the template keeps tool
       results, the prompt grows by about the result's size (read from the server's own usage)
    5  the follow-up with the assistant's `content: null` (shiftbench always sends "")
    6  a long prompt (~N tokens by the 4-bytes rule): accepted, or the context limit from its error
    7  a plain request carrying `prompt_cache_key` (OpenAI's cache-routing field): accepted or refused,
       so a sweep file turns it on only where the server takes it (a strict server refuses unknown fields)
    8  what the server publishes about itself (`runner.providers.server_info`): its parallel slots
       (llama.cpp's /props or /slots), so `max_concurrency` matches them, and its context

Each check is one `Finding`; every request the server answered with a 5xx is listed by its mode (a
server error in one mode is easy to miss behind a retry in another); `sweep_settings` turns the
findings into the TOML to paste.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from runner.models.compat_sizes import CONTEXT_PROBE_TOKENS
from runner.models.endpoints import sends_prompt_cache_key
from runner.providers import OpenAICompatClient
from runner.providers.taxonomy import InfrastructureError
from simulators.model_api import ModelRequest, ModelResponse
from simulators.protocol import JSON, Message, ToolCall

__all__ = ["CONTEXT_PROBE_TOKENS", "Compatibility", "Finding", "check_compatibility", "context_limit",
           "render_compatibility", "sweep_settings"]

ANSWER_TOKENS = 128
"""Enough for one small tool call; keeps the check fast on a CPU-only server."""

WEATHER_TOOL: dict[str, JSON] = {"type": "function", "function": {
    "name": "get_weather", "description": "Get the current weather for a city.",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}
SYSTEM = "You are a weather assistant. Answer every question by calling the get_weather tool."
QUESTION = "What is the weather in Paris right now?"
SHORT_RESULT = "Paris: 18 C, light rain."
_FILLER = "The quick brown fox jumps over the lazy dog. "
LONG_RESULT = SHORT_RESULT + " Station log: " + _FILLER * 50
_CONTEXT_PATTERNS = (r"maximum context length is (\d+)", r"context size \((\d+) tokens\)",
                     r"context window of (\d+)", r"n_ctx[\"']?\s*[:=]\s*(\d+)", r"context length of (\d+)")


@dataclass(frozen=True)
class Finding:
    supported: bool | None
    """None: the check could not tell (e.g. no usage to compare)."""
    detail: str


@dataclass
class Compatibility:
    model: str
    findings: dict[str, Finding] = field(default_factory=dict)
    tool_choice: str = ""
    """The `tool_choice` a tool call needed ("auto" or "required"), "" when none was needed."""

    @property
    def needs_tool_choice_auto(self) -> bool:
        return self.tool_choice == "auto"
    context_tokens: int | None = None
    """The server's context limit, when its overflow error names it (or the server publishes it)."""
    slots: int | None = None
    """The server's parallel slots, when it publishes them."""
    server_errors: dict[str, str] = field(default_factory=dict)
    """Request mode -> the server's 5xx answer to it (status and message)."""

    def supports(self, capability: str) -> bool | None:
        finding = self.findings.get(capability)
        return None if finding is None else finding.supported


CAPABILITIES = ("tool calls, not streamed", "tool calls, streamed", "usage when streamed",
                "tool results visible", "content: null accepted", "context length", "prompt_cache_key accepted",
                "parallel slots")
_SERVER_ERROR = re.compile(r"(?:HTTP |error in stream \()5\d\d")


async def check_compatibility(client: OpenAICompatClient, context_probe_tokens: int = CONTEXT_PROBE_TOKENS
                              ) -> Compatibility:
    found = Compatibility(client.name)
    plain = client.variant(stream=False)
    calls = await _tool_call(found, "tool call, not streamed", plain)
    for choice in ("auto", "required"):
        if calls.supported:
            break
        retried = await _tool_call(found, f'tool call, not streamed, tool_choice "{choice}"',
                                   plain.variant(extra_body={"tool_choice": choice}))
        if retried.supported:
            found.tool_choice = choice
            calls = Finding(True, f"only with tool_choice \"{choice}\": {retried.detail}")
    found.findings["tool calls, not streamed"] = calls
    tool_client = plain.variant(extra_body={"tool_choice": found.tool_choice}) if found.tool_choice else plain
    found.findings["tool calls, streamed"] = await _tool_call(found, "tool call, streamed",
                                                              tool_client.variant(stream=True))
    found.findings["usage when streamed"] = await _streamed_usage(found, client.variant(stream=True))
    found.findings["tool results visible"] = await _tool_results_visible(found, tool_client)
    found.findings["content: null accepted"] = await _null_content(found, tool_client)
    found.findings["context length"], found.context_tokens = await _context(found, plain, context_probe_tokens)
    found.findings["prompt_cache_key accepted"] = await _cache_key(found, plain)
    found.findings["parallel slots"] = await _slots(found, client)
    return found


async def _attempt(found: Compatibility, mode: str, call: Callable[[], Awaitable[ModelResponse]]
                   ) -> ModelResponse | InfrastructureError:
    try:
        return await call()
    except InfrastructureError as exc:
        if _SERVER_ERROR.match(str(exc)):
            found.server_errors[mode] = " ".join(str(exc).split())[:140]
        return exc


async def _slots(found: Compatibility, client: OpenAICompatClient) -> Finding:
    published = [info for _, info in await client.server_info() if info.source]
    slots = [info.slots for info in published if info.slots]
    contexts = [info.context_tokens for info in published if info.context_tokens]
    if found.context_tokens is None and contexts:
        found.context_tokens = min(contexts)
        found.findings["context length"] = Finding(False, f"{found.context_tokens:,} tokens (published by the "
                                                          f"server, {published[0].source})")
    if not slots:
        return Finding(None, "not published (llama.cpp's /props and /slots, where a server has them; vLLM "
                             "batches up to its --max-num-seqs)")
    found.slots = min(slots)
    where = ", ".join(sorted({info.source for info in published if info.slots}))
    return Finding(True, f"{found.slots} ({where}): more calls at once only queue at the server")


def _failed(exc: InfrastructureError) -> str:
    return f"{type(exc).__name__}: {str(exc)[:160]}"


async def _tool_call(found: Compatibility, mode: str, client: OpenAICompatClient) -> Finding:
    request = ModelRequest(system=SYSTEM, messages=(Message("user", QUESTION),), tools=(WEATHER_TOOL,),
                           max_output_tokens=ANSWER_TOKENS)
    answer = await _attempt(found, mode, lambda: client.respond(request))
    if isinstance(answer, InfrastructureError):
        return Finding(False, _failed(answer))
    if not answer.turn.tool_calls:
        return Finding(False, f"answered with text, no tool call: {answer.turn.text[:60]!r}")
    call = answer.turn.tool_calls[0]
    one_line = " ".join(call.arguments.split())  # a server may pass on the model's newlines; a row is one line
    return Finding(True, f"{call.name}({one_line[:60]})")


async def _streamed_usage(found: Compatibility, client: OpenAICompatClient) -> Finding:
    request = ModelRequest(system="Reply with one word.", messages=(Message("user", "Say ok."),),
                           max_output_tokens=8)
    answer = await _attempt(found, "plain, streamed, asking for usage", lambda: client.respond(request))
    if isinstance(answer, InfrastructureError):
        return Finding(None, _failed(answer))
    usage = answer.usage
    if usage.estimated:
        return Finding(False, "no usage in the stream: tokens would be estimated from bytes")
    return Finding(True, f"{usage.input_tokens} in, {usage.output_tokens} out")


def _follow_up(result: str, content: str = "") -> ModelRequest:
    call = ToolCall("call_probe_1", "get_weather", '{"city": "Paris"}')
    messages = (Message("user", QUESTION), Message("assistant", content, tool_calls=(call,)),
                Message("tool", result, tool_call_id=call.id))
    return ModelRequest(system=SYSTEM, messages=messages, tools=(WEATHER_TOOL,), max_output_tokens=ANSWER_TOKENS)


async def _tool_results_visible(found: Compatibility, client: OpenAICompatClient) -> Finding:
    short = await _attempt(found, "follow-up, short tool result", lambda: client.respond(_follow_up(SHORT_RESULT)))
    long = await _attempt(found, "follow-up, long tool result", lambda: client.respond(_follow_up(LONG_RESULT)))
    for answer in (short, long):
        if isinstance(answer, InfrastructureError):
            return Finding(None, _failed(answer))
    assert isinstance(short, ModelResponse) and isinstance(long, ModelResponse)
    if short.usage.estimated or long.usage.estimated:
        return Finding(None, "no usage reported, nothing to compare")
    grew = long.usage.input_tokens - short.usage.input_tokens
    added = len(LONG_RESULT.encode()) - len(SHORT_RESULT.encode())
    # At least one token per 8 bytes of the added text: real tokenizers run at 3-5 bytes a token.
    if grew >= added / 8:
        return Finding(True, f"a {added}-byte longer result added {grew} prompt tokens")
    return Finding(False, f"a {added}-byte longer result added {grew} prompt tokens: the chat template "
                          "drops tool results")


async def _null_content(found: Compatibility, client: OpenAICompatClient) -> Finding:
    request = _follow_up(SHORT_RESULT)
    body = client.body(request)
    messages = body["messages"]
    assert isinstance(messages, list)
    for message in messages:
        if isinstance(message, dict) and message.get("role") == "assistant":
            message["content"] = None
    answer = await _attempt(found, "follow-up, content: null",
                            lambda: client.send_body(body, request.max_output_tokens))
    if isinstance(answer, InfrastructureError):
        return Finding(False, f"{_failed(answer)} (shiftbench sends \"\", which works)")
    return Finding(True, "accepted (shiftbench sends \"\" anyway)")


async def _cache_key(found: Compatibility, client: OpenAICompatClient) -> Finding:
    request = ModelRequest(system="Reply with one word.", messages=(Message("user", "Say ok."),), max_output_tokens=8)
    body = {**client.body(request), "prompt_cache_key": "shiftbench-probe"}
    answer = await _attempt(found, "prompt_cache_key", lambda: client.send_body(body, request.max_output_tokens))
    if isinstance(answer, InfrastructureError):
        return Finding(False, _failed(answer))
    return Finding(True, "accepted (whether the server uses it to route calls to its cache is its own)")


async def _context(found: Compatibility, client: OpenAICompatClient, tokens: int) -> tuple[Finding, int | None]:
    filler = _FILLER * max(1, tokens * 4 // len(_FILLER))
    request = ModelRequest(system="Reply with one word.", messages=(Message("user", filler + "\nSay ok."),),
                           max_output_tokens=8)
    answer = await _attempt(found, "long prompt", lambda: client.respond(request))
    if isinstance(answer, InfrastructureError):
        limit = context_limit(str(answer))
        if limit is None:
            return Finding(None, f"a ~{tokens:,}-token prompt failed: {_failed(answer)}"), None
        return Finding(False, f"{limit:,} tokens (a ~{tokens:,}-token prompt was refused)"), limit
    counted = "estimated" if answer.usage.estimated else "counted by the server"
    return Finding(True, f"at least {answer.usage.input_tokens:,} tokens ({counted})"), None


def context_limit(message: str) -> int | None:
    """The context size a server's overflow error names (OpenAI, vLLM, llama.cpp, llama-cpp-python)."""
    for pattern in _CONTEXT_PATTERNS:
        match = re.search(pattern, message)
        if match:
            return int(match.group(1))
    return None


def _mark(supported: bool | None) -> str:
    return {True: "yes", False: "no", None: "?"}[supported]


def render_compatibility(found: Compatibility) -> str:
    width = max(len(c) for c in CAPABILITIES)
    lines = [f"Compatibility of {found.model}:"]
    for capability in CAPABILITIES:
        finding = found.findings.get(capability, Finding(None, "not checked"))
        mark = "max" if capability == "context length" and found.context_tokens else _mark(finding.supported)
        lines.append(f"  {capability:<{width}}  {mark:<3}  {finding.detail}")
    if found.server_errors:
        lines.append("  requests the server answered with a server error (5xx):")
        lines += [f"    {mode}: {answer}" for mode, answer in found.server_errors.items()]
    return "\n".join(lines)


def sweep_settings(name: str, kind: str, model: str, base_url: str, found: Compatibility) -> str:
    """The sweep-file endpoint to use, with a comment on each choice and warnings for what no setting fixes."""
    lines = [f"[endpoints.{_key(name)}]", f'kind = "{kind}"', f'model = "{model}"', f'base_url = "{base_url}"']
    streamed_calls = found.supports("tool calls, streamed")
    plain_calls = found.supports("tool calls, not streamed")
    if plain_calls and not streamed_calls:
        lines.append("stream = false                 # tool calls come only in non-streamed replies")
    elif streamed_calls and found.supports("usage when streamed") is False and plain_calls:
        lines.append("stream = false                 # the stream carries no usage; non-streamed replies do")
    if found.slots:
        lines.append(f"max_concurrency = {found.slots}" + " " * max(1, 15 - len(str(found.slots)))
                     + "# the server's parallel slots: more calls at once only queue there")
    if found.context_tokens:
        per_call = min(4096, max(256, found.context_tokens // 4))
        lines.append(f"# context {found.context_tokens:,} tokens: keep the output cap per call small, "
                     f"e.g. {per_call:,} tokens")
    cache_key = found.supports("prompt_cache_key accepted")
    if cache_key is False and sends_prompt_cache_key(kind, {}):
        lines.append("prompt_cache_key = false        # the server refuses the field")
    elif cache_key and not sends_prompt_cache_key(kind, {}):
        lines.append("# prompt_cache_key = true       # accepted: turn on if the server routes by it (OpenAI does)")
    if found.tool_choice:
        lines += ["", f"[endpoints.{_key(name)}.extra_body.agent]",
                  f'tool_choice = "{found.tool_choice}"' + " " * (10 - len(found.tool_choice))
                  + "# tool calls come only when asked for explicitly"]
    warnings = _warnings(found)
    return "\n".join(lines + [""] + _price(name, base_url) + ([""] + warnings if warnings else []))


_THIS_MACHINE = {"127.0.0.1", "localhost", "::1", "0.0.0.0"}


def _price(name: str, base_url: str) -> list[str]:
    """What the run needs about price: a server on this machine bills nothing, so it is priced at $0
    (without a price the printed table was refused: "no price known for smol"); elsewhere the price is
    the user's to give."""
    header = f'[prices."{_key(name)}"]'
    host = urlsplit(base_url).hostname or ""
    if host in _THIS_MACHINE or host.startswith("127."):
        return [header + " " * max(1, 31 - len(header)) + "# a server on this machine bills nothing",
                "input = 0", "cached_input = 0", "cache_write = 0", "output = 0"]
    return [f"# {header} with its input, cached_input, cache_write and output USD per million tokens (a",
            "# run refuses an unpriced model: its budget cannot cap it), or run with --allow-unpriced"]


def _warnings(found: Compatibility) -> list[str]:
    warnings = []
    if found.supports("tool calls, not streamed") is False and found.supports("tool calls, streamed") is False:
        warnings.append("# WARNING: no tool call came back in any mode: episodes will end at the turn limit.")
    if found.supports("tool results visible") is False:
        warnings.append("# WARNING: the server's chat template drops tool results: the agent never sees what "
                        "its tools return (llama.cpp: start llama-server with --jinja).")
    if found.supports("usage when streamed") is False:
        warnings.append("# note: streamed replies carry no usage; shiftbench estimates their tokens from bytes "
                        "and marks them `estimated` in the journal and report.")
    return warnings


def _key(name: str) -> str:
    """A TOML bare key made from a model name (`openai-compatible:m@http://...` -> `m`)."""
    base = name.split(":", 1)[-1].split("@", 1)[0]
    return re.sub(r"[^A-Za-z0-9_-]+", "-", base).strip("-") or "local"
