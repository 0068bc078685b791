"""A real redis-server on 127.0.0.1 for the tests that need one (storage, cache).

tests/ is on sys.path (tests/conftest.py has no package), so any test folder
can import this module; the ``redis_server`` fixture lives in tests/conftest.py.
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
from collections.abc import Sequence
from pathlib import Path

import pytest


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


class RedisServer:
    """A throw-away redis-server on 127.0.0.1, no persistence.

    ``args``: more of redis-server's options (a cluster node's, a replica's);
    ``password``: its ``requirepass``, sent before the PING that says it is up.
    """

    def __init__(
        self, workdir: Path, args: Sequence[str] = (), password: str | None = None
    ) -> None:
        binary = shutil.which("redis-server")
        if binary is None:
            pytest.fail("redis-server is not installed: apt-get install -y redis-server")
        self.binary = binary
        self.workdir = workdir
        self.port = free_port()
        self.args = list(args)
        self.password = password
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
                *(["--requirepass", self.password] if self.password else []),
                *self.args,
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
                    if self.password:
                        sock.sendall(f"AUTH {self.password}\r\n".encode())
                        sock.recv(16)
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
