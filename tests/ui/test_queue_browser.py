"""The Queue tab in a real browser: three books queued at once with a preset, one moved to the top
and one held, the queue paused and resumed; the worker obeys (the store's start times show it)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from omni_web.jobs import JobState, JobStore
from omni_web.library import Preset, PresetBook
from omni_web.server import ServerManager
from omni_web.settings import load_settings
from tests.epub_builder import make_epub, xhtml
from tests.fakes.sgl_omni import free_port
from tests.ui.browser_kit import expect, require_chromium, shot, tab
from tests.ui.conftest import MODEL
from tests.ui.helpers import AppProcess, cache_model, prepare_root, start_webapp, wait_for

pytestmark = pytest.mark.browser
TITLES = ("Queue One", "Queue Two", "Queue Three")


def _books(folder) -> list[str]:
    text = "<p>The river ran past the mill all night, and nobody in the village slept through it.</p>" * 3
    return [
        str(
            make_epub(
                folder / f"{title.lower().replace(' ', '-')}.epub",
                (("c1.xhtml", xhtml(f"<h1>One</h1>{text}")), ("c2.xhtml", xhtml(f"<h1>Two</h1>{text}"))),
                title=title,
            )
        )
        for title in TITLES
    ]


@pytest.fixture(scope="module")
def app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[AppProcess]:
    require_chromium()
    base = tmp_path_factory.mktemp("queue-browser")
    paths = prepare_root(base / "home", model_keys=(MODEL,))
    cache_model(base / "hf-cache", MODEL)
    PresetBook(paths.presets_file).save(
        Preset(name="Quick", model_key=MODEL, voice={"kind": "speaker", "name": "Vivian"}, qa_level="off")
    )
    running = start_webapp(
        paths,
        port=free_port(),
        host="0.0.0.0",
        env={"HF_HUB_CACHE": str(base / "hf-cache")},
        log_path=base / "webapp.log",
    )
    running.paths = paths  # type: ignore[attr-defined] - the test reads the job store behind the page
    try:
        yield running
    finally:
        running.stop()
        ServerManager(paths, load_settings(paths)).stop(grace_s=5.0)


def _pick(page, elem_id: str, option: str, typed: str | None = None) -> None:
    box = page.locator(f"#{elem_id} input")
    box.click()
    if typed is not None:
        box.fill(typed)  # a dropdown showing a value lists only the options matching what it shows
    page.get_by_role("option", name=option).click()
    expect(box).to_have_value(option)


def test_queue_controls_steer_the_worker(page, app, tmp_path) -> None:
    store = JobStore(app.paths.jobs_db)
    tab(page, "Queue")
    page.locator("#queue-pause-all").click()
    expect(page.locator("#queue-status")).to_contain_text("Queue paused")
    page.locator("#queue-many").get_by_text("Queue many books").click()
    page.locator("#queue-books input[type=file]").set_input_files(_books(tmp_path))
    _pick(page, "queue-preset", "Quick")
    page.locator("#queue-books-go").click()
    expect(page.locator("#queue-books-report")).to_contain_text("3 of 3 books queued", timeout=60_000)
    table = page.locator("#queue-table")
    for title in TITLES:
        expect(table).to_contain_text(title)
    by_title = {job.title: job for job in store.queued()}
    one, two, three = (by_title[title] for title in TITLES)
    _pick(page, "queue-pick", f"#3 Queue Three ({three.id})", three.id)
    page.locator("#queue-top").click()
    expect(table.get_by_role("row").nth(1)).to_contain_text("Queue Three")
    _pick(page, "queue-pick", f"#2 Queue One ({one.id})", one.id)
    page.locator("#queue-hold").click()
    expect(table.get_by_role("row").nth(2)).to_contain_text("paused")
    shot(page, "queue-steered")
    assert [job.title for job in store.queued()] == ["Queue Three", "Queue One", "Queue Two"]
    page.locator("#queue-resume-all").click()
    wait_for(
        lambda: all(store.get(j.id).state.finished for j in (three, two)),
        timeout_s=240,
        what="the two released books to finish",
    )
    assert [store.get(j.id).state for j in (three, two)] == [JobState.DONE] * 2, store.get(three.id).error
    assert store.get(one.id).state is JobState.QUEUED  # held in its place while the others ran
    assert store.get(three.id).started_at < store.get(two.id).started_at  # the move to the top was obeyed
    expect(table).not_to_contain_text("Queue Two", timeout=30_000)
    _pick(page, "queue-pick", f"#1 Queue One ({one.id})", one.id)
    page.locator("#queue-release").click()
    wait_for(lambda: store.get(one.id).state.finished, timeout_s=240, what="the released book to finish")
    assert store.get(one.id).state is JobState.DONE, store.get(one.id).error
    expect(page.locator("#queue-status")).to_contain_text("0 waiting", timeout=30_000)
