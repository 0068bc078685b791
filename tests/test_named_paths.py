"""Every repository path the prose names exists: in a docstring of the package,
in docs/*.md, README.md and CONTRIBUTING.md (its map included).

What counts as a path: a token with a slash that ends in a file's extension
(``access/resolver.py``, ``docs/spec.md``), a folder of two names or more
ending in a slash (``engine/usage/``), or, between backticks, a module named
without its ``.py`` from one of our folders (``crawler/forget_watch``). A
token is resolved as the prose writes it: against the repository's root,
``scrapy_rep/``, ``scrapy_rep/crawler/`` (the wings: ``access/resolver.py``),
``example_project/``, and, in a docstring, its own module's folder and each
folder above it (in a page of docs, the page's folder). Not paths: URLs
and host names (``example.com/robots.txt``), ports (``127.0.0.1:8000/``),
stats (``robotstxt/cache/...``), placeholders in capitals (``PATH/x.json``),
what a run writes (``build/``, ``dist/``, ``docs/_build/``) and anything
outside (``../``).

The map in CONTRIBUTING.md is a tree: each name of its left column (``lines,
grammar``; ``sqlite/``) is a module or folder of the folder it is indented
under.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "scrapy_rep"
EXTENSIONS = {".py", ".md", ".toml", ".txt", ".cfg", ".sh", ".js", ".css", ".html", ".json"}
#: Folders a run writes, and the stats' namespace: never repository paths.
NOT_PATHS = {"build", "_build", "dist", "robotstxt"}
BASES = (ROOT, PACKAGE, PACKAGE / "crawler", ROOT / "example_project")
TOKEN = re.compile(r"(?<![\w./<>~$:-])((?:[\w.-]+/)+[\w.-]*)")
TICKED = re.compile(r"(?<![\w/])`{1,2}(\w+(?:/\w+)+)`{1,2}")
#: The folders a module path without ``.py`` starts with.
OUR_FOLDERS = {"scrapy_rep", "tests", "docs", "benchmarks"} | {
    folder.name for folder in PACKAGE.rglob("*") if folder.is_dir() and folder.name[0] != "_"
}
PROSE = sorted([*(ROOT / "docs").glob("*.md"), ROOT / "README.md", ROOT / "CONTRIBUTING.md"])


def named_paths(text: str) -> Iterator[str]:
    """The tokens of ``text`` that name a path, as the module docstring says."""
    for match in TOKEN.finditer(text):
        token = match.group(1).rstrip(".")
        names = token.rstrip("/").split("/")
        if ".." in names or NOT_PATHS.intersection(names) or names[0].isdigit():
            continue
        if "." in names[0].lstrip("."):  # a host: example.com/robots.txt
            continue
        if any(name.isupper() for name in names):  # a placeholder: PATH/x.json
            continue
        if Path(token).suffix in EXTENSIONS or (token.endswith("/") and len(names) > 1):
            yield token
    for match in TICKED.finditer(text):
        names = match.group(1).split("/")
        if names[0] in OUR_FOLDERS and not NOT_PATHS.intersection(names):
            yield match.group(1)


def exists(token: str, bases: tuple[Path, ...]) -> bool:
    return any((base / token).exists() or (base / f"{token}.py").is_file() for base in bases)


def folders_up(path: Path) -> tuple[Path, ...]:
    """A module's folder and every folder above it, up to the package's."""
    return tuple(folder for folder in path.parents if PACKAGE in (folder, *folder.parents))


def docstrings(path: Path) -> Iterator[str]:
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            doc = ast.get_docstring(node, clean=False)
            if doc:
                yield doc


def missing_in_docstrings(path: Path) -> list[str]:
    bases = (*folders_up(path), *BASES)
    return sorted(
        {
            token
            for doc in docstrings(path)
            for token in named_paths(doc)
            if not exists(token, bases)
        }
    )


def missing_in_prose(path: Path) -> list[str]:
    """In a page of docs, README or CONTRIBUTING (its map aside: a tree, read
    by ``missing_in_map``); a page's own folder is a base too (``snippets/``)."""
    text = path.read_text(encoding="utf-8")
    if "## The map" in text:
        before, after = text.split("## The map", 1)
        text = before + after.split("```", 2)[2]
    bases = (path.parent, *BASES)
    return sorted({token for token in named_paths(text) if not exists(token, bases)})


# --- the map --------------------------------------------------------------------------

NAME = re.compile(r"^\w+/?$")


def map_lines(text: str) -> list[str]:
    section = text.split("## The map", 1)[1]
    return section.split("```", 2)[1].strip("\n").splitlines()


def missing_in_map(lines: list[str], root: Path = ROOT) -> list[str]:
    """Each name of the map's left column, resolved in the folder it is under;
    and each path its descriptions name, in that folder or one above."""
    stack: list[tuple[int, Path]] = [(-1, root)]
    missing = []
    for line in lines:
        indent = len(line) - len(line.lstrip(" "))
        if not line.strip():
            continue
        while stack[-1][0] >= indent:
            stack.pop()
        parent = stack[-1][1]
        names_column, _, description = line.strip().partition("  ")
        if indent >= 12:  # a description carried over: no names in this column
            names_column, description = "", line
        here = parent
        for name in (part.strip() for part in names_column.split(",")):
            if not NAME.match(name):
                continue
            target = parent / name
            if name.endswith("/"):
                here = target
                if not target.is_dir():
                    missing.append(f"{target.relative_to(root)}/")
            elif not (target.with_suffix(".py").is_file() or target.is_dir()):
                missing.append(str(target.relative_to(root)))
        if here is not parent:
            stack.append((indent, here))
        above = (here, *here.parents)
        for token in named_paths(" " + description):
            if not exists(token, above):
                missing.append(f"{token} (under {here.relative_to(root)}/)")
    return missing


# --- the tests ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "path", sorted(PACKAGE.rglob("*.py")), ids=lambda p: str(p.relative_to(PACKAGE))
)
def test_named_paths_in_docstrings_exist(path: Path) -> None:
    assert missing_in_docstrings(path) == []


@pytest.mark.parametrize("path", PROSE, ids=lambda p: str(p.relative_to(ROOT)))
def test_named_paths_in_docs_exist(path: Path) -> None:
    assert missing_in_prose(path) == []


def test_named_paths_in_the_map_exist() -> None:
    lines = map_lines((ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8"))
    assert len(lines) > 40
    assert missing_in_map(lines) == []


def test_named_paths_catch_a_moved_module() -> None:
    # The check can fail: a module named where it no longer is, in each form.
    assert missing_in_docstrings_of('"""Called by ``crawler/resolver.py``."""') == [
        "crawler/resolver.py"
    ]
    assert list(named_paths("see access/resolver.py and engine/usage/, not example.com/a.txt"))
    assert missing_in_map(
        [
            "scrapy_rep/          x",
            "  tools/             y",
            "    lint_groups, check  z",
            "    report/            the rows (see report/rows.py, tools/__init__.py)",
            "      rows, output     w",
        ]
    ) == ["scrapy_rep/tools/lint_groups"]
    assert missing_in_map(["scrapy_rep/   x", "  cache/   y", "    nowhere/  (old/gone.py)"]) == [
        "scrapy_rep/cache/nowhere/",
        "old/gone.py (under scrapy_rep/cache/nowhere/)",
    ]


def missing_in_docstrings_of(source: str) -> list[str]:
    bases = (*folders_up(PACKAGE / "cache" / "lifecycle.py"), *BASES)
    doc = ast.get_docstring(ast.parse(source)) or ""
    return sorted(token for token in named_paths(doc) if not exists(token, bases))


def test_named_paths_are_not_urls_ports_or_stats() -> None:
    text = (
        "https://example.com/robots.txt, 127.0.0.1:8000/robots.txt, robotstxt/cache/hit, "
        "PATH/agents.json, build/mutation/report.json, ../shared/corpus/"
    )
    assert list(named_paths(text)) == []
