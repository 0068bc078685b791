"""The package's layers, checked from the source: no module imports upwards.

engine <- cache <- crawler <- tools (CONTRIBUTING.md). The engine is pure: no
Scrapy, Twisted, I/O or clock; only the crawler layer and the tools import
Scrapy or Twisted. Every import counts, including those inside functions and
under ``TYPE_CHECKING``: a type that points upwards is a dependency too.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "scrapy_rep"
LAYERS = ("engine", "cache", "crawler", "tools")
#: Top-level modules, and the layers each may import.
TOP_LEVEL = {"__init__": {*LAYERS, "signals"}, "signals": set()}
#: Third-party or standard modules a layer may not import.
FORBIDDEN = {
    "engine": {"scrapy", "twisted", "redis", "sqlite3", "asyncio", "socket", "time", "random"},
    "cache": {"scrapy", "twisted"},
    "crawler": set(),
    "tools": set(),
}


def layer_of(path: Path) -> str:
    relative = path.relative_to(PACKAGE)
    return relative.parts[0] if len(relative.parts) > 1 else relative.stem


def imports_of(path: Path) -> list[tuple[int, str]]:
    """(line, dotted module) for every import in a file."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            if node.module == "scrapy_rep":  # from scrapy_rep import signals
                found += [(node.lineno, f"scrapy_rep.{alias.name}") for alias in node.names]
            else:
                found.append((node.lineno, node.module))
    return found


def upward_imports(path: Path) -> list[str]:
    """What ``path`` imports that its layer may not."""
    layer = layer_of(path)
    allowed = TOP_LEVEL.get(layer)
    if allowed is None:
        allowed = set(LAYERS[: LAYERS.index(layer) + 1]) | {"signals"}
        if layer == "engine":
            allowed.discard("signals")
    wrong = []
    for line, module in imports_of(path):
        parts = module.split(".")
        ours = parts[0] == "scrapy_rep" and len(parts) > 1
        if (ours and parts[1] not in allowed) or parts[0] in FORBIDDEN.get(layer, set()):
            wrong.append(f"{path.relative_to(PACKAGE.parent)}:{line} imports {module}")
    return wrong


MODULES = sorted(PACKAGE.rglob("*.py"))


def test_layers_every_module_belongs_to_a_layer() -> None:
    assert MODULES
    for path in MODULES:
        assert layer_of(path) in (*LAYERS, *TOP_LEVEL), path


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_layers_no_upward_import(path: Path) -> None:
    assert upward_imports(path) == []


def test_layers_check_catches_an_upward_import(tmp_path: Path) -> None:
    """The check can fail: an engine module importing the crawler is caught."""
    bad = PACKAGE / "engine" / "_layer_probe.py"
    bad.write_text("from scrapy_rep.crawler.config.settings import Config\nimport scrapy\n")
    try:
        assert upward_imports(bad) == [
            "scrapy_rep/engine/_layer_probe.py:1 imports scrapy_rep.crawler.config.settings",
            "scrapy_rep/engine/_layer_probe.py:2 imports scrapy",
        ]
    finally:
        bad.unlink()


# --- the crawler's wings (CONTRIBUTING.md, "The map") -------------------------------

CRAWLER = PACKAGE / "crawler"
#: In the order they may import each other: a wing imports only the wings
#: before it (and itself), and the ground.
WINGS = ("config", "access", "pace", "page")
#: Top-level crawler modules every wing stands on; they import only config/
#: and each other.
GROUND = {"async_bridge", "errors", "gauges", "internals", "reporting", "robot_parser"}


def crawler_part(module: str) -> str | None:
    """``scrapy_rep.crawler.access.resolver`` -> ``access``; a top-level module
    -> its own name; None outside the crawler."""
    parts = module.split(".")
    if parts[:2] != ["scrapy_rep", "crawler"] or len(parts) < 3:
        return None
    return parts[2]


def wing_imports(path: Path) -> list[str]:
    """What a crawler module imports that its place in the crawler may not."""
    relative = path.relative_to(CRAWLER)
    here = relative.parts[0] if len(relative.parts) > 1 else relative.stem
    if here in WINGS:
        allowed = set(WINGS[: WINGS.index(here) + 1]) | GROUND
    elif here in GROUND:
        allowed = {"config"} | GROUND
    else:
        return []  # the face (middleware, spider middleware, add-on...): anything
    wrong = []
    for line, module in imports_of(path):
        part = crawler_part(module)
        if part is not None and part not in allowed:
            wrong.append(f"{path.relative_to(PACKAGE.parent)}:{line} imports {module}")
    return wrong


CRAWLER_MODULES = sorted(CRAWLER.rglob("*.py"))


@pytest.mark.parametrize("path", CRAWLER_MODULES, ids=lambda p: str(p.relative_to(CRAWLER)))
def test_layers_crawler_wings_import_only_wings_before_them(path: Path) -> None:
    assert wing_imports(path) == []


def test_layers_every_wing_says_what_it_owns_and_may_import() -> None:
    for wing in WINGS:
        doc = ast.get_docstring(ast.parse((CRAWLER / wing / "__init__.py").read_text())) or ""
        assert "May import" in doc or "Imports nothing else" in doc, wing


def test_layers_wing_check_catches_a_wing_importing_the_face() -> None:
    bad = CRAWLER / "access" / "_wing_probe.py"
    bad.write_text(
        "from scrapy_rep.crawler.middleware import RobotsTxtMiddleware\n"
        "from scrapy_rep.crawler.pace.turns import Pace\n"
        "from scrapy_rep.crawler.config.settings import Config\n"
    )
    try:
        assert wing_imports(bad) == [
            "scrapy_rep/crawler/access/_wing_probe.py:1 imports scrapy_rep.crawler.middleware",
            "scrapy_rep/crawler/access/_wing_probe.py:2 imports scrapy_rep.crawler.pace.turns",
        ]
    finally:
        bad.unlink()
