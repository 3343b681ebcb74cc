"""The banking domain: risk review of card transactions, credit-limit increases and transfers.

Scenarios `banking_l1` (numeric boundaries), `banking_l2` (composed boundaries, ranked alternatives
and payment batches) and `banking_l3` (L2 with reversals). Modules, one job each:

    vocabulary kinds, actions, reason codes, the rule schema and its conditions, `Verdict`: the
               one public module methods import instead of restating them
    rules      policy model: rules applied to requests, first-match verdict
    records    world tables, id patterns, what a case refers to
    resolve    case forms (single / legs / batch) -> outcome -> the one decision tool call
    world      one episode's world and its tools, with the public reference's semantics
    grader     replay grading
    planner    the scripted agent's next call
    timeline   documented and active policy per tier and window
    entities   merchants, payees, accounts, identifiers
    tickets    case builders per family
    wording    instruction phrasings
    documents  system prompt, policy manual, workflow guide, oracle bulletins
    tools      tool schemas
    generator  the built-in scenarios

Policy block schema (what policy.md's block, the oracle bulletins and learning methods write): a
flat JSON object, rule id -> rule. A later block replaces a rule of an earlier one by id; to switch
a documented rule off, write it with `"enabled": false`.

    {
      "<rule_id>": {
        "applies_to": "card_transaction" | "limit_increase" | "outbound_transfer",
        "order": <number>,          checking order within applies_to (lower first; ties by rule id)
        "when": {                   every listed condition must hold; {} matches every request
          "category_in": [str],                merchant category (card transactions)
          "region_in": [str],                  merchant region: "domestic" | "overseas"
          "verification_in": [str],            account verification: "basic" | "verified"
          "standing_in": [str],                account standing: "good" | "recent_chargeback"
          "tenure_years_under": <number>,      account tenure_years < n
          "payee_added_days_under": <number>,  payee added fewer than n days ago
          "payee_flag_in": [str],              payee `restrictions` holds one of these flags
          "payee_id_in": [str],                the payee is one of these ids
          "amount_over": <number>,             amount > x (charge, requested limit, or transfer amount)
          "today_total_plus_amount_over": <number>   account today_total + amount > x
        },
        "action": "deny" | "escalate",
        "reason": <reason code>,     corridor_blocked, verification_required, over_limit, daily_cap,
                                     account_standing, cap_exceeded, restricted_payee,
                                     new_payee_review, reportable_amount
        "enabled": true | false      optional, default true
      }
    }

Semantics: within the rules that apply to a request, the first matching one (by order) decides; a
request no rule catches is approved. A rule with an unknown condition, action or shape is ignored.
Ranked alternatives (`legs`): carry out the first leg the rules approve (execute_leg); if none is
approvable, the case takes leg 1's disposition and any reason of a blocked leg with that same
disposition is accepted. Payment batches (`lines`): each line is decided on its own (decide_batch).
Rule ids used by the built-in suite: txn_corridor, txn_gift_card_verification, txn_daily_cap,
txn_limit_electronics, txn_limit_travel, limit_standing, limit_new_account_cap, limit_cap,
transfer_watchlist, transfer_new_payee, transfer_reporting.
"""

from simulators.domains.banking.domain import BankingDomain

__all__ = ["DOMAIN", "BankingDomain"]

DOMAIN = BankingDomain()
