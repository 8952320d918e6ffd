"""The watched inbox: dropped books become jobs with the inbox's preset once they settle; a file
still being written waits; a corrupt one lands in failed/ with its reason."""

from __future__ import annotations

import threading
import time

import pytest
import yaml

from omni_web.library import InboxWatcher, Preset
from omni_web.library.inbox import inbox_refusals
from omni_web.pipeline.request import ConvertRequest
from omni_web.services import AppServices
from tests.conftest import DATA_DIR
from tests.epub_builder import make_epub, xhtml

MODEL = "qwen3_tts_0_6b_customvoice"


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def services(data_paths) -> AppServices:
    data_paths.settings_file.write_text(yaml.safe_dump({"inbox_preset": "Inbox"}), encoding="utf-8")
    services = AppServices.create(data_paths)
    services.library.presets.save(
        Preset(name="Inbox", model_key=MODEL, voice={"kind": "speaker", "name": "Aiden"})
    )
    return services


def _watcher(services, clock, **kwargs) -> InboxWatcher:
    return InboxWatcher(
        lambda: services.settings.inbox_path(services.paths),
        services.library.take_from_inbox,
        clock=clock,
        **kwargs,
    )


def test_twenty_dropped_books_become_twenty_jobs_with_the_inbox_preset(services, tmp_path) -> None:
    inbox = services.settings.inbox_path(services.paths)
    assert inbox == services.paths.root / "inbox"
    inbox.mkdir(parents=True)
    for n in range(20):
        make_epub(
            inbox / f"book-{n:02}.epub",
            ((f"c{n}.xhtml", xhtml(f"<h1>Part {n}</h1><p>Words of book {n}.</p>")),),
            title=f"Dropped {n}",
        )
    (inbox / "corrupt.epub").write_bytes(b"this is not a zip archive at all")
    (inbox / "copying.epub.part").write_bytes(b"partial")
    clock = FakeClock()
    watcher = _watcher(services, clock)
    assert watcher.scan() == []  # first sight: nothing is settled yet
    clock.now += 9.9
    assert watcher.scan() == []
    clock.now += 0.2
    outcomes = watcher.scan()
    assert len([o for o in outcomes if o.job_id]) == 20
    jobs = services.library.jobs.list()
    assert len(jobs) == 20 and {j.title for j in jobs} == {f"Dropped {n}" for n in range(20)}
    assert all(ConvertRequest.from_dict(j.params).voice.name == "Aiden" for j in jobs)
    assert sorted(p.name for p in (inbox / "taken").iterdir()) == [f"book-{n:02}.epub" for n in range(20)]
    assert (inbox / "failed" / "corrupt.epub").is_file()
    reason = (inbox / "failed" / "corrupt.epub.txt").read_text()
    assert "corrupt.epub was not queued" in reason and "zip" in reason.lower()
    # The refusal is shown where the queue is, not only on disk.
    refused = inbox_refusals(inbox)
    assert [name for name, _ in refused] == ["corrupt.epub"] and "zip" in refused[0][1].lower()
    assert (inbox / "copying.epub.part").is_file()  # partial downloads are left alone
    book = services.library.jobs.list()[0].params["book_path"]
    assert "inbox" not in book  # the job reads its own copy, not the file the user may delete


def test_a_file_growing_for_15_s_is_not_taken_until_it_settles(services) -> None:
    inbox = services.settings.inbox_path(services.paths)
    inbox.mkdir(parents=True)
    source = (DATA_DIR / "pg11-alice.epub").read_bytes()
    target = inbox / "alice.epub"
    clock = FakeClock()
    watcher = _watcher(services, clock)
    for second in range(16):  # a slow copy: a new piece every simulated second for 15 s
        with target.open("ab") as handle:
            handle.write(source[second * len(source) // 16 : (second + 1) * len(source) // 16])
        assert watcher.scan() == [], f"taken while still growing at {second} s"
        clock.now += 1.0
    assert target.stat().st_size == len(source)
    clock.now += 8.5  # 9.5 s since the last change
    assert watcher.scan() == []  # 10 s since the last change not yet reached
    clock.now += 0.5
    (taken,) = watcher.scan()
    assert taken.job_id and services.library.jobs.get(taken.job_id).title.startswith("Alice")


def test_real_time_a_copy_in_progress_waits(services) -> None:
    """The watcher's own thread and clock: a file written for ~3 s is taken only after it settles."""
    inbox = services.settings.inbox_path(services.paths)
    inbox.mkdir(parents=True)
    watcher = InboxWatcher(lambda: inbox, services.library.take_from_inbox, settle_s=2.0, poll_s=0.2)
    source = (DATA_DIR / "hefty-water.epub").read_bytes()
    target = inbox / "hefty.epub"
    done_writing = threading.Event()

    def slow_copy() -> None:
        with target.open("wb") as handle:
            for i in range(6):
                handle.write(source[i * len(source) // 6 : (i + 1) * len(source) // 6])
                handle.flush()
                time.sleep(0.5)
        done_writing.set()

    watcher.start()
    writer = threading.Thread(target=slow_copy)
    writer.start()
    try:
        while not done_writing.is_set():
            assert services.library.jobs.list() == [], "a file still being written was taken"
            time.sleep(0.05)
        finished_at = time.monotonic()
        deadline = finished_at + 60
        while not services.library.jobs.list() and time.monotonic() < deadline:
            time.sleep(0.1)
        assert len(services.library.jobs.list()) == 1
        assert time.monotonic() - finished_at >= 1.5  # it waited for the file to settle
    finally:
        writer.join(30)
        watcher.stop()
    assert (inbox / "taken" / "hefty.epub").is_file()


def test_twenty_books_uploaded_at_once_give_twenty_jobs(services, tmp_path) -> None:
    """Multi-upload (the Queue tab's 'Queue many books'): one job per file, a bad one reported, not fatal."""
    files = [
        make_epub(
            tmp_path / f"up-{n:02}.epub",
            ((f"c{n}.xhtml", xhtml(f"<h1>Up {n}</h1><p>Text {n}.</p>")),),
            title=f"Uploaded {n}",
        )
        for n in range(20)
    ]
    (tmp_path / "broken.epub").write_bytes(b"PK\x03\x04 truncated")
    outcomes = services.library.submit_many([*files, tmp_path / "broken.epub"], preset="Inbox")
    jobs = [got for _, got in outcomes if not isinstance(got, str)]
    assert len(jobs) == 20 and len(services.library.jobs.list()) == 20
    assert {j.title for j in jobs} == {f"Uploaded {n}" for n in range(20)}
    assert [name for name, got in outcomes if isinstance(got, str)] == ["broken.epub"]
    assert all("state/books" in j.params["book_path"] for j in jobs)  # each reads its own kept copy


def test_twenty_books_queue_with_a_model_chosen_and_no_preset(services, tmp_path) -> None:
    """'Queue many books' with only a model picked: no preset and no rule needed, the model's default voice."""
    files = [
        make_epub(
            tmp_path / f"m-{n:02}.epub",
            ((f"c{n}.xhtml", xhtml(f"<h1>Many {n}</h1><p>Text {n}.</p>")),),
            title=f"Many {n}",
        )
        for n in range(20)
    ]
    refused = services.library.submit_many(files[:1])
    assert isinstance(refused[0][1], str) and "pick a preset or a" in refused[0][1]
    outcomes = services.library.submit_many(files, model_key="qwen3_tts_0_6b_customvoice")
    jobs = [got for _, got in outcomes if not isinstance(got, str)]
    assert len(jobs) == 20, [got for _, got in outcomes if isinstance(got, str)][:2]
    assert {j.params["model_key"] for j in jobs} == {"qwen3_tts_0_6b_customvoice"}
