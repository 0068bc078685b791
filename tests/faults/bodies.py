"""Hostile robots.txt bodies: what a broken or malicious server may send with a 200.

Each builder is deterministic (seeded), so a failure reproduces byte for byte.
"""

from __future__ import annotations

import random

__all__ = [
    "binary_garbage",
    "grid",
    "latin1",
    "long_lines",
    "many_groups",
    "many_stars",
    "middle_pieces",
    "middle_pieces_path",
    "nul_bytes",
    "utf16_with_bom",
]


def binary_garbage(size: int = 100_000, seed: int = 9309) -> bytes:
    """Random bytes (no newline-free guarantee), with one valid group buried in the middle."""
    rng = random.Random(seed)
    noise = bytes(rng.getrandbits(8) for _ in range(size))
    buried = b"\nUser-agent: *\nDisallow: /buried\n"
    return noise[: size // 2] + buried + noise[size // 2 :]


def utf16_with_bom(text: str = "User-agent: *\nDisallow: /\n") -> bytes:
    """UTF-16 (little endian, with its BOM): every ASCII character is followed by a NUL."""
    return text.encode("utf-16")


def latin1() -> bytes:
    """A file saved as Latin-1: accented letters are single bytes that are not UTF-8."""
    text = (
        "# Règles pour les robots — été\n"
        "User-agent: *\n"
        "Disallow: /café\n"
        "Disallow: /privé/   # répertoire privé\n"
        "Disallow: /next\n"
    )
    return text.replace("—", "-").encode("latin-1")


def nul_bytes() -> bytes:
    """NULs inside a value, inside a comment, and on lines of their own."""
    return (
        b"User-agent: *\n"
        b"Disallow: /a\x00b\n"
        b"\x00\x00\x00\n"
        b"# comment with \x00 in it\n"
        b"Disallow: /next\x00\n"
        b"Disallow: /after\n"
    )


def many_groups(count: int = 100_000, ours: tuple[int, ...] = ()) -> bytes:
    """``count`` groups for other agents; group ``i`` in ``ours`` is for ``testbot``
    and disallows ``/ours-<i>``. About 36 bytes per group."""
    lines = []
    for i in range(count):
        if i in ours:
            lines.append(f"User-agent: testbot\nDisallow: /ours-{i}\n")
        else:
            lines.append(f"User-agent: bot{i}\nDisallow: /g{i}\n")
    return "".join(lines).encode()


def long_lines(length: int = 1 << 20) -> bytes:
    """A 1 MiB comment line, a rule with a 1 MiB path, then ordinary rules."""
    return (
        b"User-agent: *\n"
        b"Disallow: /before\n"
        b"# " + b"c" * length + b"\n"
        b"Disallow: /long" + b"x" * length + b"\n"
        b"Disallow: /after\n"
    )


def many_stars(count: int = 5_000) -> bytes:
    """Patterns with thousands of ``*``: the shape that makes backtracking matchers explode.

    ``/*a*a...*b`` needs ``count // 5`` a's then a b; the others are ``count`` stars.
    """
    return (
        b"User-agent: *\n"
        b"Disallow: /" + b"*a" * (count // 5) + b"*b\n"
        b"Disallow: /stars" + b"*" * count + b"$\n"
        b"Disallow: /end" + b"*" * count + b"z$\n"
    )


def grid(rows: int = 150, columns: int = 150) -> bytes:
    """``Disallow: /*t<i>x*t<j>y`` for every i, j: a path that lists every
    ``t<j>y`` before every ``t<i>x`` would have each of these rules tried."""
    rules = (f"Disallow: /*t{i}x*t{j}y\n" for i in range(rows) for j in range(columns))
    return ("User-agent: *\nAllow: /page\n" + "".join(rules)).encode()


def grid_path(rows: int = 150, columns: int = 150) -> str:
    """The path that has every rule of ``grid`` tried: each fails on its last piece."""
    return "/" + "".join(f"t{j}y" for j in range(columns)) + "".join(f"t{i}x" for i in range(rows))


def middle_pieces(side: int = 28) -> bytes:
    """``Disallow: /*a<i>x*b<j>y*c<k>z`` for every i, j, k: with ``middle_pieces_path``
    each rule fails only on its middle piece, which no index of first and last
    pieces can rule out, so a check meets its cost bound (docs/spec.md §6.8)."""
    rules = (
        f"Disallow: /*a{i}x*b{j}y*c{k}z\n"
        for i in range(side)
        for j in range(side)
        for k in range(side)
    )
    return ("User-agent: *\nAllow: /page\n" + "".join(rules)).encode()


def middle_pieces_path(side: int = 28) -> str:
    """Every ``a<n>x``, then every ``c<n>z``, then every ``b<n>y``."""
    pieces = (f"{letter}{n}{end}" for letter, end in ("ax", "cz", "by") for n in range(side))
    return "/" + "".join(pieces)
