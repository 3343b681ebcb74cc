"""The layout holds its shape: imports point runner -> methods -> simulators; inside runner/ every module
lives in a package ("room") and the arrows between rooms run one way (no cycle), and no source module is
over 400 lines.

Run as a script to draw the house of any checkout (rooms by floor, arrows, arrows that run back up):

    python -m tests.test_layout [ROOT]

A room's floor is one above the highest room it imports (floor 0 imports no other room). A cycle makes
floors ambiguous: its rooms are then ordered to leave the fewest arrows running back up (exactly for
small cycles, greedily for large ones), and those arrows are counted.
"""

from __future__ import annotations

import ast
import itertools
import re
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TOPS = ("simulators", "methods", "runner")
"""Bottom to top: a package may import the ones before it, never one after it."""
MAX_LINES = 400
Graph = Mapping[str, set[str]]


def modules(root: Path, top: str) -> Iterable[tuple[str, Path]]:
    for path in sorted((root / top).rglob("*.py")):
        parts = path.relative_to(root).with_suffix("").parts
        yield ".".join(parts[:-1] if parts[-1] == "__init__" else parts), path


def imported(path: Path, name: str) -> set[str]:
    """Every module name a module imports, at the top or inside a function, relative imports resolved."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = ".".join(package.split(".")[: len(package.split(".")) - node.level + 1]) if node.level else ""
            target = ".".join(part for part in (base, node.module or "") if part)
            found.add(target)
            found.update(f"{target}.{alias.name}" for alias in node.names)
    return found


def room_of(module: str) -> str | None:
    """runner.cost.budget -> runner.cost; runner/__init__ itself is the house, not a room."""
    parts = module.split(".")
    return ".".join(parts[:2]) if parts[0] == "runner" and len(parts) > 1 else None


def house(root: Path) -> tuple[list[str], dict[str, set[str]]]:
    """The rooms of runner/ and the arrows between them (room -> rooms it imports)."""
    arrows: dict[str, set[str]] = {}
    for name, path in modules(root, "runner"):
        room = room_of(name)
        if room is None:
            continue
        targets = {room_of(m) for m in imported(path, name)}
        arrows.setdefault(room, set()).update(t for t in targets if t and t != room)
    rooms = sorted(arrows)
    return rooms, {room: {t for t in arrows[room] if t in arrows} for room in rooms}


def cycles(graph: Graph) -> list[list[str]]:
    """Strongly connected components of more than one room (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(room: str) -> None:
        index[room] = low[room] = len(index)
        stack.append(room)
        for target in sorted(graph[room]):
            if target not in index:
                visit(target)
                low[room] = min(low[room], low[target])
            elif target in stack:
                low[room] = min(low[room], index[target])
        if low[room] == index[room]:
            component = []
            while (top := stack.pop()) != room:
                component.append(top)
            component.append(room)
            if len(component) > 1:
                found.append(sorted(component))

    for room in sorted(graph):
        if room not in index:
            visit(room)
    return found


def back_arrows(graph: Graph) -> set[tuple[str, str]]:
    """The fewest arrows whose removal leaves no cycle, chosen per cycle by ordering its rooms."""
    dropped: set[tuple[str, str]] = set()
    for component in cycles(graph):
        inner = [(a, b) for a in component for b in graph[a] if b in component]
        orders = (itertools.permutations(component) if len(component) <= 8 else [_greedy_order(component, inner)])
        best = min(({(a, b) for a, b in inner if order.index(b) < order.index(a)} for order in map(list, orders)),
                   key=len)
        dropped |= best
    return dropped


def _greedy_order(component: list[str], inner: list[tuple[str, str]]) -> tuple[str, ...]:
    """Lower floors first: rooms importing the fewest others of the cycle go down first."""
    left, order = set(component), []
    while left:
        room = min(left, key=lambda r: (sum(a == r and b in left for a, b in inner), r))
        order.append(room)
        left.remove(room)
    return tuple(order)


def floors(graph: Graph) -> dict[str, int]:
    """Each room's floor, once the back arrows are set aside."""
    dropped = back_arrows(graph)
    floor: dict[str, int] = {}

    def height(room: str) -> int:
        if room not in floor:
            floor[room] = 1 + max((height(t) for t in graph[room] if (room, t) not in dropped), default=-1)
        return floor[room]

    for room in graph:
        height(room)
    return floor


def stated_arrows(root: Path, room: str) -> set[str] | None:
    """The packages a package's docstring says it imports (its "Arrows:" sentence), None when it says nothing."""
    doc = ast.get_docstring(ast.parse((root / room.replace(".", "/") / "__init__.py").read_text("utf-8"))) or ""
    found = re.search(r"^Arrows: (.*?)\.(?:\s|$)", doc, re.M | re.S)
    if found is None:
        return None
    sentence = re.sub(r"\([^)]*\)", "", " ".join(found.group(1).split()))
    if sentence.startswith("none"):
        return set()
    listed = sentence.partition("->")[2].rpartition(":")[2]
    return {f"runner.{name.strip()}" for name in listed.split(",")}


def long_modules(root: Path) -> dict[str, int]:
    lengths = {str(path.relative_to(root)): len(path.read_text(encoding="utf-8").splitlines())
               for top in TOPS for _, path in modules(root, top)}
    return {path: n for path, n in sorted(lengths.items()) if n > MAX_LINES}


def draw(root: Path) -> str:
    rooms, graph = house(root)
    loose = [name for name, path in modules(root, "runner") if name.count(".") == 1 and path.name != "__init__.py"]
    floor = floors(graph)
    lines = [f"{root}: {len(rooms)} rooms ({len(rooms) - len(loose)} packages, {len(loose)} loose modules), "
             f"{sum(map(len, graph.values()))} arrows, {len(back_arrows(graph))} back up, "
             f"{max(floor.values()) + 1} floors, cycles: {cycles(graph) or 'none'}"]
    for level in range(max(floor.values()), -1, -1):
        for room in sorted(r for r in rooms if floor[r] == level):
            lines.append(f"  {level:2d}  {room.removeprefix('runner.'):<14} -> "
                         f"{', '.join(sorted(t.removeprefix('runner.') for t in graph[room])) or '-'}")
    lines.append(f"modules over {MAX_LINES} lines: {long_modules(root) or 'none'}")
    return "\n".join(lines)


# ------------------------------------------------------------------------------------------- the tests

def test_imports_point_runner_to_methods_to_simulators() -> None:
    wrong = {}
    for rank, top in enumerate(TOPS):
        above = TOPS[rank + 1:]
        for name, path in modules(ROOT, top):
            bad = sorted(m for m in imported(path, name) if m.split(".")[0] in above)
            if bad:
                wrong[name] = bad
    assert not wrong, f"imports that point up (simulators < methods < runner): {wrong}"


def test_the_runner_is_rooms_whose_arrows_run_one_way() -> None:
    loose = [name for name, path in modules(ROOT, "runner") if name.count(".") == 1 and path.name != "__init__.py"]
    assert not loose, f"runner/ modules outside any package: {loose}; put each in the package of its concern"
    _, graph = house(ROOT)
    assert not cycles(graph), f"import cycles between runner's packages: {cycles(graph)}"


def test_every_package_states_its_arrows_and_they_are_its_imports() -> None:
    rooms, graph = house(ROOT)
    stated = {room: stated_arrows(ROOT, room) for room in rooms}
    assert not [room for room, arrows in stated.items() if arrows is None], "a package docstring without Arrows:"
    wrong = {room: {"says": sorted(stated[room] or ()), "imports": sorted(graph[room])}
             for room in rooms if stated[room] != graph[room]}
    assert not wrong, f"package docstrings whose Arrows: line is not what the package imports: {wrong}"


def test_the_architecture_page_and_the_readme_show_the_house_as_it_is() -> None:
    rooms, graph = house(ROOT)
    floor = floors(graph)
    page = (ROOT / "docs" / "architecture.md").read_text("utf-8")
    rows = re.findall(r"^\| (\d+) \| `(\w+)` \|.*\| ([\w, ]+) \|$", page, re.M)
    shown = {f"runner.{name}": (int(level), set() if imports == "none" else
                                {f"runner.{n.strip()}" for n in imports.split(",")}) for level, name, imports in rows}
    assert shown == {room: (floor[room], graph[room]) for room in rooms}, "docs/architecture.md's table is stale"
    readme = (ROOT / "README.md").read_text("utf-8").partition("## Layout")[2]
    assert not [r for r in rooms if not re.search(rf"\b{r.removeprefix('runner.')}\b", readme)], \
        "a package the README's Layout does not name"


def test_no_source_module_is_over_400_lines() -> None:
    assert not long_modules(ROOT), f"split these along a seam they already have: {long_modules(ROOT)}"


def test_the_cycle_finder_sees_a_cycle_and_counts_its_back_arrow() -> None:
    # The two tests above pass on an acyclic house whatever these functions return; this proves they can fail.
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert cycles(graph) == [["a", "b", "c"]]
    assert len(back_arrows(graph)) == 1
    assert floors({"a": {"b"}, "b": set(), "c": {"a", "b"}}) == {"a": 1, "b": 0, "c": 2}


if __name__ == "__main__":
    print(draw(Path(sys.argv[1]).resolve() if len(sys.argv) > 1 else ROOT))
