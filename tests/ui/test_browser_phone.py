"""The app on a phone (390x844) in Debian's chromium through ``webapp.py``: no tab is wider than the
screen, and nothing inside a tab scrolls sideways (the jobs table did; a job's long title ran under
the job menu's arrow; the Levels fold's marker stood alone on a line above it). A converted book
gives the Jobs and Shelf tabs real rows."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeoutError

from tests.ui.browser_kit import LONG_S, expect, open_page, serve_webapp, shot, tab, upload_test_book
from tests.ui.helpers import AppProcess

pytestmark = pytest.mark.browser

PHONE = {"width": 390, "height": 844}
TABS = ("Generate", "Jobs", "Shelf", "Queue", "Server", "Models", "Setup", "Settings")

# Every visible element that scrolls sideways (its content wider than its box, overflow-x scrolls)
# or pokes out past the screen's right edge; text areas and code are left to scroll.
OVERFLOWS_JS = """() => {
  // Gradio lays the tab buttons that do not fit out of view, behind its own overflow menu.
  const SKIP = 'textarea, pre, code, .cm-editor, [role=listbox], .tab-container';
  const out = [];
  for (const el of document.querySelectorAll('body *')) {
    const box = el.getBoundingClientRect();
    if (!box.width || !box.height || el.closest(SKIP)) continue;
    const style = getComputedStyle(el);
    if (style.visibility === 'hidden') continue;
    const scrolls = ['auto', 'scroll'].includes(style.overflowX) && el.scrollWidth > el.clientWidth + 2;
    const clipped = el.parentElement && el.parentElement.closest('.ow-scroll');
    if (scrolls || (box.right > window.innerWidth + 2 && !clipped)) {
      out.push(`${el.tagName.toLowerCase()}#${el.id}.${String(el.className).slice(0, 40)}`
               + ` right=${Math.round(box.right)} scroll=${el.scrollWidth}/${el.clientWidth}`);
    }
  }
  return out.slice(0, 20);
}"""


def _open_tab(phone, name: str) -> None:
    """A tab in view is clicked; the others are in the tab row's overflow menu on a phone."""
    shown = phone.get_by_role("tab", name=name, exact=True)
    if shown.is_visible():
        shown.click()
    else:
        # The menu button toggles: a click that lands while a redraw closes the menu leaves it shut,
        # and a redraw may shut it again before the entry is clicked, so open-and-pick is retried
        # whole (full runs waited 30 s on a shut menu, before and after the entry showed).
        entry = phone.locator(".overflow-dropdown").get_by_role("button", name=name, exact=True)
        for attempt in range(5):
            phone.locator(".overflow-menu > button").first.click()
            try:
                entry.wait_for(state="visible", timeout=10_000)
                entry.click(timeout=10_000)
                break
            except PlaywrightTimeoutError:
                if attempt == 4:
                    raise
    expect(phone.locator(f"#tab-{name.lower()}")).to_be_visible()


# How far the job menu's text runs past the left edge of the menu's arrow (0 or less: it stops before).
UNDER_ARROW_JS = """() => {
  const input = document.querySelector('#jobs-pick input');
  const icon = document.querySelector('#jobs-pick .icon-wrap');
  const box = input.getBoundingClientRect();
  return box.right - parseFloat(getComputedStyle(input).paddingRight) - icon.getBoundingClientRect().left;
}"""


# How far below its fold's first line the Levels head starts (0: on the line of the fold's marker;
# it wrapped under an empty '▸' of its own).
LEVELS_DROP_JS = """() => {
  const summary = document.querySelector('#jobs-levels > summary');
  const head = document.querySelector('#jobs-levels-head');
  return head.getBoundingClientRect().top - summary.getBoundingClientRect().top
         - parseFloat(getComputedStyle(summary).paddingTop);
}"""


@pytest.fixture(scope="module")
def app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[AppProcess]:
    yield from serve_webapp(tmp_path_factory, "browser-phone", {})


@pytest.fixture
def phone(browser, app):
    yield from open_page(browser, app, PHONE)


def test_no_tab_is_wider_than_a_phone(page, phone):
    tab(page, "Server")  # a book made on the desktop first, so Jobs and Shelf have rows
    page.locator("#server-start").click()
    expect(page.locator("#server-status-line")).to_contain_text("healthy", timeout=LONG_S * 1000)
    upload_test_book(page, "hefty-water.epub", "Hefty Water")
    page.locator("#gen-generate").click()
    expect(page.get_by_role("tab", name="Jobs", exact=True)).to_have_attribute("aria-selected", "true")
    expect(page.locator("#jobs-table")).to_contain_text("done", timeout=LONG_S * 1000)
    phone.reload()
    expect(phone.get_by_role("tab", name="Jobs", exact=True)).to_be_visible(timeout=60_000)
    found = {}
    for name in TABS:
        _open_tab(phone, name)
        if name == "Jobs":
            assert phone.evaluate(UNDER_ARROW_JS) <= 1, "the job menu's text runs under its arrow"
            # The Levels fold comes with the live refresh after the tab opens, not with the tab.
            expect(phone.locator("#jobs-levels > summary #jobs-levels-head")).to_be_attached(timeout=60_000)
            drop = phone.evaluate(LEVELS_DROP_JS)
            assert drop < 8, f"the Levels head starts {drop:.0f} px under its fold marker's line"
        shot(phone, f"phone-{name.lower()}")
        found[name] = (phone.evaluate("document.documentElement.scrollWidth"), phone.evaluate(OVERFLOWS_JS))
    wide = {name: v for name, v in found.items() if v[0] > PHONE["width"] + 2 or v[1]}
    assert not wide, "\n".join(f"{k}: {v}" for k, v in wide.items())
