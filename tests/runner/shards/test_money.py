"""Per-shard caps against a second computation in decimal arithmetic: each cap is the budget's share by
projected cost (by turns when nothing is priced) rounded DOWN to a micro-dollar, so the caps never add
up past the budget and fall short of it by less than a micro-dollar a shard: to the cent, they add up
to the budget exactly."""

from __future__ import annotations

import random
from decimal import ROUND_FLOOR, Decimal

from runner.shards.money import caps_by_weight

MICRO = Decimal("0.000001")


def by_hand(budget: float, weights: list[float]) -> list[Decimal]:
    total = sum(Decimal(w) for w in weights)
    return [(Decimal(budget) * Decimal(w) / total).quantize(MICRO, rounding=ROUND_FLOOR) for w in weights]


def test_caps_are_the_budget_shared_by_cost_and_rounded_down_to_a_micro_dollar() -> None:
    assert caps_by_weight(50.0, [1.0, 1.0, 1.0], [9, 9, 9]) == [16.666666] * 3  # sum 49.999998: $50.00 to the cent
    assert caps_by_weight(10.0, [0.0, 0.0], [30, 10]) == [7.5, 2.5]  # nothing priced: by turns
    assert caps_by_weight(1.0, [0.0, 0.0], [0, 0]) == [0.5, 0.5]  # nothing projected: evenly
    assert caps_by_weight(None, [1.0], [1]) == [None]
    generator = random.Random(31)
    for _ in range(300):
        count = generator.randint(1, 40)
        budget = round(generator.uniform(0.01, 5000.0), 2)
        weights = [generator.choice([0.0, generator.uniform(0.0, 3.0), generator.uniform(0.0, 3e-5)])
                   for _ in range(count)]
        if sum(weights) == 0:
            weights[0] = 1.0
        caps = caps_by_weight(budget, weights, [1] * count)
        expected = by_hand(budget, weights)
        assert [Decimal(str(c)) for c in caps] == expected, (budget, weights)
        total = sum(expected)
        assert total <= Decimal(budget) and Decimal(budget) - total < count * MICRO
        assert round(sum(Decimal(str(c)) for c in caps), 2) == Decimal(str(budget))
