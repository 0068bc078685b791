"""The Tester against a hostile link and a hostile site: the rows one test
may ask for, and what a live fetch may reach (docs/tester.md, "Safety").
Real Testers and sites on 127.0.0.1 and 127.0.0.2; the page in Chromium.

Every test server is on loopback, and a Tester asked for a loopback origin
may reach loopback (testing a local site stays possible). To play a public
site, a test gives the Tester a ``Network`` (the seam of ``fetch.guard``)
in which ``public.test`` resolves to a global address, and connections to
that address go to a server on 127.0.0.1: the guard sees what it would see
for a public site, and the answer is a real server's.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import pytest
from crawler.servers import Redirect, Reply, SiteServer
from selenium.webdriver.support.ui import WebDriverWait

from scrapy_rep.tools.fetch.guard import Network, is_internal
from scrapy_rep.tools.tester import calls as tester_calls
from scrapy_rep.tools.tester.server import MAX_ROWS

from .conftest import Running
from .test_tester_browser import page_url


def test_a_test_of_more_rows_than_the_cap_is_refused_with_413_before_any_work(
    start_tester: Callable[..., Running],
) -> None:
    """URLs x crawlers past 10,000: 413 and a message naming the numbers. A
    64 KB link can name 5,458 URLs and 4,094 crawlers (22 million rows)."""
    tester = start_tester()
    urls = [f"/p{n}" for n in range(101)]
    agents = [f"bot{n}" for n in range(100)]
    status, answer = tester.call("/api/test", {"robots": "", "urls": urls, "agents": agents})
    assert status == 413
    assert answer["error"] == (
        "101 URLs x 100 crawlers = 10,100 results: at most 10,000 are tested at once; "
        "test fewer URLs or crawlers"
    )
    status, answer = tester.call("/api/test", {"robots": "", "urls": urls[:100], "agents": agents})
    assert status == 200 and len(answer["rows"]) == MAX_ROWS == 10_000


def test_a_link_past_the_cap_makes_one_refused_request_and_the_page_says_why(
    browser: Any, start_tester: Callable[..., Running], monkeypatch: Any
) -> None:
    """Opening a link that asks for 10,100 rows: the page sends its one test,
    gets the 413 and shows its message; it asks nothing more without a click."""
    calls: list[str] = []
    lock = threading.Lock()
    handled = tester_calls.tested

    def counted(config: Any, data: dict[str, Any]) -> dict[str, Any]:
        with lock:
            calls.append("test")
        return handled(config, data)

    monkeypatch.setattr(tester_calls, "tested", counted)
    tester = start_tester()
    urls = [f"/p{n}" for n in range(101)]
    agents = [f"bot{n}" for n in range(100)]
    browser.get(page_url(tester, robots="User-agent: *\nDisallow: /p1\n", url=urls, agent=agents))
    WebDriverWait(browser, 20).until(
        lambda d: d.execute_script("return document.body.dataset.state") == "error"
    )
    status = browser.find_element("id", "status").text
    assert "at most 10,000 are tested at once" in status and "10,100 results" in status
    browser.execute_script("return 0")  # one more round trip to the page
    assert calls == ["test"]


# --- live fetches: what a redirect may reach ---------------------------------------

ROBOTS = b"User-agent: *\nDisallow: /private\n"
#: A global address (not a documentation range, which Python counts as private).
PUBLIC = "93.184.215.14"


def network(names: dict[str, str], routes: dict[str, str]) -> Network:
    """Names resolved as ``names`` says (else as the system does), and
    connections to an address in ``routes`` made to its loopback stand-in."""
    system = Network()

    def resolve(host: str, port: int) -> list[str]:
        return [names[host]] if host in names else system.resolve(host, port)

    def connect(address: str, port: int, timeout: float) -> Any:
        return system.connect(routes.get(address, address), port, timeout)

    return Network(resolve, connect)


def inside() -> SiteServer:
    """A service of the user's network, on 127.0.0.2, with a dangerous GET."""
    return SiteServer(
        {
            "/admin/delete": Reply(200, b"deleted"),
            "/robots.txt": Reply(200, ROBOTS, {"Content-Type": "text/plain"}),
        },
        address="127.0.0.2",
    )


def hostile(target: str) -> SiteServer:
    """A site whose robots.txt redirects to ``target``."""
    return SiteServer({"/robots.txt": Redirect(target, 301)})


@pytest.mark.parametrize("how", ["address", "name"])
def test_a_public_sites_redirect_to_an_internal_address_is_refused_unfetched(
    start_tester: Callable[..., Running], how: str
) -> None:
    """public.test (a global address) redirects to 127.0.0.2, by address or
    by a name that resolves there: 403 naming both, and the internal service
    gets no request at all."""
    with inside() as service:
        host = "127.0.0.2" if how == "address" else "intranet.test"
        with hostile(service.url("/robots.txt", host)) as site:
            net = network(
                {"public.test": PUBLIC, "intranet.test": "127.0.0.2"}, {PUBLIC: "127.0.0.1"}
            )
            tester = start_tester(network=net)
            asked = f"http://public.test:{site.port}/"
            status, answer = tester.call("/api/live?url=" + asked)
            assert site.count("/robots.txt") == 1  # the public site was fetched
            assert service.paths() == []  # and its redirect was not followed
    assert status == 403
    assert answer["error"] == (
        f"http://public.test:{site.port}/robots.txt redirects to "
        f"http://{host}:{service.port}/robots.txt, and {host} is 127.0.0.2, an address of "
        "this machine or its network (loopback, private, link-local or unspecified): the "
        "Tester does not follow a public site there"
    )


def test_a_typed_local_origin_may_redirect_inside_and_its_robots_txt_is_shown(
    start_tester: Callable[..., Running],
) -> None:
    """Testing a local site stays possible: the origin typed is 127.0.0.1, so
    its redirect to 127.0.0.2's /robots.txt is followed and the file shown."""
    with inside() as service, hostile(service.url("/robots.txt", "127.0.0.2")) as site:
        tester = start_tester()
        status, answer = tester.call("/api/live?url=" + site.url("/"))
    assert status == 200
    assert (answer["kind"], answer["hops"], answer["body"]) == ("success", 1, ROBOTS.decode())
    assert answer["final_url"] == service.url("/robots.txt", "127.0.0.2")


def test_a_redirect_to_a_page_that_is_not_robots_txt_is_named_not_fetched(
    start_tester: Callable[..., Running],
) -> None:
    """Even from a local origin: a robots.txt redirecting to
    ``/admin/delete`` makes the Tester say where, and send no GET there
    (a crawler follows it, RFC 9309 §2.3.1.2; the Tester shows robots.txt
    files only). The Tester used to send the GET and return the page."""
    with inside() as service:
        target = service.url("/admin/delete?confirm=1", "127.0.0.2")
        with hostile(target) as site:
            tester = start_tester()
            status, answer = tester.call("/api/live?url=" + site.url("/"))
            assert service.paths() == []
    assert status == 403
    assert answer["error"] == (
        f"{site.url('/robots.txt')} redirects to {target}: not a /robots.txt path, so the "
        "Tester does not fetch it (a crawler would, and would read that page as the rules: "
        "paste it into the editor to test it)"
    )


def test_the_connection_goes_to_the_address_checked_not_a_second_lookup(
    start_tester: Callable[..., Running],
) -> None:
    """DNS rebinding between the check and the connection: a name that
    answers a global address, then 127.0.0.2. The Tester resolves it once
    and connects to the address it checked (routed to the public stand-in)."""
    answers = iter([PUBLIC, "127.0.0.2", "127.0.0.2"])
    asked: list[str] = []
    system = Network()

    def resolve(host: str, port: int) -> list[str]:
        return [next(answers)] if host == "rebind.test" else system.resolve(host, port)

    def connect(address: str, port: int, timeout: float) -> Any:
        asked.append(address)
        return system.connect("127.0.0.1" if address == PUBLIC else address, port, timeout)

    with SiteServer({"/robots.txt": Reply(200, ROBOTS)}) as site:
        tester = start_tester(network=Network(resolve, connect))
        status, answer = tester.call(f"/api/live?url=http://rebind.test:{site.port}/")
    assert (status, answer["body"], asked) == (200, ROBOTS.decode(), [PUBLIC])


@pytest.mark.parametrize(
    ("address", "internal"),
    [
        ("127.0.0.2", True),
        ("10.1.2.3", True),
        ("169.254.169.254", True),  # a cloud's metadata service
        ("0.0.0.0", True),
        ("::1", True),
        ("fe80::1%eth0", True),
        ("::ffff:127.0.0.1", True),
        ("100.64.0.1", True),  # shared (carrier NAT)
        ("fd00::1", True),
        (PUBLIC, False),
        ("2606:2800:220:1:248:1893:25c8:1946", False),
    ],
)
def test_internal_addresses_are_those_that_are_not_global(address: str, internal: bool) -> None:
    assert is_internal(address) is internal
