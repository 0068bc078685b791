"""Helpers for the storage tests: a fake clock, a real redis-server, worker processes."""

from __future__ import annotations

import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
WORKER = HERE / "storage_worker.py"


class FakeClock:
    """A clock the test moves by hand: no sleeps for time rules."""

    def __init__(self, now: float = 1_700_000_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


class RedisServer:
    """A throw-away redis-server on 127.0.0.1, no persistence."""

    def __init__(self, workdir: Path) -> None:
        binary = shutil.which("redis-server")
        if binary is None:
            pytest.fail("redis-server is not installed: apt-get install -y redis-server")
        self.binary = binary
        self.workdir = workdir
        self.port = free_port()
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        self.process = subprocess.Popen(
            [
                self.binary,
                "--bind",
                "127.0.0.1",
                "--port",
                str(self.port),
                "--save",
                "",
                "--appendonly",
                "no",
                "--dir",
                str(self.workdir),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                pytest.fail(f"redis-server exited with {self.process.returncode}")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.2) as sock:
                    sock.sendall(b"PING\r\n")
                    if sock.recv(16).startswith(b"+PONG"):
                        return
            except OSError:
                pass
            time.sleep(0.02)  # waiting for a server to listen, not a time rule
        pytest.fail("redis-server did not answer within 10 s")

    def kill(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait(10)
        self.process = None


def run_workers(*commands: list[str], timeout: float = 60) -> list[str]:
    """Run ``storage_worker.py`` once per command, released together; their stdout."""
    with tempfile.TemporaryDirectory() as barrier:
        processes = [
            subprocess.Popen(
                [sys.executable, str(WORKER), *command],
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                cwd=ROOT,
                env={
                    "PYTHONPATH": str(ROOT),
                    "PATH": "/usr/bin:/bin",
                    "STORAGE_WORKER_BARRIER": barrier,
                },
            )
            for command in commands
        ]
        deadline = time.monotonic() + timeout
        while len(list(Path(barrier).glob("ready-*"))) < len(processes):
            if time.monotonic() > deadline or any(p.poll() is not None for p in processes):
                break
            time.sleep(0.01)  # waiting for processes to start, not a time rule
        (Path(barrier) / "go").touch()
        outputs = []
        for process in processes:
            out, err = process.communicate(timeout=timeout)
            assert process.returncode == 0, err.decode(errors="replace")
            outputs.append(out.decode().strip())
    return outputs
