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

#: In ``RedisServer``'s ``args``: a free port of its own, chosen at each first start.
FREE_PORT = object()


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


class RedisServer:
    """A throw-away redis-server on 127.0.0.1, no persistence.

    ``args``: more of redis-server's options (a cluster node's, a replica's),
    where ``FREE_PORT`` stands for a port of its own (a cluster bus);
    ``password``: its ``requirepass``, sent before the PING that says it is up.
    A first start that fails (another process took a port between its choice
    and the bind) is tried again on new ports; a restart keeps them.
    """

    def __init__(
        self, workdir: Path, args: Sequence[object] = (), password: str | None = None
    ) -> None:
        binary = shutil.which("redis-server")
        if binary is None:
            pytest.fail("redis-server is not installed: apt-get install -y redis-server")
        self.binary = binary
        self.workdir = workdir
        self.port = free_port()
        self.args: list[object] = [free_port() if arg is FREE_PORT else arg for arg in args]
        self.password = password
        self.process: subprocess.Popen[bytes] | None = None
        self._template = list(args)
        self._started = False

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        for _ in range(0 if self._started else 2):  # fresh ports, for a first start only
            if self._launch():
                return
            self.port = free_port()
            self.args = [free_port() if arg is FREE_PORT else arg for arg in self._template]
        if not self._launch():
            pytest.fail(f"redis-server on port {self.port} exited at start")

    def _launch(self) -> bool:
        """Start it and wait until it answers; False if it exited (a port taken)."""
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
                *map(str, self.args),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                return False
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.2) as sock:
                    if self.password:
                        sock.sendall(f"AUTH {self.password}\r\n".encode())
                        sock.recv(16)
                    sock.sendall(b"PING\r\n")
                    if sock.recv(16).startswith(b"+PONG"):
                        self._started = True
                        return True
            except OSError:
                pass
            time.sleep(0.02)  # waiting for a server to listen, not a time rule
        pytest.fail("redis-server did not answer within 10 s")

    def kill(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait(10)
        self.process = None
