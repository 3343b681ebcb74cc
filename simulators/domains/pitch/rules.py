"""Who the customer is in each window, and how the Oracle bulletin describes them.

One profile is active per window; it switches at every boundary.
- L1 acquisition: four customers, none ever returns.
- L2 drift and recurrence: customers return (`reopen` slice), and one comes back drifted (the power
  user's price taste moves from mid-range to budget).
- L3 reversals: the trendsetter's taste for buzz and popularity flips, flips back, and flips again,
  between visits of other customers.
"""

from __future__ import annotations

from simulators.domains.pitch.attributes import ATTRIBUTES, FULL_DIMS
from simulators.domains.pitch.profiles import BUILTIN, Profile, profile_rules
from simulators.domains.pitch.rubric import RED_LINE
from simulators.domains.pitch.wording import LABELS
from simulators.policy_block import render_policy_block

__all__ = ["PER_WINDOW_SERVING", "PER_WINDOW_TEST", "SCHEDULES", "bulletin", "slice_of", "window_profiles"]

PER_WINDOW_SERVING = 54
PER_WINDOW_TEST = 24

SCHEDULES: dict[str, tuple[str, ...]] = {
    "L1": ("bargain_hunter", "trendsetter", "green_minimalist", "skeptic"),
    "L2": ("cautious_planner", "power_user", "collector", "cautious_planner", "power_user_budget", "collector"),
    "L3": ("trendsetter", "bargain_hunter", "trendsetter_flipped", "bargain_hunter", "trendsetter",
           "green_minimalist", "trendsetter_flipped"),
}


def window_profiles(tier: str) -> list[Profile]:
    return [BUILTIN[key] for key in SCHEDULES[tier]]


def slice_of(tier: str, window: int) -> str:
    """`reopen` when this exact profile was active in an earlier window, else `adapt`."""
    keys = SCHEDULES[tier]
    return "reopen" if keys[window] in keys[:window] else "adapt"


def bulletin(profile: Profile, dims: tuple[str, ...]) -> str:
    """Plain-language description of the active customer plus the complete profile as a block."""
    groups: dict[str, list[str]] = {"Strong likes (+2)": [], "Likes (+1)": [], "Dislikes (-1)": [],
                                    f"Red lines ({RED_LINE}, never bring these up)": []}
    names = list(groups)
    for dim in dims:
        for value in ATTRIBUTES[dim]:
            weight = profile.weight(dim, value)
            if weight:
                index = 0 if weight >= 2 else 1 if weight > 0 else 3 if weight <= RED_LINE else 2
                groups[names[index]].append(LABELS[(dim, value)])
    # The summary is written against all ten dimensions; on a five-dimension tier it would point the
    # writer at facts its sheets never carry, so it is left out there.
    summary = f" {profile.summary}" if dims == FULL_DIMS else ""
    lines = [f"Current customer: {profile.name}.{summary}"]
    lines += [f"{title}: {'; '.join(items)}." for title, items in groups.items() if items]
    lines.append("Everything else is neutral (0).")
    lines.append(
        "State every liked fact this product's sheet carries, leave out every disliked or red-line fact "
        "entirely (denying one still brings it up), and claim nothing the sheet does not state. The block "
        "below is the complete active profile: rule `<attribute>.<value>` -> weight."
    )
    return "\n".join(lines) + "\n\n" + render_policy_block(profile_rules(profile, dims)) + "\n"
