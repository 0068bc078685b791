"""A separate crawler process, for the cross-process storage tests.

Usage: storage_worker.py <kind> <path-or-url> <command> [args...]

- ``write <prefix> <n>``: put n records ``<prefix><i>``, print "ok"
- ``read <prefix> <n>``: print how many of ``<prefix><i>`` are found
- ``lock <key> <tried-dir> <n>``: try the lock once, then hold it until all
  ``n`` workers have tried (a holder that ends frees its lock), print "won"
  or "lost"
- ``hold <key> <ttl> <marker>``: take the lock, create ``marker``, then hold
  it until killed (a fetch that never ends)
- ``fetch-once <key> <marker-dir>``: ``single_flight``; the fetch writes one
  file in marker-dir, print the record's reason
"""

from __future__ import annotations

import asyncio
import os
import sys
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # tests/: shared helpers
from start_barrier import wait_for_the_others

from scrapy_rep.cache.outcome import FetchKind
from scrapy_rep.cache.policy import OriginRecord
from scrapy_rep.cache.storage import open_storage, single_flight


def sample(i: int) -> OriginRecord:
    body = f"User-agent: *\nDisallow: /{i}\n".encode()
    return OriginRecord(FetchKind.SUCCESS, 200, "HTTP 200", 1.0, 9e9, body, 1.0, 200)


async def main(kind: str, where: str, command: str, *args: str) -> str:
    if kind == "sqlite":
        storage = await open_storage("sqlite", path=where)
    else:
        storage = await open_storage("redis", redis_url=where, prefix="test:")
    wait_for_the_others()
    try:
        if command == "write":
            for i in range(int(args[1])):
                await storage.put(f"{args[0]}{i}", sample(i), 3600)
            return "ok"
        if command == "read":
            found = [await storage.get(f"{args[0]}{i}") for i in range(int(args[1]))]
            return str(sum(1 for record in found if record is not None))
        if command == "lock":
            won = await storage.lock(args[0], 30)
            tried = Path(args[1])
            (tried / str(os.getpid())).touch()
            while len(list(tried.iterdir())) < int(args[2]):
                time.sleep(0.005)  # a barrier, not a time rule
            return "won" if won else "lost"
        if command == "hold":
            assert await storage.lock(args[0], float(args[1]))
            Path(args[2]).touch()
            await asyncio.Event().wait()
        if command == "fetch-once":
            marker = Path(args[1]) / f"{os.getpid()}-{uuid.uuid4().hex}"

            async def fetch() -> OriginRecord:
                marker.write_text("fetched")
                await asyncio.sleep(0.5)  # a slow robots.txt fetch
                return sample(os.getpid())

            record = await single_flight(storage, args[0], fetch, lambda _: 3600.0)
            return record.reason
        raise SystemExit(f"unknown command {command!r}")
    finally:
        await storage.close()


if __name__ == "__main__":
    print(asyncio.run(main(*sys.argv[1:])))
