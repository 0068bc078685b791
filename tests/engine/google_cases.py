"""Loading Google's conformance cases (tests/data/conformance/google)."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

GOOGLE = Path(__file__).resolve().parents[1] / "data" / "conformance" / "google"

Case = dict[str, Any]


def load(name: str) -> list[Case]:
    """The cases of one file; a missing file fails the collection loudly."""
    path = GOOGLE / name
    if not path.is_file():
        raise FileNotFoundError(f"conformance data missing: {path} (part of the repository)")
    cases: list[Case] = json.loads(path.read_text(encoding="ascii"))
    return cases


def body_of(case: Case) -> bytes:
    if "robots_b64" in case:
        return base64.b64decode(case["robots_b64"])
    robots: str = case["robots"]
    return robots.encode("utf-8")


def ids(cases: list[Case]) -> list[str]:
    return [case["id"] for case in cases]
