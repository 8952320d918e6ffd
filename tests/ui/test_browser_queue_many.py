"""'Queue many books' as a newcomer meets it: no preset saved anywhere, twenty books chosen at once
and a model picked in the form itself; every book is queued (it used to refuse them all until a
preset existed), each as its own job with that model."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from omni_web.catalog import get_entry
from tests.epub_builder import make_epub, xhtml
from tests.ui.browser_kit import expect, serve_webapp, shot, tab
from tests.ui.conftest import MODEL
from tests.ui.helpers import AppProcess

pytestmark = pytest.mark.browser
BOOKS = 20


@pytest.fixture(scope="module")
def app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[AppProcess]:
    yield from serve_webapp(tmp_path_factory, "queue-many-app", {})


def _books(folder) -> list[str]:
    text = "<p>The tide came in over the flats and the gulls went quiet for a while.</p>"
    return [
        str(make_epub(folder / f"tide-{n:02d}.epub", (("c1.xhtml", xhtml(f"<h1>Tide {n}</h1>{text}")),),
                      title=f"Tide Book {n}"))
        for n in range(1, BOOKS + 1)
    ]


def test_twenty_books_queue_with_a_model_chosen_in_the_form_and_no_preset(page, tmp_path):
    books = _books(tmp_path)
    tab(page, "Queue")
    page.get_by_text("Queue many books").click()
    expect(page.locator("#queue-preset input")).to_have_value("")  # no preset exists
    page.locator("#queue-books input[type=file]").set_input_files(books)
    label = get_entry(MODEL).label
    page.locator("#queue-model input").click()
    page.get_by_role("option", name=label, exact=True).click()
    expect(page.locator("#queue-model input")).to_have_value(label)
    page.locator("#queue-books-go").click()
    report = page.locator("#queue-books-report")
    expect(report).to_contain_text(f"{BOOKS} of {BOOKS} books queued", timeout=180_000)
    assert "not queued" not in report.inner_text()
    shot(page, "queue-many-model")
    tab(page, "Jobs")
    for n in (1, BOOKS):
        expect(page.locator("#jobs-table")).to_contain_text(f"Tide Book {n}", timeout=60_000)
    expect(page.locator("#jobs-table")).to_contain_text(label)
