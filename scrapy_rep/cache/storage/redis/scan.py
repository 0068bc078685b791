"""Every record of a Redis store, streamed: ``scrapy-rep report`` (docs/cli.md).

``SCAN`` over the records' keys (``<prefix>origin:*``) of each primary, a
Cluster's every one, never ``KEYS``: the server answers a few hundred keys
at a time and serves the crawls between two. One script call per step scans
and reads the header line and the body's size of each key found, so a step
is one round trip and one reply, whatever the bodies weigh; where scripts
are refused (an ACL without EVAL), the same in a pipeline of ``GETRANGE``
and ``STRLEN``. With ``bodies``, each record is read whole (``GET``).
Memory holds one step's records.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any, Final

from redis.exceptions import NoScriptError, ResponseError

from scrapy_rep.cache.storage.errors import StorageUnavailable
from scrapy_rep.cache.storage.redis.clients import LOST
from scrapy_rep.cache.storage.redis.store import RedisStorage
from scrapy_rep.cache.storage.scanned import Scanned, read_scanned

__all__ = ["SCAN_COUNT", "scan_records"]

#: Keys per SCAN step: a step's script holds the server for about a
#: millisecond (a crawl's call waits at most that long behind it).
SCAN_COUNT: Final = 200
#: The header line is in the first bytes of a value (longer ones are read whole).
_HEAD_BYTES: Final = 4096
#: Scan one step and read what it found: the cursor, a newline, then per key
#: "<key length> <head length> <body length> " and the key and its header line
#: (a key of another type than a string: "<key length> 0 -1 " and the key,
#: which reads as an unreadable record).
#: Keys of one node only, in any slot of it (a Cluster's node is scanned alone).
_STEP: Final = """
local found = redis.call('SCAN', ARGV[1], 'MATCH', ARGV[2], 'COUNT', ARGV[3])
local out = {found[1], '\\n'}
for _, key in ipairs(found[2]) do
  if redis.call('TYPE', key).ok ~= 'string' then
    out[#out + 1] = #key .. ' 0 -1 ' .. key
  else
  local head = redis.call('GETRANGE', key, 0, ARGV[4] - 1)
  local stop = string.find(head, '\\n', 1, true)
  if not stop and #head == tonumber(ARGV[4]) then
    head = redis.call('GET', key) or ''
    stop = string.find(head, '\\n', 1, true)
  end
  local size = redis.call('STRLEN', key)
  if stop then
    head = string.sub(head, 1, stop)
    size = size - stop
  end
  if size > 0 or stop then
    out[#out + 1] = #key .. ' ' .. #head .. ' ' .. size .. ' ' .. key .. head
  end
  end
end
return table.concat(out)
"""


def _pattern(storage: RedisStorage) -> str:
    """The records' keys, the prefix's glob characters escaped."""
    escaped = "".join(f"\\{c}" if c in "*?[]\\" else c for c in storage.prefix)
    return f"{escaped}origin:*"


def _origin(storage: RedisStorage, key: bytes) -> str:
    """The origin a record's key names (in braces on a Cluster)."""
    name = key.decode("utf-8", "replace")[len(storage.prefix) + len("origin:") :]
    if storage.cluster and name.startswith("{") and name.endswith("}"):
        name = name[1:-1]
    return name


async def scan_records(
    storage: RedisStorage, *, bodies: bool = False, count: int = SCAN_COUNT
) -> AsyncIterator[list[Scanned]]:
    """The store's records, a step's worth at a time, primary after primary."""
    client = storage.client
    nodes = client.get_primaries() if storage.cluster else [None]
    scripted = not bodies
    for node in nodes:
        cursor: bytes | int = 0
        while True:
            try:
                if scripted:
                    try:
                        cursor, found = await _scripted_step(storage, node, cursor, count)
                    except (NoScriptError, ResponseError):
                        scripted = False  # refused here: the pipeline's way
                        continue
                else:
                    cursor, found = await _piped_step(storage, node, cursor, count, bodies)
            except LOST as exc:
                raise StorageUnavailable(f"{storage.where} is unreachable: {exc}") from exc
            if found:
                yield found
            if int(cursor) == 0:
                break


async def _scripted_step(
    storage: RedisStorage, node: Any, cursor: bytes | int, count: int
) -> tuple[bytes, list[Scanned]]:
    args = (cursor, _pattern(storage), count, _HEAD_BYTES)
    kwargs = {} if node is None else {"target_nodes": node}
    data = await storage.client.execute_command("EVAL", _STEP, 0, *args, **kwargs)
    if isinstance(data, dict):  # a Cluster answers per node: here, one node
        (data,) = data.values()
    next_cursor, _, rest = bytes(data).partition(b"\n")
    found: list[Scanned] = []
    at, end = 0, len(rest)
    while at < end:
        first = rest.index(b" ", at)
        second = rest.index(b" ", first + 1)
        third = rest.index(b" ", second + 1)
        key_end = third + 1 + int(rest[at:first])
        head_end = key_end + int(rest[first + 1 : second])
        size = int(rest[second + 1 : third])
        key = _origin(storage, rest[third + 1 : key_end])
        found.append((key, *read_scanned(rest[key_end:head_end], size)))
        at = head_end
    return next_cursor, found


async def _piped_step(
    storage: RedisStorage, node: Any, cursor: bytes | int, count: int, bodies: bool
) -> tuple[bytes | int, list[Scanned]]:
    client = storage.client
    kwargs = {} if node is None else {"target_nodes": node}
    cursor, keys = await client.scan(cursor, match=_pattern(storage), count=count, **kwargs)
    if isinstance(cursor, dict):  # a Cluster's cursor per node: here, one node
        (cursor,) = cursor.values()
    if not keys:
        return cursor, []
    pipe = client.pipeline(transaction=False)
    for key in keys:
        if bodies:
            pipe.get(key)
        else:
            pipe.getrange(key, 0, _HEAD_BYTES - 1)
            pipe.strlen(key)
    replies = await pipe.execute(raise_on_error=False)  # WRONGTYPE: not a record
    found: list[Scanned] = []
    for index, key in enumerate(keys):
        if isinstance(replies[2 * index if not bodies else index], ResponseError):
            found.append((_origin(storage, key), None, 0))
            continue
        if bodies:
            data = replies[index]
            if data is None:
                continue  # expired between the two calls
            whole = bytes(data)
            size = len(whole) - whole.find(b"\n") - 1 if b"\n" in whole else len(whole)
            found.append((_origin(storage, key), *read_scanned(whole, size)))
            continue
        head, length = bytes(replies[2 * index]), int(replies[2 * index + 1])
        if not length:
            continue
        stop = head.find(b"\n")
        if stop < 0:  # a header longer than the first bytes: read it whole
            whole = await client.get(key)
            head = bytes(whole or b"")
            stop = head.find(b"\n")
        size = length - stop - 1 if stop >= 0 else length
        found.append((_origin(storage, key), *read_scanned(head[: stop + 1], size)))
    return cursor, found
