"""Issue 46: the distributed crawls with scrapy_rep's store on a Redis Cluster.

The scrapy-redis crawl (test_scrapy_redis.py) and the shared crawl-delay
(test_pace.py), unchanged, with ``REP_REDIS_URL`` naming a 3-primary cluster
on 127.0.0.1 (made by ``redis-cli --cluster create``, removed after the
module). scrapy-redis's queue stays on a single server: scrapy-redis does not
support Cluster (docs/storage.md, "Production Redis").
"""

from __future__ import annotations

from pathlib import Path

import redis
from local_redis import RedisServer
from redis_topologies import LocalCluster
from test_pace import three_workers_keep_one_crawl_delay, wait_for
from test_scrapy_redis import ORIGINS, three_workers_one_robots_txt_per_origin


def scrapy_rep_keys(cluster: LocalCluster, kind: str) -> dict[int, list[bytes]]:
    """Each node's keys of one kind (``origin``, ``pace``), by port."""
    return {
        port: [key for key in keys if key.startswith(f"scrapy_rep:{kind}:".encode())]
        for port, keys in cluster.keys().items()
    }


def test_scrapy_redis_crawl_with_the_cache_on_a_cluster(
    redis_server: RedisServer, redis_cluster: LocalCluster, tmp_path: Path
) -> None:
    redis_cluster.flush()
    three_workers_one_robots_txt_per_origin(redis_server.url, tmp_path, redis_cluster.url)
    records = scrapy_rep_keys(redis_cluster, "origin")
    assert sum(len(keys) for keys in records.values()) == ORIGINS  # each origin's record
    assert all(records.values())  # spread over the three primaries, by slot
    assert all(
        key.endswith(b"}") and b":{http://" in key for keys in records.values() for key in keys
    )
    assert redis.Redis.from_url(redis_server.url).keys("scrapy_rep:*") == []  # all on the cluster


def test_three_workers_keep_one_crawl_delay_on_a_cluster(
    redis_server: RedisServer, redis_cluster: LocalCluster, tmp_path: Path
) -> None:
    """The origin's pace is one key on the cluster, read while the workers
    crawl: it expires a second after the last turn, which on a loaded
    machine can come before the test looks once the crawl is over."""
    redis_cluster.flush()
    paces: list[bytes] = []

    def pace_keys() -> list[bytes]:
        return [key for keys in scrapy_rep_keys(redis_cluster, "pace").values() for key in keys]

    def watch() -> None:
        wait_for(lambda: bool(pace_keys()), 60)  # the crawl's progress, not a time rule
        paces.extend(pace_keys())

    three_workers_keep_one_crawl_delay(
        redis_server.url, tmp_path, {"REP_REDIS_URL": redis_cluster.url}, watch
    )
    assert len(paces) == 1 and paces[0].startswith(b"scrapy_rep:pace:{http://127.0.0.1:")
    assert redis.Redis.from_url(redis_server.url).keys("scrapy_rep:*") == []
