"""The Lua scripts of the Redis store: each touches the keys of one origin,
or the forget log, never both on a Cluster (one script runs in one hash slot).

Every change to a held lock checks its owner's token first; the pace runs on
Redis's own clock. ``store.py`` runs them.
"""

from __future__ import annotations

__all__ = ["ACQUIRE", "FORGET", "LOG_FORGOTTEN", "PACE", "RELEASE", "RENEW", "TAKE_OVER"]

# Take a free lock; else cut one that would outlive a TTL (no expiry: an older
# version crashed, or a tampered key) down to it, and name its holder.
ACQUIRE = """
if redis.call('type', KEYS[1]).ok ~= 'string' then
    redis.call('del', KEYS[1])
end
if redis.call('set', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
    return {1, ''}
end
local left = redis.call('pttl', KEYS[1])
if left == -1 or left > tonumber(ARGV[2]) then
    redis.call('pexpire', KEYS[1], ARGV[2])
end
return {0, redis.call('get', KEYS[1])}
"""
# Compare-and-set: take the lock of a holder that is gone, unless it changed meanwhile.
TAKE_OVER = """
if redis.call('get', KEYS[1]) == ARGV[1] then
    redis.call('set', KEYS[1], ARGV[2], 'PX', ARGV[3])
    return 1
end
return 0
"""
# Compare-and-extend, compare-and-delete: only the lock we hold, never a successor's.
RENEW = """
if redis.call('get', KEYS[1]) == ARGV[1] then
    return redis.call('pexpire', KEYS[1], ARGV[2])
end
return 0
"""
RELEASE = """
if redis.call('get', KEYS[1]) == ARGV[1] then
    return redis.call('del', KEYS[1])
end
return 0
"""
# The pace (``scrapy_rep.cache.pace``, the same steps in Lua), on Redis's own
# clock (TIME): the workers' clocks never meet, each gets a relative wait.
# Times are integer milliseconds in a hash (n: next turn, p: paused until,
# w: the last request went); a key that is not such a hash is replaced, a
# value that is nonsense is clamped as ``pace.sane`` does.
# ARGV: 1 what ("reserve", "pause", "going"), 2 interval or pause (ms),
# 3 max_ahead (ms), 4 not_before (ms, reserve). Returns the wait (ms).
PACE = """
local t = redis.call('time')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local amount = math.max(tonumber(ARGV[2]), 0)
local ahead = tonumber(ARGV[3])
if redis.call('type', KEYS[1]).ok ~= 'hash' then
    redis.call('del', KEYS[1])
end
local stored = redis.call('hmget', KEYS[1], 'n', 'p', 'w')
local function sane(value)
    local v = tonumber(value)
    if v == nil or v ~= v or v < now then
        return now
    end
    return math.min(v, now + ahead)
end
local next_at, paused = sane(stored[1]), sane(stored[2])
local went = tonumber(stored[3])
if went ~= nil and went == went then
    went = math.min(went, now)
else
    went = nil
end
local after_went = now
if went ~= nil then
    after_went = math.min(went + amount, now + ahead)
end
local wait
if ARGV[1] == 'going' then
    local ready = math.max(paused, after_went)
    if ready > now then
        return ready - now
    end
    next_at = math.max(next_at, now + amount)
    went = now
    wait = 0
elseif ARGV[1] == 'pause' then
    paused = math.max(paused, now + math.min(amount, ahead))
    next_at = math.max(next_at, paused)
    wait = paused - now
else
    local start = math.max(next_at, paused, after_went, now + math.min(tonumber(ARGV[4]), ahead))
    next_at = start + amount
    if start <= now then
        went = now
    end
    wait = start - now
end
redis.call('hset', KEYS[1], 'n', string.format('%d', next_at), 'p', string.format('%d', paused))
if went ~= nil then
    redis.call('hset', KEYS[1], 'w', string.format('%d', went))
end
redis.call('pexpireat', KEYS[1], math.max(next_at, paused) + 1000)
return wait
"""


# The forget log (``forgotten``): a stream under the prefix, its IDs the
# server's clock; entries older than ARGV[3] seconds are trimmed (MINID,
# Redis 6.2; before, the count bound and the key's expiry do it). ARGV: 1 the
# origin's key, 2 the most entries kept, 3 seconds kept.
def _logged(stream: str) -> str:
    return f"""
redis.call('xadd', {stream}, 'MAXLEN', '~', ARGV[2], '*', 'key', ARGV[1])
local now = redis.call('time')
redis.pcall('xtrim', {stream}, 'MINID', (tonumber(now[1]) - tonumber(ARGV[3])) * 1000)
redis.call('expire', {stream}, ARGV[3])
"""


_REPLICATE = "if redis.replicate_commands then redis.replicate_commands() end\n"
# One server: delete a record and log it in one step (KEYS: the record, the log).
# A log of another type fails the step before the delete: a forget that
# running crawls would not hear of deletes nothing.
FORGET = (
    _REPLICATE
    + "local kind = redis.call('type', KEYS[2]).ok\n"
    + "if kind ~= 'none' and kind ~= 'stream' then\n"
    + "    return redis.error_reply('WRONGTYPE the log of forgotten origins is a ' .. kind)\n"
    + "end\n"
    + "local deleted = redis.call('del', KEYS[1])\n"
    + _logged("KEYS[2]")
    + "return deleted\n"
)
# Cluster: the log is one key in one slot, the record another; a script may
# touch one slot only (CROSSSLOT), so the record is deleted first, on its own,
# then this logs it (KEYS: the log). Why that order: docs/storage.md,
# "Redis Cluster".
LOG_FORGOTTEN = _REPLICATE + _logged("KEYS[1]") + "return 1\n"


# The workers sharing the store (``roll_call``): a sorted set of each worker's
# name, scored with the last time it answered, on Redis's clock (seconds).
# Names not seen within ARGV[2] seconds leave (so do names from the future, a
# tampered key); a key of another type is replaced. ARGV: 1 the worker's
# name, 2 seconds a name counts. Returns how many count, this one too.
ROLL_CALL = (
    _REPLICATE
    + """
local t = redis.call('time')
local now = tonumber(t[1]) + tonumber(t[2]) / 1000000
local within = tonumber(ARGV[2])
if redis.call('type', KEYS[1]).ok ~= 'zset' then
    redis.call('del', KEYS[1])
end
redis.call('zadd', KEYS[1], string.format('%.3f', now), ARGV[1])
redis.call('zremrangebyscore', KEYS[1], '-inf', string.format('(%.3f', now - within))
redis.call('zremrangebyscore', KEYS[1], string.format('(%.3f', now + 1), '+inf')
redis.call('expire', KEYS[1], math.ceil(within))
return redis.call('zcard', KEYS[1])
"""
)
