"""One name, one thing: no two classes or type aliases of the package share a
name (CONTRIBUTING.md, "One name for one idea").

A reader who searches for a name should land on one definition. Read from the
source with ``ast``: every class (nested ones too) and every module-level type
alias (``X = Callable[...]``, ``X = A | B``, ``X: TypeAlias = ...``), private
names included.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "scrapy_rep"

#: Pairs known to share a name, each with the change that ends it (none now).
KNOWN: dict[str, frozenset[str]] = {}


def _capitalised(name: str) -> bool:
    """CapWords, as classes and type aliases are named; not a CONSTANT."""
    bare = name.lstrip("_")
    return bare[:1].isupper() and not bare.isupper()


def _is_type(value: ast.expr | None) -> bool:
    """An expression that names a type: ``A``, ``a.B``, ``A[...]``, ``A | B``."""
    if isinstance(value, (ast.Name, ast.Attribute, ast.Subscript)):
        return True
    return isinstance(value, ast.BinOp) and isinstance(value.op, ast.BitOr)


def definitions(source: str) -> list[str]:
    """The classes and type aliases a module defines, by name."""
    tree = ast.parse(source)
    found = [node.name for node in ast.walk(tree) if isinstance(node, ast.ClassDef)]
    for node in tree.body:
        if isinstance(node, ast.Assign) and _is_type(node.value):
            targets = [t.id for t in node.targets if isinstance(t, ast.Name)]
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            alias = "TypeAlias" in ast.unparse(node.annotation)
            targets = [node.target.id] if alias else []
        else:
            continue
        found += [name for name in targets if _capitalised(name)]
    return found


def shared_names() -> dict[str, set[str]]:
    where: defaultdict[str, set[str]] = defaultdict(set)
    for path in sorted(PACKAGE.rglob("*.py")):
        for name in definitions(path.read_text(encoding="utf-8")):
            where[name].add(path.relative_to(PACKAGE).as_posix())
    return {name: paths for name, paths in where.items() if len(paths) > 1}


def test_definitions_finds_classes_and_aliases_not_constants() -> None:
    source = (
        "from typing import Callable, TypeAlias\n"
        "class Pace:\n    class _Inner: ...\n"
        "Sleep = Callable[[float], None]\n"
        "Effect = Use | Save\n"
        "Row: TypeAlias = tuple[str, float]\n"
        "MAX_WAIT = 600.0\n"
        "Default = Pace()\n"
        "logger = get_logger()\n"
    )
    assert sorted(definitions(source)) == ["Effect", "Pace", "Row", "Sleep", "_Inner"]


def test_no_two_classes_or_aliases_share_a_name() -> None:
    shared = {
        name: sorted(paths) for name, paths in shared_names().items() if KNOWN.get(name) != paths
    }
    assert shared == {}, "one name, one thing: rename one of each (CONTRIBUTING.md)"
