"""The pitch domain: write a 40-80 word sales pitch for a product sheet, for a customer whose taste
is hidden and changes between windows.

Modules: `attributes` (dimensions and values), `lexicon` (phrases asserting each value, and claims no
attribute covers), `wording` (all surface text), `sheet` (render / read a product sheet),
`profiles` (the built-in and documented customers' weights), `taste` (a customer's weights read
from a prose bulletin, for datasets in the public export's layout), `rules` (which built-in customer
is active per window, Oracle bulletins), `documents` (system prompt, tools, policy.md, workflow.md),
`rubric` (labels + weights -> score), `judge` (the offline `LexiconJudge`, `judge_request`),
`grader`, `composer` + `planner` (the scripted writer), `generator`, `world`, `domain`.

Policy block schema (Oracle bulletins, `policy.md`, and any block a learning method writes):

    ```shiftbench-policy
    {"price.low": 2, "price.mid": 1, "price.high": -3, "buzz.viral": -1, ...}
    ```

- rule id: `<attribute>.<value>`, both as in `attributes.ATTRIBUTES` (e.g. `warranty.final_sale`,
  `buzz.under_the_radar`); ids of any other shape are ignored by the pitch planner.
- rule: the weight of stating that value to the current customer, an integer: +2 strong like,
  +1 like, 0 neutral, -1 dislike, -3 red line. `{"weight": n}` is accepted too.
- The bulletins' and documents' blocks are complete: every value of every dimension of the tier
  (L1: popularity, price, eco, features, buzz; L2/L3: all ten), zeros included, so a later block
  replaces an earlier one rule by rule. A learner may write a partial block: unlisted rules keep the
  documented weight.
- One profile is active per window; the instruction does not name the customer.

The scripted planner states every sheet fact with a positive weight and nothing else.

Grading (FORMAT.md): a judge labels each sheet attribute mentioned / contradicted / not_addressed and
lists invented claims; `rubric.score_verdict` weighs them with the hidden profile:
`evaluator.metadata.profile` when the task carries one (the built-in suite), else the prose bulletin
of the task's window in `windows.json` (the export's layout; see `taste`: "They like: ...",
"They dislike: ...", "(do NOT bring this up)" -> +1 / -1 / -3, matched verbatim to the task's own
fact lines). Bulletin prose cannot mark a strong like, so every like weighs +1 there: full coverage
scores as in the reference, partial coverage may differ slightly from its +2 strong likes. A bulletin
without that structure raises `taste.BulletinError` naming the scenario and window. For an LLM judge:
build its input with `judge_request(task, pitch)` (sheet facts + pitch, never the profile), then score
its verdict with `score_verdict(attribute_weights(environment, task), verdict, word_count)`, or just
pass the judge to `DOMAIN.grade`, which does both and names the judge in `Grade.judge`.
"""

from simulators.domains.pitch.domain import PitchDomain
from simulators.domains.pitch.grader import attribute_weights
from simulators.domains.pitch.judge import LEXICON_JUDGE, LexiconJudge, judge_request
from simulators.domains.pitch.rubric import RubricScore, score_verdict

__all__ = ["DOMAIN", "LEXICON_JUDGE", "LexiconJudge", "PitchDomain", "RubricScore", "attribute_weights",
           "judge_request", "score_verdict"]

DOMAIN = PitchDomain()
