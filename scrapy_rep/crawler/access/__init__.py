"""Access: what applies to a request's origin, and getting it.

A request's way through this wing: ``origins`` (is it checked, which origin),
``tokens`` (which user-agent tokens), ``resolver`` (the origin's access, per
request), which asks the origin's lifecycle (``cache/lifecycle.py``) and,
when that needs I/O, has ``driver.LifecycleDriver`` carry it out, one flight
per origin (``single_flight``): load and save through ``shared_records``
(the store, opened by ``store`` and run on ``loop_thread``), fetch through
``fetcher`` (``ftp`` for ftp://). ``known_origins`` is what this process
keeps, ``waiting`` the requests parked meanwhile, ``forget_watch`` the
forgets of other processes, ``spider_robots`` a spider's own robots.txt
requests. May import config/ and the crawler's ground (``async_bridge``,
``internals``, ``errors``, ``reporting``, ``gauges``, ``robot_parser``),
never pace/, page/ or the face (CONTRIBUTING.md).
"""
