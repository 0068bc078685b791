"""The Tester's page as a user works it (issue 44), in a real headless Chromium.

The editor numbers its own lines and lights the line that decides the
selected result; the results are reached and worked with the keyboard; lint's
findings are listed with their fixes; an empty page warns of nothing; the
page fits a 400 px phone screen; and a test too big for a link says so.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import WebDriverWait

from scrapy_rep.tools.tester.server import LINK_LIMIT

from .conftest import Running, lit, narrow, rows, screenshot, wait_ready
from .test_tester_browser import SHARED_ROBOTS

#: 61 lines: line n (2-59) disallows /section-n/; line 61 is a sitemap lint
#: reports (not an absolute URL), far below what the editor shows at once.
LONG = (
    "User-agent: *\n"
    + "".join(f"Disallow: /section-{n}/\n" for n in range(2, 60))
    + "Allow: /section-7/open\n"
    + "Sitemap: /sitemap.xml\n"
)


def open_test(browser: Any, tester: Running, **query: Any) -> None:
    browser.get(tester.url + "?" + urlencode(query, doseq=True))
    wait_ready(browser)


def in_editor_view(browser: Any, line: int) -> bool:
    """Whether the editor's line ``line`` is inside the editor's frame."""
    shown: bool = browser.execute_script(
        "const frame = document.getElementById('editor').getBoundingClientRect();"
        "const line = document.querySelector(`#editor-lines .ln[data-line='${arguments[0]}']`)"
        ".getBoundingClientRect();"
        "return line.top >= frame.top && line.bottom <= frame.bottom;",
        line,
    )
    return shown


def wrapped_alike(browser: Any) -> tuple[float, float]:
    """The textarea's text height, and the height of the numbered copy of its
    lines (without the spare line below): equal when both wrap alike."""
    heights: list[float] = browser.execute_script(
        "const area = document.getElementById('robots');"
        "const copy = document.getElementById('editor-lines');"
        "const spare = parseFloat(getComputedStyle(copy).paddingBottom) -"
        "  parseFloat(getComputedStyle(area).paddingBottom);"
        "const kept = area.style.height; area.style.height = '0px';"
        "const text = area.scrollHeight; area.style.height = kept;"
        "return [text, copy.getBoundingClientRect().height - spare];"
    )
    return heights[0], heights[1]


def test_the_selected_result_lights_its_deciding_line_in_the_numbered_editor(
    browser: Any, start_tester: Callable[..., Running]
) -> None:
    """Issue 44: line numbers in the editor itself; selecting a result lights
    only its deciding line there, scrolled into the editor's view (the page
    stays put), and marks the row; a finding's line button points at its line."""
    tester = start_tester()
    open_test(browser, tester, robots=LONG, url=["/section-55/x", "/section-3/y"], agent=["bot"])
    numbers = browser.execute_script(
        "return Array.from(document.querySelectorAll('#editor-lines .ln'))"
        ".map(l => [Number(l.dataset.line), l.textContent])"
    )
    assert numbers[:2] == [[1, "User-agent: *"], [2, "Disallow: /section-2/"]]
    assert numbers[54] == [55, "Disallow: /section-55/"] and len(numbers) == 62
    assert lit(browser) == [] and not in_editor_view(browser, 55)
    first = browser.find_elements(By.CSS_SELECTOR, "#results tbody tr")[0]
    browser.execute_script("arguments[0].scrollIntoView({block: 'center'})", first)
    page_at = browser.execute_script("return window.scrollY")
    first.find_element(By.CSS_SELECTOR, "td.url").click()
    assert lit(browser) == [55]  # this result's line only
    assert in_editor_view(browser, 55)
    assert browser.execute_script("return window.scrollY") == page_at
    button = first.find_element(By.CSS_SELECTOR, "button.pick")
    assert "selected" in first.get_attribute("class").split()
    assert button.get_attribute("aria-pressed") == "true"

    finding = browser.find_element(By.CSS_SELECTOR, '#findings li[data-line="61"]')
    assert "sitemap-not-absolute" in finding.text and "Fix: write the full URL" in finding.text
    assert (
        browser.execute_script(
            "return document.querySelector(\"#editor-lines .ln[data-line='61']\").className"
        )
        == "ln error note"  # lint's error, and what a Sitemap line does
    )
    finding.find_element(By.CSS_SELECTOR, "button.goto").click()
    assert in_editor_view(browser, 61)
    pointed = browser.find_elements(By.CSS_SELECTOR, "#editor-lines .ln.pointed")
    assert [line.get_attribute("data-line") for line in pointed] == ["61"]

    area = browser.find_element(By.ID, "robots")  # an edit keeps the selection, re-tested
    area.send_keys(Keys.CONTROL, Keys.HOME)
    area.send_keys("# moved down a line\n")
    WebDriverWait(browser, 20).until(lambda d: lit(d) == [56])
    assert rows(browser)[0]["line"] == "56"
    text, copy = wrapped_alike(browser)
    assert abs(text - copy) < 1, (text, copy)


def test_results_are_reached_and_worked_with_the_keyboard(
    browser: Any, start_tester: Callable[..., Running]
) -> None:
    """Issue 44: Tab reaches the first result after the form; Enter selects
    it, Up and Down move the selection, Space on the selected one clears it."""
    tester = start_tester()
    open_test(browser, tester, robots=LONG, url=["/section-55/x", "/section-3/y"], agent=["bot"])
    boxes = browser.find_elements(By.CSS_SELECTOR, "#purposes input")
    browser.execute_script("arguments[0].focus()", boxes[-1])
    keys = ActionChains(browser)

    def press(key: str) -> Any:
        keys.send_keys(key).perform()
        return browser.switch_to.active_element

    focused = press(Keys.TAB)
    results = browser.find_elements(By.CSS_SELECTOR, "#results tbody tr")
    assert focused == results[0].find_element(By.CSS_SELECTOR, "button.pick")
    assert focused.accessible_name == "disallowed: /section-55/x for bot"
    press(Keys.ENTER)
    assert lit(browser) == [55] and in_editor_view(browser, 55)
    focused = press(Keys.ARROW_DOWN)
    assert focused == results[1].find_element(By.CSS_SELECTOR, "button.pick")
    assert lit(browser) == [3]
    assert [tr.get_attribute("class") for tr in results] == ["", "selected"]
    press(Keys.SPACE)
    assert lit(browser) == [] and focused.get_attribute("aria-pressed") == "false"
    press(Keys.ARROW_UP)
    assert lit(browser) == [55] and results[0].get_attribute("class") == "selected"


def test_an_empty_page_warns_of_nothing(browser: Any, start_tester: Callable[..., Running]) -> None:
    """Issue 44: a fresh page said "(0 error(s), 1 warning(s))" before anything
    was typed; lint's counts come with the first line."""
    tester = start_tester()
    browser.get(tester.url)
    wait_ready(browser)
    summary = browser.find_element(By.ID, "lint-summary")
    assert summary.text == "nothing to check: the file is empty"
    assert browser.find_elements(By.CSS_SELECTOR, "#findings li") == []
    assert browser.find_element(By.ID, "robots").accessible_name == "Edit robots.txt"
    browser.find_element(By.ID, "robots").send_keys("Disallow: /x")
    WebDriverWait(browser, 20).until(lambda d: summary.text == "1 error, 1 warning")


#: Words as the page shows them, split on white space, drawn on more than
#: one line though they would fit on one (``disallo|wed``); a word wider
#: than its box (a long URL) has to break.
BROKEN_WORDS = """
const broken = [];
for (const root of document.querySelectorAll(arguments[0])) {
  const walk = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
  for (let node = walk.nextNode(); node; node = walk.nextNode()) {
    let box = node.parentElement;
    while (getComputedStyle(box).display.startsWith("inline")) box = box.parentElement;
    for (const match of node.data.matchAll(/\\S+/g)) {
      const range = document.createRange();
      range.setStart(node, match.index);
      range.setEnd(node, match.index + match[0].length);
      const rects = Array.from(range.getClientRects());
      const tops = new Set(rects.map((r) => Math.round(r.top)));
      const width = rects.reduce((sum, r) => sum + r.width, 0);
      if (tops.size > 1 && width <= box.clientWidth) broken.push(match[0]);
    }
  }
}
return broken;
"""


def test_a_400px_phone_screen_shows_the_page_without_sideways_scrolling(
    browser: Any, start_tester: Callable[..., Running]
) -> None:
    """Issue 44: at 400 px the page was 443 px wide, the table broke words
    (``disallo|wed``), and with no viewport meta a phone laid it out 980 px
    wide. Emulated as a phone (which honours the viewport meta, or lays the
    page out 980 px wide without it)."""
    tester = start_tester()
    urls = ["/cart/x", "/private/a", "/private/press/1", "/doc.pdf"]
    long_line = "Disallow: /a-long-path/" + "segment/" * 12 + "end\n"
    robots = SHARED_ROBOTS.replace("User-agent: *\n", "User-agent: *\n" + long_line)
    with narrow(browser, 400):
        open_test(
            browser,
            tester,
            robots=robots,
            url=urls,
            agent=["mybot", "googlebot"],
            purpose=["train-ai"],
        )
        widths = browser.execute_script(
            "return [window.innerWidth, document.documentElement.scrollWidth,"
            " document.body.scrollWidth]"
        )
        assert widths == [400, 400, 400]
        browser.find_elements(By.CSS_SELECTOR, "#results tbody tr")[1].click()
        assert lit(browser) == [9]
        shown = "#results tbody, #findings, #legend, #fetch-info, header"
        assert browser.execute_script(BROKEN_WORDS, shown) == []
        text, copy = wrapped_alike(browser)
        assert abs(text - copy) < 1, (text, copy)
        assert browser.execute_script(  # the long line wraps, beside its number
            "return document.querySelector(\"#editor-lines .ln[data-line='3']\")"
            ".getClientRects()[0].height"
        ) > 3 * browser.execute_script(
            "return document.querySelector(\"#editor-lines .ln[data-line='2']\")"
            ".getClientRects()[0].height"
        )
        browser.execute_script("window.scrollTo(0, 0)")
        screenshot(browser, "narrow", width=400)


def set_text(browser: Any, text: str) -> None:
    """Put ``text`` in the editor as a paste would (typing 70 KB takes long)."""
    browser.execute_script(
        "const area = document.getElementById('robots'); area.value = arguments[0];"
        "area.dispatchEvent(new Event('input', {bubbles: true}));",
        text,
    )


def test_a_test_too_big_for_a_link_says_so_plainly(
    browser: Any, start_tester: Callable[..., Running]
) -> None:
    """Issue 44: a link over the server's limit is refused. The page says the
    file is too big for a link, and offers one again once it fits; a link
    it offers opens the test."""
    tester = start_tester()
    open_test(browser, tester, url=["/a"])
    big = "User-agent: *\n" + "".join(f"Disallow: /{n:05d}/{'a' * 50}\n" for n in range(1100))
    set_text(browser, big)
    note = browser.find_element(By.ID, "share-note")
    WebDriverWait(browser, 20).until(lambda _: "too big for a link" in note.text)
    assert f"{LINK_LIMIT:,} bytes" in note.text
    assert not browser.find_element(By.ID, "share-link").is_displayed()
    address = urlsplit(browser.current_url)
    assert len(address.path + "?" + address.query) <= LINK_LIMIT  # a reload still opens
    assert "robots" not in parse_qs(address.query)  # all but the text
    assert rows(browser)[0]["verdict"] == "allowed"  # the test itself goes on

    fits = big[: big.index("Disallow: /00800/")]
    set_text(browser, fits)
    link = browser.find_element(By.ID, "share-link")
    WebDriverWait(browser, 20).until(lambda _: link.is_displayed())
    assert note.text == ""
    offered = link.get_attribute("href")
    assert len(offered) - len(tester.url) + 1 <= LINK_LIMIT
    browser.get(offered)
    wait_ready(browser)
    assert browser.find_element(By.ID, "robots").get_attribute("value") == fits
