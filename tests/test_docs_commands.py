"""The commands the docs give leave what they build, and the pages say how
the package is built and how the demo runs (docs/development.md,
docs/demo.md): a reader who follows them gets what they promise."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _text(name: str) -> str:
    return " ".join((ROOT / name).read_text(encoding="utf-8").split())


def test_ci_docs_keeps_the_html_where_git_ignores_it_and_says_where() -> None:
    script = (ROOT / ".ci" / "docs").read_text(encoding="utf-8")
    assert "mktemp" not in script and "rm -rf" not in script  # nothing built is deleted
    assert "out=${1:-docs/_build/html}" in script
    assert re.search(r'echo "docs: open .*index\.html"', script)
    assert "docs/_build/" in (ROOT / ".gitignore").read_text(encoding="utf-8").split()
    assert "`bash .ci/docs` builds it into `docs/_build/html`" in _text("README.md")


def test_development_page_builds_the_package_with_python_m_build() -> None:
    page = _text("docs/development.md")
    assert ".venv/bin/python -m build" in page
    assert "dist/scrapy_rep-<version>-py3-none-any.whl" in page
    assert "bash .ci/wheel_alone" in page
    assert "into a temporary folder" not in page


def test_demo_page_says_the_demo_runs_from_the_wheel() -> None:
    page = _text("docs/demo.md")
    assert "needs the `example_project/` folder of a clone" not in page
    assert "`scrapy-rep demo` needs no clone" in page
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert '"example_project/rep_example" = "scrapy_rep/tools/demo/demo_project/rep_example"' in (
        pyproject
    )
