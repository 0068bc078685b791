"""The demo ships with the package, and nothing else pulls it in.

The wheel carries the example project as ``scrapy_rep/tools/demo/demo_project``
(pyproject.toml's force-include); a clone uses its ``example_project/``.
A crawl that only uses the middleware or the add-on never imports the demo,
its local servers or the example spiders.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from scrapy_rep.tools.demo import run as demo

ROOT = Path(__file__).resolve().parents[3]

IMPORTS = """
import json, sys
import scrapy_rep
from scrapy_rep import Addon, RobotsTxtMiddleware, RobotsTxtSpiderMiddleware
import scrapy_rep.crawler.middleware, scrapy_rep.crawler.addon
import scrapy_rep.tools.cli.scrapy_robots  # `scrapy robots`, loaded by every scrapy command
print(json.dumps(sorted(m for m in sys.modules if "demo" in m or m.startswith("rep_example"))))
"""


def test_scrapy_importing_the_middleware_never_imports_the_demo() -> None:
    done = subprocess.run(
        [sys.executable, "-c", IMPORTS], capture_output=True, text=True, timeout=120, check=True
    )
    assert json.loads(done.stdout) == []


def test_scrapy_demo_import_is_seen_by_the_check() -> None:
    # The check above can fail: importing the demo shows up in the same list.
    code = IMPORTS.replace("import scrapy_rep\n", "import scrapy_rep.tools.demo.run\n")
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    assert json.loads(done.stdout) == [
        "scrapy_rep.tools.demo",
        "scrapy_rep.tools.demo.record",
        "scrapy_rep.tools.demo.run",
        "scrapy_rep.tools.demo.sites",
    ]


def test_scrapy_demo_project_from_a_clone(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # An editable install has no shipped copy: the clone's example_project/.
    monkeypatch.setattr(demo, "PACKAGED_PROJECT", tmp_path / "demo_project")
    assert demo.default_project() == demo.CLONE_PROJECT
    assert demo.CLONE_PROJECT.name == "example_project"


def test_scrapy_demo_project_shipped_in_the_package_wins(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shipped = tmp_path / "demo_project"
    shipped.mkdir()
    (shipped / "scrapy.cfg").write_text("[settings]\ndefault = rep_example.settings\n")
    monkeypatch.setattr(demo, "PACKAGED_PROJECT", shipped)
    assert demo.default_project() == shipped


def test_scrapy_wheel_ships_the_demo_project() -> None:
    # pyproject.toml maps the example project into the package for the wheel.
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    packaged = demo.PACKAGED_PROJECT.relative_to(ROOT / "scrapy_rep" / "tools")
    assert f'"example_project/scrapy.cfg" = "scrapy_rep/tools/{packaged}/scrapy.cfg"' in text
    assert f'"example_project/rep_example" = "scrapy_rep/tools/{packaged}/rep_example"' in text
