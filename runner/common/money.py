"""Dollar amounts as text that never contradicts itself: a cap of $0.006 is not shown as "$0.01" beside
a spend of "$0.0060" that then seems to pass it.

`usd(x)`: two decimals from $1 up; below, as many as show two significant digits (at least two), so any
amount is within about 5% of what it reads, and an amount shown next to others keeps its order with them.
"""

from __future__ import annotations

import math

__all__ = ["usd"]


def usd(value: float) -> str:
    if value == 0 or not math.isfinite(value) or abs(value) >= 1:
        return f"${value:,.2f}"
    decimals = max(2, 1 - math.floor(math.log10(abs(value))))
    return f"${value:.{decimals}f}"
