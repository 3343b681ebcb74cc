"""The built-in store's catalog: products with variants, written in the public export's shapes.

Every product has at least four in-stock regular variants (so exchanges and modifications always have
a target), two clearance variants and one out-of-stock variant. Ids are 10 digits, as in the export.
"""

from __future__ import annotations

import itertools
import random
from dataclasses import dataclass

from simulators.protocol import JSON

__all__ = ["PRODUCT_SPECS", "Catalog", "IdMint", "build_catalog"]


@dataclass(frozen=True)
class ProductSpec:
    name: str
    category: str
    options: dict[str, tuple[str, ...]]
    low: float
    high: float


def _spec(name: str, category: str, low: float, high: float, **options: tuple[str, ...]) -> ProductSpec:
    return ProductSpec(name, category, dict(options), low, high)


PRODUCT_SPECS: tuple[ProductSpec, ...] = (
    _spec("Rain Shell Jacket", "apparel", 80, 240, color=("olive", "navy", "black"), size=("S", "M", "L", "XL")),
    _spec("Merino Crew Sweater", "apparel", 60, 180, color=("oat", "charcoal", "forest"), size=("S", "M", "L")),
    _spec("Linen Button Shirt", "apparel", 35, 110, color=("white", "sky", "sand"), fit=("slim", "regular"),
          size=("M", "L")),
    _spec("Trail Running Shorts", "apparel", 25, 70, color=("black", "teal"), inseam=("5in", "7in"),
          size=("S", "M", "L")),
    _spec("Wool Beanie", "apparel", 15, 45, color=("grey", "rust", "navy", "cream"), cuff=("folded", "plain")),
    _spec("Wireless Headphones", "electronics", 90, 380, color=("black", "silver", "blue"),
          fit=("over-ear", "on-ear"), anc=("yes", "no")),
    _spec("Smart Watch", "electronics", 150, 450, case=("40mm", "44mm"), band=("sport", "leather", "metal"),
          color=("black", "silver")),
    _spec("Portable Charger", "electronics", 25, 95, capacity=("10000mAh", "20000mAh"), color=("white", "black"),
          ports=("2", "3")),
    _spec("Mechanical Keyboard", "electronics", 70, 240, layout=("full", "tenkeyless"),
          switch=("linear", "tactile", "clicky"), color=("black", "white")),
    _spec("Action Camera", "electronics", 180, 480, resolution=("4K", "5K"), bundle=("basic", "adventure"),
          color=("black", "grey")),
    _spec("Cast Iron Skillet", "home", 25, 90, size=("8in", "10in", "12in"), finish=("seasoned", "enameled"),
          lid=("with lid", "no lid")),
    _spec("Ceramic Dinner Set", "home", 60, 220, pieces=("12-piece", "16-piece"), color=("white", "speckled", "sage"),
          glaze=("matte", "gloss")),
    _spec("Desk Lamp", "home", 30, 120, color=("brass", "black", "white"), power=("corded", "rechargeable"),
          shade=("dome", "cone")),
    _spec("French Press", "home", 20, 75, capacity=("0.6L", "1L"), material=("glass", "steel"),
          color=("silver", "copper")),
    _spec("Throw Pillow Pair", "home", 25, 85, fabric=("velvet", "linen"), color=("mustard", "blush", "slate"),
          size=("18in", "20in")),
    _spec("Facial Serum", "beauty", 18, 85, size=("30ml", "50ml"), formula=("vitamin C", "retinol", "hyaluronic"),
          skin=("dry", "oily")),
    _spec("Hair Dryer", "beauty", 45, 260, power=("1600W", "2000W"), color=("rose", "black", "white"),
          diffuser=("yes", "no")),
    _spec("Electric Toothbrush", "beauty", 30, 180, mode=("3-mode", "5-mode"), color=("white", "black", "mint"),
          heads=("2-pack", "4-pack")),
    _spec("Fragrance Mist", "beauty", 15, 60, scent=("citrus", "cedar", "jasmine", "vanilla"),
          size=("100ml", "200ml")),
    _spec("Camping Tent", "outdoor", 120, 480, capacity=("2-person", "4-person"), season=("3-season", "4-season"),
          color=("green", "orange")),
    _spec("Hiking Backpack", "outdoor", 60, 230, volume=("30L", "45L", "60L"), color=("black", "red", "olive")),
    _spec("Sleeping Bag", "outdoor", 50, 260, rating=("20F", "35F"), fill=("down", "synthetic"), zip=("left", "right")),
    _spec("Trekking Poles", "outdoor", 30, 140, material=("aluminum", "carbon"), grip=("cork", "foam"),
          color=("black", "blue")),
)


class IdMint:
    """Unique random digit strings, so that no id carries information about its task."""

    def __init__(self, rng: random.Random) -> None:
        self._rng = rng
        self._used: set[str] = set()

    def digits(self, count: int, prefix: str = "") -> str:
        while True:
            value = prefix + "".join(str(self._rng.randint(0, 9)) for _ in range(count))
            if value not in self._used:
                self._used.add(value)
                return value


@dataclass(frozen=True)
class Catalog:
    products: dict[str, dict[str, JSON]]
    """product_id -> product record."""

    def by_category(self, category: str) -> list[str]:
        return sorted(pid for pid, product in self.products.items() if product["category"] == category)

    def variants(self, product_id: str, clearance: bool | None = None, available: bool | None = None
                 ) -> list[dict[str, JSON]]:
        found = []
        for variant in self.products[product_id]["variants"].values():
            if clearance is not None and bool(variant["clearance"]) != clearance:
                continue
            if available is not None and bool(variant["available"]) != available:
                continue
            found.append(variant)
        return found


def build_catalog(rng: random.Random, mint: IdMint) -> Catalog:
    products = {}
    for spec in PRODUCT_SPECS:
        product_id = mint.digits(10)
        products[product_id] = {"category": spec.category, "name": spec.name, "product_id": product_id,
                                "variants": _variants(spec, rng, mint)}
    return Catalog(products)


def _variants(spec: ProductSpec, rng: random.Random, mint: IdMint) -> dict[str, JSON]:
    combos = list(itertools.product(*spec.options.values()))
    rng.shuffle(combos)
    combos = combos[:min(len(combos), rng.randint(7, 10))]
    variants = {}
    for index, combo in enumerate(combos):
        item_id = mint.digits(10)
        variants[item_id] = {
            "available": index != 2, "clearance": index < 2, "item_id": item_id,
            "options": dict(zip(spec.options, combo, strict=True)),
            "price": round(rng.uniform(spec.low, spec.high), 2),
        }
    return dict(sorted(variants.items()))
