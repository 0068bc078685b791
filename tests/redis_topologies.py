"""Production Redis on 127.0.0.1: a Cluster of three primaries, and a primary
with a replica watched by three sentinels (issue 46, docs/storage.md).

Both take passwords, as production ones do: the data nodes' (``PASSWORD``)
and, for Sentinel, the sentinels' own (``SENTINEL_PASSWORD``). Fixtures start
them once per module (tests/distributed/conftest.py, tests/cache/storage);
``stop`` kills every process. Waiting for servers to agree (cluster slots,
sentinels finding each other, a failover) polls with a deadline.
"""

from __future__ import annotations

import secrets
import shutil
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import pytest
import redis
from local_redis import FREE_PORT, RedisServer, free_port

PASSWORD = "data-pw"
SENTINEL_PASSWORD = "sentinel-pw"
SERVICE = "mymaster"


def wait_until(condition: Callable[[], bool], timeout: float, what: str) -> float:
    """Poll ``condition`` until it holds; the seconds it took. Fails the test after ``timeout``."""
    start = time.monotonic()
    while True:
        try:
            if condition():
                return time.monotonic() - start
        except (redis.RedisError, OSError):
            pass  # not up yet
        if time.monotonic() - start > timeout:
            pytest.fail(f"{what}: not within {timeout} s")
        time.sleep(0.05)  # servers agreeing among themselves, not a time rule


def _client(port: int, password: str | None = PASSWORD) -> redis.Redis:
    return redis.Redis(port=port, password=password, socket_timeout=2)


class LocalCluster:
    """Three primaries, no replicas, made by ``redis-cli --cluster create``."""

    def __init__(self, workdir: Path, primaries: int = 3) -> None:
        self.nodes = []
        for n in range(primaries):
            folder = workdir / f"node{n}"
            folder.mkdir()
            args: list[object] = ["--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf"]
            args += ["--cluster-port", FREE_PORT, "--masterauth", PASSWORD]
            self.nodes.append(RedisServer(folder, args, password=PASSWORD))

    @property
    def url(self) -> str:
        """Two of the three as seeds: the client finds the third."""
        seeds = ",".join(f"127.0.0.1:{node.port}" for node in self.nodes[:2])
        return f"redis+cluster://:{PASSWORD}@{seeds}"

    def start(self) -> None:
        for node in self.nodes:
            node.start()
        command = [_redis_cli(), "-a", PASSWORD, "--no-auth-warning", "--cluster", "create"]
        command += [f"127.0.0.1:{node.port}" for node in self.nodes]
        command += ["--cluster-replicas", "0", "--cluster-yes"]
        done = subprocess.run(command, capture_output=True, timeout=60, check=False)
        if done.returncode != 0:
            pytest.fail(f"redis-cli --cluster create: {done.stdout!r} {done.stderr!r}")
        wait_until(self.agreed, 30, "the cluster's nodes agreeing on its slots")

    def agreed(self) -> bool:
        for node in self.nodes:
            info = _client(node.port).cluster("info")
            if info.get("cluster_state") != "ok" or int(info.get("cluster_known_nodes", 0)) != 3:
                return False
        return True

    def flush(self) -> None:
        """Empty every primary: each test starts from an empty store."""
        for node in self.nodes:
            _client(node.port).flushall()

    def keys(self) -> dict[int, list[bytes]]:
        """Each node's keys, by port: which node holds what."""
        return {node.port: sorted(_client(node.port).keys("*")) for node in self.nodes}

    def stop(self) -> None:
        for node in self.nodes:
            node.kill()


class LocalSentinels:
    """A primary, its replica, and three sentinels (quorum 2) watching them.

    Small ``down-after-milliseconds`` and ``failover-timeout``: killing the
    primary promotes the replica within a few seconds.
    """

    def __init__(self, workdir: Path, sentinels: int = 3, quorum: int = 2) -> None:
        self.workdir = workdir
        self.quorum = quorum
        (workdir / "primary").mkdir()
        (workdir / "replica").mkdir()
        # No 5 s wait for more replicas before a full sync (diskless sync's default).
        self.args = ["--masterauth", PASSWORD, "--repl-diskless-sync-delay", "0"]
        self.primary = RedisServer(workdir / "primary", self.args, PASSWORD)
        self.replica = RedisServer(workdir / "replica", self.args, PASSWORD)
        self.sentinel_ports = [free_port() for _ in range(sentinels)]
        # Each sentinel's id, told to the others in its config: they know each
        # other from the start instead of after their first hello (2 s apart).
        self.ids = {port: secrets.token_hex(20) for port in self.sentinel_ports}
        self.sentinels: list[subprocess.Popen[bytes]] = []

    @property
    def url(self) -> str:
        hosts = ",".join(f"127.0.0.1:{port}" for port in self.sentinel_ports)
        return f"redis+sentinel://:{PASSWORD}@{hosts}/{SERVICE}/0?sentinel_password={SENTINEL_PASSWORD}"

    def start(self) -> None:
        self.primary.start()  # its port is known once it has started
        replica_of = ["--replicaof", "127.0.0.1", self.primary.port]
        self.replica = RedisServer(self.workdir / "replica", self.args + replica_of, PASSWORD)
        self.replica.start()
        wait_until(self._replicating, 15, "the replica syncing with the primary")
        for port in self.sentinel_ports:
            self.sentinels.append(self._start_sentinel(port))
        wait_until(self._watching, 30, "the sentinels finding the replica and each other")

    def _replicating(self) -> bool:
        info = _client(self.replica.port).info("replication")
        return bool(info.get("master_link_status") == "up")

    def _start_sentinel(self, port: int) -> subprocess.Popen[bytes]:
        config = self.workdir / f"sentinel-{port}.conf"
        known = [
            f"sentinel known-sentinel {SERVICE} 127.0.0.1 {other} {self.ids[other]}\n"
            for other in self.sentinel_ports
            if other != port
        ]
        config.write_text(
            f"port {port}\nbind 127.0.0.1\ndir {self.workdir}\nsentinel myid {self.ids[port]}\n"
            f"requirepass {SENTINEL_PASSWORD}\nsentinel sentinel-pass {SENTINEL_PASSWORD}\n"
            f"sentinel monitor {SERVICE} 127.0.0.1 {self.primary.port} {self.quorum}\n"
            f"sentinel auth-pass {SERVICE} {PASSWORD}\n"
            f"sentinel down-after-milliseconds {SERVICE} 500\n"
            f"sentinel failover-timeout {SERVICE} 3000\n"
            f"sentinel known-replica {SERVICE} 127.0.0.1 {self.replica.port}\n" + "".join(known)
        )
        return subprocess.Popen(
            [self.primary.binary, str(config), "--sentinel"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )

    def _sentinel(self, port: int) -> redis.Redis:
        return _client(port, SENTINEL_PASSWORD)

    def _watching(self) -> bool:
        others = len(self.sentinel_ports) - 1
        for port in self.sentinel_ports:
            client = self._sentinel(port)
            if len(client.sentinel_slaves(SERVICE)) != 1:
                return False
            if len(client.sentinel_sentinels(SERVICE)) != others:
                return False
        return True

    def primary_port(self) -> int:
        """The primary's port as the sentinels name it now (the first one that answers)."""
        for port in self.sentinel_ports:
            try:
                _, primary = self._sentinel(port).sentinel_get_master_addr_by_name(SERVICE)
            except (redis.RedisError, OSError):
                continue
            return int(primary)
        raise AssertionError("no sentinel answers")

    def promoted(self) -> bool:
        """Every sentinel names the replica, and the replica says it is the primary."""
        for port in self.sentinel_ports:
            _, primary = self._sentinel(port).sentinel_get_master_addr_by_name(SERVICE)
            if int(primary) != self.replica.port:
                return False
        return _client(self.replica.port).info("replication").get("role") == "master"

    def stop(self) -> None:
        for sentinel in self.sentinels:
            if sentinel.poll() is None:
                sentinel.kill()
                sentinel.wait(10)
        self.primary.kill()
        self.replica.kill()


def _redis_cli() -> str:
    binary = shutil.which("redis-cli")
    if binary is None:
        pytest.fail("redis-cli is not installed: apt-get install -y redis-tools")
    return binary
