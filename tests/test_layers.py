"""The package's layers, checked from the source: no module imports upwards.

engine <- cache <- crawler <- tools (CONTRIBUTING.md). The engine is pure: no
Scrapy, Twisted, I/O or clock; only the crawler layer and the tools import
Scrapy or Twisted. Every import counts, including those inside functions and
under ``TYPE_CHECKING``: a type that points upwards is a dependency too.
Inside a layer: the crawler's wings, the storage's backends and the tools'
parts, each in its own order (CONTRIBUTING.md, "The map").
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
GROUND = {
    "async_bridge",
    "decision_log",
    "errors",
    "gauges",
    "internals",
    "reporting",
    "robot_parser",
}


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


# --- the store's backends (cache/storage/__init__.py) ---------------------------------

STORAGE = PACKAGE / "cache" / "storage"
#: What every backend shares: each imports only the others of this set.
STORAGE_SHARED = {"protocol", "errors", "leases", "forgotten", "parsed", "scanned", "defaults"}
#: Each part of the storage, and the parts it may import besides the shared
#: modules and itself: backends never import each other; ``fallback`` wraps
#: ``memory`` and reaches its primary through ``protocol``; only the factory
#: (``__init__``) imports them all.
STORAGE_PARTS: dict[str, set[str]] = {
    **{shared: set() for shared in STORAGE_SHARED},
    "memory": set(),
    "sqlite": set(),
    "redis": set(),
    "fallback": {"memory"},
    "__init__": {"memory", "sqlite", "redis", "fallback"},
}


def imported_modules(path: Path) -> list[tuple[int, str]]:
    """``imports_of``, with ``from PKG import module`` read as ``PKG.module``."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and not node.level:
            base = PACKAGE.parent.joinpath(*node.module.split("."))
            for alias in node.names:
                child = base / alias.name
                is_module = child.is_dir() or child.with_suffix(".py").is_file()
                found.append(
                    (node.lineno, f"{node.module}.{alias.name}" if is_module else node.module)
                )
        elif isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
    return found


def part_of(module: str, package: str) -> str | None:
    """The part of ``package`` (dotted) that ``module`` belongs to: its first name
    below it, ``__init__`` for the package itself, None outside."""
    parts, base = module.split("."), package.split(".")
    if parts[: len(base)] != base:
        return None
    return parts[len(base)] if len(parts) > len(base) else "__init__"


def part_of_path(path: Path, folder: Path) -> str:
    relative = path.relative_to(folder)
    return relative.parts[0] if len(relative.parts) > 1 else relative.stem


def storage_imports(path: Path) -> list[str]:
    """What a storage module imports that its part may not."""
    here = part_of_path(path, STORAGE)
    allowed = {here} | STORAGE_SHARED | STORAGE_PARTS[here]
    wrong = []
    for line, module in imported_modules(path):
        part = part_of(module, "scrapy_rep.cache.storage")
        if part is not None and part not in allowed:
            wrong.append(f"{path.relative_to(PACKAGE.parent)}:{line} imports {module}")
    return wrong


STORAGE_MODULES = sorted(STORAGE.rglob("*.py"))


@pytest.mark.parametrize("path", STORAGE_MODULES, ids=lambda p: str(p.relative_to(STORAGE)))
def test_layers_storage_backends_import_only_what_they_share(path: Path) -> None:
    assert part_of_path(path, STORAGE) in STORAGE_PARTS, "a new part: place it in STORAGE_PARTS"
    assert storage_imports(path) == []


def test_layers_storage_check_catches_a_backend_importing_another() -> None:
    bad = STORAGE / "sqlite" / "_backend_probe.py"
    bad.write_text(
        "from scrapy_rep.cache.storage.redis.store import RedisStorage\n"
        "from scrapy_rep.cache.storage import open_storage\n"
        "from scrapy_rep.cache.storage import memory\n"
        "from scrapy_rep.cache.storage.protocol import Storage\n"
    )
    try:
        assert storage_imports(bad) == [
            "scrapy_rep/cache/storage/sqlite/_backend_probe.py:1 imports "
            "scrapy_rep.cache.storage.redis.store",
            "scrapy_rep/cache/storage/sqlite/_backend_probe.py:2 imports scrapy_rep.cache.storage",
            "scrapy_rep/cache/storage/sqlite/_backend_probe.py:3 imports "
            "scrapy_rep.cache.storage.memory",
        ]
    finally:
        bad.unlink()


# --- the tools' parts (tools/__init__.py) ---------------------------------------------

TOOLS = PACKAGE / "tools"
#: In the order they may import each other: a part imports only the parts
#: before it (and itself); ``cli`` is the face and may import them all.
TOOLS_ORDER = ("lint", "fetch", "check", "store", "report", "tester", "demo", "cli")


def tools_imports(path: Path) -> list[str]:
    """What a tools module imports that its part may not."""
    here = part_of_path(path, TOOLS)
    if here == "__init__":
        allowed: set[str] = set()
    else:
        allowed = set(TOOLS_ORDER[: TOOLS_ORDER.index(here) + 1])
    wrong = []
    for line, module in imported_modules(path):
        part = part_of(module, "scrapy_rep.tools")
        if part is not None and part not in allowed:
            wrong.append(f"{path.relative_to(PACKAGE.parent)}:{line} imports {module}")
    return wrong


TOOLS_MODULES = sorted(TOOLS.rglob("*.py"))


@pytest.mark.parametrize("path", TOOLS_MODULES, ids=lambda p: str(p.relative_to(TOOLS)))
def test_layers_tools_parts_import_only_parts_before_them(path: Path) -> None:
    assert part_of_path(path, TOOLS) in (*TOOLS_ORDER, "__init__"), "place it in TOOLS_ORDER"
    assert tools_imports(path) == []


def test_layers_tools_check_catches_lint_importing_the_report() -> None:
    bad = TOOLS / "lint" / "_part_probe.py"
    bad.write_text(
        "from scrapy_rep.tools.report.rows import FLAGS\n"
        "from scrapy_rep.tools import check\n"
        "from scrapy_rep.tools.lint.finding import ERROR\n"
    )
    try:
        assert tools_imports(bad) == [
            "scrapy_rep/tools/lint/_part_probe.py:1 imports scrapy_rep.tools.report.rows",
            "scrapy_rep/tools/lint/_part_probe.py:2 imports scrapy_rep.tools.check",
        ]
    finally:
        bad.unlink()


SUB_PACKAGES = sorted(
    init.parent for folder in (STORAGE, TOOLS) for init in folder.glob("*/__init__.py")
)


@pytest.mark.parametrize("package", SUB_PACKAGES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_layers_every_sub_package_says_what_it_owns_and_may_import(package: Path) -> None:
    doc = ast.get_docstring(ast.parse((package / "__init__.py").read_text())) or ""
    assert "Owns" in doc and "May import" in doc, package
