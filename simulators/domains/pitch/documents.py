"""The built-in suite's environment text: system prompt, tool schemas, `policy.md`, `workflow.md`.

The documents describe the documented customer (`profiles.DOCUMENTED`), which no window's customer
is: they recommend hype, popularity and feel-good stories that most current customers dislike, and
forbid price talk that some of them want. `policy.md` ends with that profile as one policy block, the
same schema the Oracle bulletins and learning methods use.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from simulators.domains.pitch.attributes import ATTRIBUTES
from simulators.domains.pitch.profiles import DOCUMENTED, Profile, profile_rules
from simulators.domains.pitch.rubric import RED_LINE
from simulators.domains.pitch.wording import LABELS
from simulators.policy_block import render_policy_block
from simulators.protocol import JSON

__all__ = ["SYSTEM_PROMPT", "TOOLS", "policy_document", "workflow_document"]

SYSTEM_PROMPT = """\
You are a sales copywriter. Each task shows you one product sheet; write ONE persuasive pitch of 40-80 \
words for it.

The customer you write for is not named. The same fact can win one customer over and put another off, so \
choose which sheet facts to state and which to leave out. Customers' tastes change over time, in either \
direction: a fact that worked may start to hurt, and one you learned to avoid may become the one that \
lands. You are judged against the customer of the moment.

Be truthful. State facts only as the sheet gives them. Never claim anything the sheet does not state \
(specifications, awards, shipping, discounts, or facts about attributes the sheet does not list), and \
never state the opposite of a sheet fact. A denied or reversed fact still counts as raising that topic. \
When a fact would put the customer off, leave it out: silence is allowed, untruth is not.

Hard limit: a pitch longer than 90 words scores at most 25/100.

# Protocol
You act only through tool calls, exactly one per turn; a turn with several calls runs none of them. \
Tool arguments are a JSON object following the tool's schema. `read_docs(doc, section?)` opens the \
documents `policy` and `workflow`. Submit with finish(pitch="<your 40-80 word pitch>"); that ends the \
episode.
"""

TOOLS: tuple[Mapping[str, JSON], ...] = (
    {
        "type": "function",
        "function": {
            "name": "read_docs",
            "description": "Read a document: `policy` (whom we sell to and what to stress) or `workflow` "
                           "(how to write a pitch). Give `section` to read only the part under that heading.",
            "parameters": {
                "type": "object",
                "properties": {
                    "doc": {"type": "string", "enum": ["policy", "workflow"], "description": "Document name."},
                    "section": {"type": "string", "description": "A heading of the document (optional)."},
                },
                "required": ["doc"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "finish",
            "description": "Hand in the pitch. The episode ends here, so make this the only call of its "
                           "turn and call it once.",
            "parameters": {
                "type": "object",
                "properties": {"pitch": {"type": "string", "description": "Your 40-80 word pitch."}},
                "required": ["pitch"],
            },
        },
    },
)


def policy_document(dims: tuple[str, ...]) -> str:
    """The documented pitch policy for a tier's attribute set, ending with its policy block."""
    return f"""\
# Pitch policy

## Who we sell to
Our typical customer is {DOCUMENTED.name}. {DOCUMENTED.summary}

## What to stress
{_listing(DOCUMENTED, dims, lambda w: w > 0)}

## What to leave out
{_listing(DOCUMENTED, dims, lambda w: RED_LINE < w < 0)}
Never mention: {_inline(DOCUMENTED, dims, lambda w: w <= RED_LINE) or "nothing in particular"}.

## Length and truthfulness
Pitches run 40-80 words; past 90 words a pitch scores at most 25/100. Use only facts on the product
sheet; a made-up or reversed fact costs more than it could ever win.

## Customer profile
The documented customer as machine-readable rules: rule `<attribute>.<value>` -> weight (+2 strong
like, +1 like, 0 neutral, -1 dislike, -3 red line). Attributes: {", ".join(dims)}.

{render_policy_block(profile_rules(DOCUMENTED, dims))}
"""


def workflow_document() -> str:
    return """\
# Pitch workflow

## Steps
1. Read the product sheet in the request: its name, category and fact lines.
2. Weigh each fact against the customer profile in the policy document.
3. Write one pitch that states every liked fact, in the sheet's own terms or a faithful paraphrase.
4. Leave out disliked facts completely; do not deny or soften them either.
5. Add nothing the sheet does not state. Keep to 40-80 words.
6. Submit with finish(pitch=...).

## Tone
Warm and concrete. Mood words are fine ("worth a closer look"); claims need a sheet fact behind them.
"""


def _listing(profile: Profile, dims: tuple[str, ...], keep: Callable[[int], bool]) -> str:
    items = _labels(profile, dims, keep)
    return "\n".join(f"- {item}" for item in items) if items else "- nothing in particular"


def _inline(profile: Profile, dims: tuple[str, ...], keep: Callable[[int], bool]) -> str:
    return "; ".join(_labels(profile, dims, keep))


def _labels(profile: Profile, dims: tuple[str, ...], keep: Callable[[int], bool]) -> list[str]:
    return [LABELS[(d, v)] for d in dims for v in ATTRIBUTES[d] if keep(profile.weight(d, v))]
