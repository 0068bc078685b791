"""The Tester's server (``scrapy_rep.tools.tester.server``, docs/tester.md) where a
mutation run (tests/mutation/run.py) found it untested: the headers of every
answer, the token on every call, what a call refuses and why, the live fetch's
defaults and cap, a failure inside a call, and ``serve()`` itself (its address
printed at once, the warning off loopback, Ctrl+C). Each test starts a real
Tester on 127.0.0.1 and talks HTTP to it.
"""

from __future__ import annotations

import contextlib
import http.client
import inspect
import io
import json
import os
import re
import select
import signal
import socket
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import pytest
from crawler.servers import Huge, Redirect, Reply, SiteServer
from scrapy.settings import Settings

from scrapy_rep.crawler.config.settings import Config
from scrapy_rep.tools.cli import console as cli
from scrapy_rep.tools.store.view import StoreName
from scrapy_rep.tools.tester import server as tester_server
from scrapy_rep.tools.tester.guard import Limits
from scrapy_rep.tools.tester.server import LINK_LIMIT, serve

from .conftest import Running
from .test_tester_security import PATIENCE, get, status_of

BODY = "User-agent: *\nDisallow: /a\n"

#: The page's Content-Security-Policy, directive by directive: its own script,
#: style and calls only, no inline or eval'd code, never framed (issue 27 §8).
POLICY = {
    "default-src": ["'none'"],
    "script-src": ["'self'"],
    "style-src": ["'self'"],
    "connect-src": ["'self'"],
    "img-src": ["'self'", "data:"],
    "base-uri": ["'none'"],
    "form-action": ["'none'"],
    "frame-ancestors": ["'none'"],
}


@dataclass
class Answer:
    status: int
    headers: http.client.HTTPMessage
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


def ask(
    tester: Running,
    method: str,
    target: str,
    body: bytes | None = None,
    headers: dict[str, str] | None = None,
) -> Answer:
    """One request over http.client: status, headers and body as sent."""
    connection = http.client.HTTPConnection("127.0.0.1", tester.server.server_address[1])
    try:
        connection.request(method, target, body, headers or {})
        response = connection.getresponse()
        return Answer(response.status, response.headers, response.read())
    finally:
        connection.close()


def api(tester: Running, method: str, target: str, body: bytes | None = None) -> Answer:
    headers = {"X-Tester-Token": tester.token}
    if body is not None:
        headers["Content-Type"] = "application/json"
    return ask(tester, method, target, body, headers)


def policy_of(header: str) -> dict[str, list[str]]:
    directives = [part.split() for part in header.split(";") if part.strip()]
    return {name: values for name, *values in directives}


# --- the headers of every answer ---------------------------------------------------------


def test_every_answer_is_under_the_strict_policy_and_never_cached(
    start_tester: Callable[..., Running],
) -> None:
    """The page, a static file, API answers and refusals alike: the page's
    Content-Security-Policy, no sniffing, no referrer, ``no-store`` (an API
    answer holds a robots.txt, the store's contents, the token's page), and
    their length."""
    tester = start_tester()
    port = tester.server.server_address[1]
    answers = {
        "page": ask(tester, "GET", "/"),
        "script": ask(tester, "GET", "/static/tester.js"),
        "config": api(tester, "GET", "/api/config"),
        "test": api(tester, "POST", "/api/test", json.dumps({"robots": BODY}).encode()),
        "no such page": ask(tester, "GET", "/nope"),
        "no token": ask(tester, "GET", "/api/config"),
        "not an object": api(tester, "POST", "/api/test", b"[]"),
        "another host": ask(tester, "GET", "/", headers={"Host": f"evil.example:{port}"}),
    }
    statuses = {name: answer.status for name, answer in answers.items()}
    assert statuses == {
        "page": 200,
        "script": 200,
        "config": 200,
        "test": 200,
        "no such page": 404,
        "no token": 403,
        "not an object": 400,
        "another host": 421,
    }
    for name, answer in answers.items():
        headers = answer.headers
        assert (name, policy_of(headers["Content-Security-Policy"])) == (name, POLICY)
        assert (name, headers["Cache-Control"]) == (name, "no-store")
        assert (name, headers["X-Content-Type-Options"]) == (name, "nosniff")
        assert (name, headers["Referrer-Policy"]) == (name, "no-referrer")
        assert (name, headers["Content-Length"]) == (name, str(len(answer.body)))


# --- the token and what a call refuses -----------------------------------------------------


def test_each_run_has_its_own_token_of_192_random_bits(
    start_tester: Callable[..., Running],
) -> None:
    """The token no other page can know: 24 random bytes written as 32
    URL-safe characters, new for each run, and in the page it serves."""
    tokens = {tester_server.TesterConfig().token for _ in range(50)}
    assert len(tokens) == 50
    assert all(re.fullmatch(r"[A-Za-z0-9_-]{32}", token) for token in tokens)
    tester = start_tester()
    assert f'content="{tester.token}"'.encode() in ask(tester, "GET", "/").body


def test_config_needs_the_runs_token_too(start_tester: Callable[..., Running]) -> None:
    """``/api/config`` names the crawl's store and tokens: for the page only."""
    tester = start_tester(agents=("mybot-news,mybot",), purposes=("train-ai",))
    for headers in ({}, {"X-Tester-Token": "guess"}):
        refused = ask(tester, "GET", "/api/config", headers=headers)
        assert refused.status == 403 and b"mybot" not in refused.body
    config = api(tester, "GET", "/api/config")
    assert config.status == 200
    answer = config.json()
    assert (answer["agents"], answer["purposes"], answer["store"]) == (
        ["mybot-news,mybot"],
        ["train-ai"],
        None,
    )
    assert answer["link_limit"] == LINK_LIMIT


@pytest.mark.parametrize("body", [b"[]", b'["robots"]', b'"User-agent: *"', b"5", b"null"])
def test_a_json_body_that_is_not_an_object_is_refused(
    start_tester: Callable[..., Running], body: bytes
) -> None:
    answer = api(start_tester(), "POST", "/api/test", body)
    assert (answer.status, answer.json()) == (400, {"error": "send a JSON object"})


@pytest.mark.parametrize(
    ("data", "error"),
    [
        ({"robots": 5}, "robots must be a string"),
        ({"robots": ["User-agent: *"]}, "robots must be a string"),
        ({"access": True}, "access must be a string"),
        ({"urls": "https://example.com/a"}, "urls must be a list of strings"),
        ({"urls": ["/a", 1]}, "urls must be a list of strings"),
        ({"agents": {"mybot": 1}}, "agents must be a list of strings"),
    ],
)
def test_a_field_of_the_wrong_type_is_refused_and_named(
    start_tester: Callable[..., Running], data: dict[str, Any], error: str
) -> None:
    answer = api(start_tester(), "POST", "/api/test", json.dumps(data).encode())
    assert (answer.status, answer.json()) == (400, {"error": error})


def test_live_and_stored_without_a_url_are_refused(
    start_tester: Callable[..., Running], tmp_path: Path
) -> None:
    (tmp_path / "s.sqlite3").touch()  # an empty file is an empty SQLite database
    tester = start_tester(store=StoreName(str(tmp_path / "s.sqlite3")))
    for target in ("/api/live", "/api/live?url=", "/api/stored", "/api/stored?other=1"):
        answer = api(tester, "GET", target)
        assert (target, answer.status, answer.json()) == (target, 400, {"error": "missing url="})


def test_text_beyond_ascii_is_answered_as_written(start_tester: Callable[..., Running]) -> None:
    """A robots.txt with UTF-8 paths and comments: its lines come back as they
    were written, and its rules decide (the answer is JSON with escapes)."""
    robots = "User-agent: *\nDisallow: /café\n# 日本語のコメント\n"
    data = {"robots": robots, "urls": ["/café", "/tea"], "agents": ["bot"]}
    answer = api(start_tester(), "POST", "/api/test", json.dumps(data).encode())
    assert answer.status == 200
    assert answer.body.isascii()
    got = answer.json()
    assert [line["text"] for line in got["lines"]] == robots.split("\n")  # the editor's lines
    assert [row["verdict"] for row in got["rows"]] == ["disallowed", "allowed"]


# --- the live fetch's cap and defaults -------------------------------------------------------


def test_a_live_file_exactly_at_the_size_cap_is_not_called_cut(
    start_tester: Callable[..., Running],
) -> None:
    tester = start_tester(max_body_bytes=1000)
    at_cap, over = b"#" * 999 + b"\n", b"#" * 1000 + b"\n"
    with (
        SiteServer({"/robots.txt": Reply(200, at_cap)}) as exact,
        SiteServer({"/robots.txt": Reply(200, over)}) as longer,
    ):
        whole = api(tester, "GET", f"/api/live?url={exact.url('/')}").json()
        cut = api(tester, "GET", f"/api/live?url={longer.url('/')}").json()
    assert (whole["cut"], whole["body"]) == (False, at_cap.decode())
    assert (cut["cut"], cut["body"]) == (True, over[:1000].decode())


def chain(hops: int) -> dict[str, Callable[[str], Redirect | Reply]]:
    """/robots.txt redirected ``hops`` times (to ``/robots.txt?hop=N``: the
    Tester follows redirects to /robots.txt paths only), then the file."""
    asked = [0]

    def answer(host: str) -> Redirect | Reply:
        asked[0] += 1
        if asked[0] <= hops:
            return Redirect(f"/robots.txt?hop={asked[0]}")
        return Reply(200, BODY.encode())

    return {"/robots.txt": answer}


def test_a_tester_started_without_options_fetches_as_a_crawl_with_default_settings(
    start_tester: Callable[..., Running],
) -> None:
    """``scrapy-rep tester`` with no option: the size cap and the redirect
    limit a crawl has when REP_MAX_BODY_BYTES and REP_FOLLOW_REDIRECTS are not
    set (the first 512,000 bytes, 5 hops)."""
    crawl = Config.from_settings(Settings())
    tester = start_tester()
    with (
        SiteServer({"/robots.txt": Huge(crawl.max_body_bytes + 1000)}) as huge,
        SiteServer(chain(crawl.max_redirects)) as far,
        SiteServer(chain(crawl.max_redirects + 1)) as too_far,
    ):
        big = api(tester, "GET", f"/api/live?url={huge.url('/')}").json()
        reached = api(tester, "GET", f"/api/live?url={far.url('/')}").json()
        over = api(tester, "GET", f"/api/live?url={too_far.url('/')}").json()
    assert (big["cut"], len(big["body"])) == (True, crawl.max_body_bytes)
    assert (reached["kind"], reached["hops"], reached["body"]) == (
        "success",
        crawl.max_redirects,
        BODY,
    )
    assert over["kind"] == "unavailable"
    assert f"over {crawl.max_redirects} redirects" in over["message"]


def test_the_stored_answer_names_the_origin_the_store_and_when(
    start_tester: Callable[..., Running], tmp_path: Path
) -> None:
    (tmp_path / "s.sqlite3").touch()
    store = StoreName(str(tmp_path / "s.sqlite3"))
    tester = start_tester(store=store)
    before = time.time()
    answer = api(tester, "GET", "/api/stored?url=https://Example.com/a/b?c=d")
    after = time.time()
    assert answer.status == 200
    got = answer.json()
    assert (got["kept"], got["origin"], got["store"]) == (
        False,
        "https://example.com",
        store.shown(),
    )
    assert before <= got["now"] <= after


def test_a_failure_inside_a_call_answers_500_and_the_tester_goes_on(
    start_tester: Callable[..., Running], capfd: pytest.CaptureFixture[str]
) -> None:
    """A call that breaks (here a redirect limit no setting can give, under
    which the live fetch cannot run) answers 500 with a fixed message (the
    error's text may hold a path or a stored value: it goes to the
    terminal), and the next call is answered: the connection's thread did
    not die silently."""
    tester = start_tester(max_redirects=-1)
    with SiteServer({"/robots.txt": Reply(200, BODY.encode())}) as site:
        broken = api(tester, "GET", f"/api/live?url={site.url('/')}")
    assert broken.status == 500
    assert broken.json() == {"error": "the Tester failed on this request (a bug): see its terminal"}
    assert "AssertionError" in capfd.readouterr().err
    assert api(tester, "GET", "/api/config").status == 200


# --- serve(): what ``scrapy-rep tester`` runs ---------------------------------------------


def test_serve_and_the_config_made_in_python_are_what_scrapy_rep_tester_serves(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``serve(TesterConfig())`` is ``scrapy-rep tester`` with no option: the
    same crawler, fetch timeout, limits and address (127.0.0.1:8765, as
    docs/tester.md gives it); only the run's token differs."""
    served: list[tuple[tester_server.TesterConfig, str, int]] = []

    def record(config: tester_server.TesterConfig, host: str, port: int) -> int:
        served.append((config, host, port))
        return 0

    monkeypatch.setattr(tester_server, "serve", record)
    assert cli.main(["tester"]) == 0
    [(config, host, port)] = served
    assert replace(config, token="") == replace(tester_server.TesterConfig(), token="")
    parameters = inspect.signature(serve).parameters
    assert (parameters["host"].default, parameters["port"].default) == (host, port)
    assert (host, port) == ("127.0.0.1", 8765)


@dataclass
class Served:
    code: int | None = None
    printed: str = ""  # stdout as it was flushed while serving
    warned: str = ""  # stderr
    page: int = 0  # the page's status, asked while serving
    refused_after: bool = False  # its port closed once serve() returned
    failures: list[BaseException] = field(default_factory=list)


@contextlib.contextmanager
def sigint_raises() -> Iterator[None]:
    """Ctrl+C raises KeyboardInterrupt in the main thread, as in a shell."""
    before = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, before)


def read_line(fd: int, timeout: float) -> str:
    """A line from a pipe, as soon as it is written; what came if none does."""
    data = b""
    deadline = time.monotonic() + timeout
    while not data.endswith(b"\n"):
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([fd], [], [], left)[0]:
            break
        chunk = os.read(fd, 4096)
        if not chunk:
            break
        data += chunk
    return data.decode()


def serve_here(config: tester_server.TesterConfig, host: str) -> Served:
    """``serve()`` in the main thread, as ``scrapy-rep tester`` runs it. Another
    thread waits for its address on stdout (a pipe: only what was flushed
    arrives), holds an idle connection open, asks for the page, then presses
    Ctrl+C (SIGINT to the main thread)."""
    served = Served()
    read_end, write_end = os.pipe()
    out = io.TextIOWrapper(io.FileIO(write_end, "w"), encoding="utf-8")  # not line-buffered
    err = io.StringIO()
    lock = threading.Lock()
    returned = threading.Event()
    idle: list[socket.socket] = []
    ports: list[int] = []

    def visit_then_ctrl_c() -> None:
        try:
            served.printed = read_line(read_end, PATIENCE)
            found = re.search(r"http://[^ ]+:(\d+)/", served.printed)
            if found is not None:
                port = int(found.group(1))
                ports.append(port)
                idle.append(socket.create_connection(("127.0.0.1", port), PATIENCE))
                served.page = status_of(get(port, "/", f"127.0.0.1:{port}"))
        except BaseException as exc:  # said by the test, in the main thread
            served.failures.append(exc)
        finally:
            with lock:
                if not returned.is_set():
                    signal.pthread_kill(threading.main_thread().ident or 0, signal.SIGINT)

    helper = threading.Thread(target=visit_then_ctrl_c, daemon=True)
    try:
        with sigint_raises():
            helper.start()
            try:
                with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                    served.code = serve(config, host, 0)
                with lock:
                    returned.set()
            except KeyboardInterrupt:
                pytest.fail("Ctrl+C went through serve()")
            helper.join(PATIENCE)
        if ports:
            try:
                socket.create_connection(("127.0.0.1", ports[0]), PATIENCE).close()
            except ConnectionRefusedError:
                served.refused_after = True
    finally:
        for sock in idle:
            sock.close()
        out.close()
        os.close(read_end)
    served.warned = err.getvalue()
    return served


@pytest.mark.parametrize(
    ("host", "warns"), [("127.0.0.1", False), ("localhost", False), ("0.0.0.0", True)]
)
def test_serve_prints_its_address_at_once_warns_off_loopback_and_stops_on_ctrl_c(
    host: str, warns: bool
) -> None:
    """The address is on stdout before the first request (a script waiting
    for it reads it at once); a warning on stderr only off loopback; Ctrl+C
    stops it with exit code 0 and closes its port, idle connection or not."""
    served = serve_here(
        tester_server.TesterConfig(limits=Limits(request_timeout=PATIENCE * 3)), host
    )
    assert served.failures == []
    assert re.fullmatch(
        r"robots\.txt tester: http://\S+:\d+/ \(Ctrl\+C to stop\)\n", served.printed
    )
    assert served.page == 200
    assert (served.code, served.refused_after) == (0, True)
    if warns:
        assert served.warned.startswith(f"warning: the tester listens on {host}, not on loopback")
        names = "It answers to 0.0.0.0, 127.0.0.1, localhost; add the name people use"
        assert f"{names} with --allow-host NAME" in served.warned
    else:
        assert served.warned == ""
