"""docs/architecture.md's layers hold: no module imports one above it, and no import circle.

The import graph is read from the source (every ``import``/``from`` of a ``verl_rewards``
module, at module level or inside a function; imports under ``if TYPE_CHECKING:`` are
annotations only and left out)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "verl_rewards"


def _layers() -> dict[str, tuple[int, int]]:
    """``{top-level module or package name: (layer, position in the table)}``."""
    block = re.findall(r"```\n(.*?)```", (ROOT / "docs/architecture.md").read_text(), flags=re.S)[0]
    found: dict[str, tuple[int, int]] = {}
    layer = -1
    for line in block.splitlines():
        row = re.match(r"^(L(\d+))?\s{0,4}(\S+?)(\.py|/)\s", line)
        if not row:
            continue
        if row.group(2) is not None:
            layer = int(row.group(2))
        if (PACKAGE / f"{row.group(3)}{row.group(4)}".rstrip("/")).exists():
            found[row.group(3)] = (layer, len(found))
    return found


def _top(module: str) -> str:
    """``verl_rewards.executors.ray_pool`` -> ``executors``."""
    return module.split(".")[1]


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _type_checking_lines(tree: ast.AST) -> set[int]:
    lines: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for inner in node.body:
                lines.update(range(inner.lineno, (inner.end_lineno or inner.lineno) + 1))
    return lines


def _imports(path: Path) -> set[str]:
    """The ``verl_rewards`` modules ``path`` imports at run time."""
    tree = ast.parse(path.read_text())
    skip = _type_checking_lines(tree)
    name = _module_name(path)
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    found: set[str] = set()
    for node in ast.walk(tree):
        if getattr(node, "lineno", None) in skip:
            continue
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.startswith("verl_rewards."))
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                target = ".".join([*base, *([node.module] if node.module else [])])
            else:
                target = node.module or ""
            if target.startswith("verl_rewards."):
                found.add(target)
                found.update(f"{target}.{a.name}" for a in node.names
                             if (PACKAGE.parent / f"{target}.{a.name}".replace(".", "/")).with_suffix(".py").exists())
    return {m for m in found if m.count(".") >= 1}


def _graph() -> dict[str, set[str]]:
    return {_module_name(p): _imports(p) for p in PACKAGE.rglob("*.py")}


def test_every_module_is_in_a_layer():
    layers = _layers()
    tops = {_top(m) for m in _graph() if m != "verl_rewards" and not m.startswith("verl_rewards.__")}
    assert sorted(tops - set(layers)) == []


def test_no_module_imports_one_above_it():
    layers = _layers()
    upward = []
    for module, imported in sorted(_graph().items()):
        if module == "verl_rewards" or _top(module).startswith("__"):
            continue  # the package's lazy re-exports
        here = layers[_top(module)]
        for target in sorted(imported):
            there = layers[_top(target)]
            if _top(target) != _top(module) and there > here:
                upward.append(f"{module} -> {target}")
    assert upward == []


def test_no_import_circle_between_top_level_modules():
    edges = {}
    for module, imported in _graph().items():
        if module == "verl_rewards" or _top(module).startswith("__"):
            continue
        edges.setdefault(_top(module), set()).update(
            _top(t) for t in imported if _top(t) != _top(module))
    circles = []

    def visit(node: str, path: list[str]) -> None:
        for nxt in sorted(edges.get(node, ())):
            if nxt in path:
                circles.append(" -> ".join([*path[path.index(nxt):], nxt]))
            elif len(path) < 12:
                visit(nxt, [*path, nxt])

    for start in sorted(edges):
        visit(start, [start])
    assert sorted(set(circles)) == []


def test_no_module_imports_a_private_module_of_another_folder():
    # What two parts share is public (pypa/build's way): serve reads the skip table from
    # verl_rewards.hosts and builds OpenRLHF samples with verl_rewards.samples.
    reaching = []
    for module, imported in sorted(_graph().items()):
        for target in sorted(imported):
            parts = target.split(".")
            private = [i for i, part in enumerate(parts) if part.startswith("_") and i >= 2]
            if private and not module.startswith(".".join(parts[: private[0]]) + "."):
                reaching.append(f"{module} -> {target}")
    assert reaching == []
