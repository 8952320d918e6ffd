"""Steering the queue: priority, moves, pauses and samples first, as the worker obeys them."""

from __future__ import annotations

import threading
import time

import pytest

from omni_web.errors import JobError
from omni_web.jobs import JobContext, JobState, JobStore, JobWorker, QueueControl
from omni_web.jobs.store import URGENT_PRIORITY
from omni_web.paths import DataPaths


def wait_for(predicate, timeout_s: float = 60.0, what: str = "condition"):
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if value := predicate():
            return value
        time.sleep(0.02)
    raise AssertionError(f"{what} not reached in {timeout_s} s")


@pytest.fixture
def store(data_paths: DataPaths) -> JobStore:
    return JobStore(data_paths.jobs_db)


def _titles(store: JobStore) -> list[str]:
    return [job.title for job in store.queued()]


def test_moves_and_priority_reorder_the_line_and_survive_a_reopen(store: JobStore, data_paths) -> None:
    queue = QueueControl(store)
    jobs = {name: store.enqueue("convert", {}, title=name) for name in "abcde"}
    queue.move(jobs["d"].id, "top")
    assert _titles(store) == ["d", "a", "b", "c", "e"]
    queue.move(jobs["a"].id, "down")
    assert _titles(store) == ["d", "b", "a", "c", "e"]
    queue.move(jobs["e"].id, "up")
    assert _titles(store) == ["d", "b", "a", "e", "c"]
    queue.move(jobs["d"].id, "bottom")
    assert _titles(store) == ["b", "a", "e", "c", "d"]
    queue.set_priority(jobs["c"].id, 5)
    assert _titles(store) == ["c", "b", "a", "e", "d"]
    queue.move(jobs["d"].id, "top")  # takes c's priority to get there
    assert _titles(store) == ["d", "c", "b", "a", "e"]
    queue.move(jobs["b"].id, "up")  # past a job of higher priority
    assert _titles(store) == ["d", "b", "c", "a", "e"]
    assert store.queue_positions()[jobs["b"].id] == 2
    assert _titles(JobStore(data_paths.jobs_db)) == ["d", "b", "c", "a", "e"]  # it is the store
    store.request_cancel(jobs["a"].id)
    with pytest.raises(JobError, match="only a queued job"):
        queue.move(jobs["a"].id, "top")
    with pytest.raises(JobError, match="Unknown move"):
        queue.move(jobs["b"].id, "sideways")


def _recording_worker(store: JobStore, ran: list[tuple[str, str]], gate: threading.Event | None = None):
    def runner(job, ctx: JobContext):
        ran.append((job.title, job.run_kind))
        if gate is not None:
            gate.wait(30)
        return {"title": job.title}

    return JobWorker(store, {"convert": runner}, idle_poll_s=0.05)


def test_worker_obeys_reorder_and_pauses(store: JobStore) -> None:
    queue = QueueControl(store)
    queue.pause()
    jobs = {name: store.enqueue("convert", {}, title=name) for name in "abcd"}
    ran: list[tuple[str, str]] = []
    worker = _recording_worker(store, ran)
    worker.start()
    try:
        time.sleep(0.5)  # the queue is paused: whatever the timing, nothing may start
        assert ran == [] and all(store.get(j.id).state is JobState.QUEUED for j in jobs.values())
        queue.move(jobs["c"].id, "top")
        queue.pause_job(jobs["a"].id)
        assert store.get(jobs["a"].id).paused
        queue.resume()
        wait_for(
            lambda: all(store.get(jobs[n].id).state is JobState.DONE for n in "bcd"), what="b, c, d done"
        )
        assert [title for title, _ in ran] == ["c", "b", "d"]
        assert store.get(jobs["a"].id).state is JobState.QUEUED  # held in its place
        queue.resume_job(jobs["a"].id)
        wait_for(lambda: store.get(jobs["a"].id).state is JobState.DONE, what="a done")
    finally:
        worker.stop()
    assert [title for title, _ in ran] == ["c", "b", "d", "a"]
    assert not queue.paused


def test_samples_first_makes_every_sample_before_any_full_book(store: JobStore) -> None:
    queue = QueueControl(store)
    queue.set_samples_first(True)
    jobs = [store.enqueue("convert", {}, title=name) for name in "abc"]
    ran: list[tuple[str, str]] = []
    worker = _recording_worker(store, ran)
    worker.start()
    try:
        wait_for(lambda: all(store.get(j.id).state is JobState.DONE for j in jobs), what="all done")
    finally:
        worker.stop()
    assert ran == [
        ("a", "sample"),
        ("b", "sample"),
        ("c", "sample"),
        ("a", "full"),
        ("b", "full"),
        ("c", "full"),
    ]
    assert store.get(jobs[1].id).sample == {"title": "b"} and store.get(jobs[1].id).result == {"title": "b"}


def test_hand_off_starts_the_next_job_beside_the_finishing_one(store: JobStore) -> None:
    release = threading.Event()
    started: list[str] = []

    def runner(job, ctx: JobContext):
        started.append(job.title)
        if job.title == "first":
            ctx.hand_off()  # its last requests are in flight; mastering still to do
            release.wait(30)
        return {}

    first = store.enqueue("convert", {"model_key": "m"}, title="first")
    second = store.enqueue("convert", {"model_key": "m"}, title="second")
    other = store.enqueue("convert", {"model_key": "other"}, title="other")
    worker = JobWorker(
        store,
        {"convert": runner},
        idle_poll_s=0.05,
        overlap=lambda a, b: a.params["model_key"] == b.params["model_key"],
    )
    worker.start()
    try:
        wait_for(lambda: store.get(second.id).state is JobState.DONE, what="second done beside first")
        assert store.get(first.id).state is JobState.RUNNING  # still mastering
        time.sleep(0.3)
        assert store.get(other.id).state is JobState.QUEUED  # another model waits for the boundary
        release.set()
        wait_for(lambda: store.get(other.id).state is JobState.DONE, what="other done")
    finally:
        release.set()
        worker.stop()
    assert started == ["first", "second", "other"]


def test_a_sample_run_renders_the_first_chapter_of_the_default_selection() -> None:
    from omni_web.book import load_book
    from omni_web.library import sample_request
    from omni_web.pipeline.request import ConvertRequest
    from tests.conftest import DATA_DIR

    book_path = DATA_DIR / "pg11-alice.epub"
    book = load_book(book_path)
    first_text = next(i for i, c in enumerate(book.chapters, start=1) if c.selected_by_default and c.has_text)
    full = ConvertRequest(
        book_path=book_path,
        model_key="qwen3_tts_0_6b_customvoice",
        output_name="Alice - Vivian",
        readalong=True,
    )
    sample = sample_request(full)
    assert sample.chapters == (first_text,) and first_text > 1  # the front matter is passed over
    assert sample.output_name == "Alice - Vivian (sample)" and not sample.readalong
    chosen = sample_request(ConvertRequest(book_path=book_path, model_key=full.model_key, chapters=(5, 7)))
    assert chosen.chapters == (5,)  # the first of the user's own selection


def test_a_sample_of_n_minutes_takes_whole_chapters_from_the_start(store: JobStore) -> None:
    from omni_web.book import load_book
    from omni_web.library import sample_request
    from omni_web.pipeline.request import ConvertRequest
    from tests.conftest import DATA_DIR

    book_path = DATA_DIR / "pg11-alice.epub"
    book = load_book(book_path)
    request = ConvertRequest(book_path=book_path, model_key="qwen3_tts_0_6b_customvoice")
    one = sample_request(request).chapters
    longer = sample_request(request, minutes=30).chapters
    assert len(one) == 1 and longer[0] == one[0] and len(longer) >= 2
    words = [book.chapters[n - 1].word_count for n in longer]
    assert sum(words) >= 30 * 150 > sum(words[:-1])  # just enough whole chapters
    queue = QueueControl(store)
    queue.set_sample_minutes(30)
    assert queue.sample_minutes == 30.0


def test_a_fix_starts_beside_a_long_job_of_its_model_and_waits_first_in_line_for_another(
    store: JobStore,
) -> None:
    release = {name: threading.Event() for name in ("long", "fix-other")}
    started: list[str] = []

    def runner(job, ctx: JobContext):
        started.append(job.title)
        if job.title in release:
            release[job.title].wait(30)  # a long book rendering: it never hands off meanwhile
        return {}

    long = store.enqueue("convert", {"model_key": "m"}, title="long")
    book = store.enqueue("convert", {"model_key": "m"}, title="book")
    worker = JobWorker(
        store,
        {"convert": runner},
        idle_poll_s=0.05,
        overlap=lambda a, b: a.params["model_key"] == b.params["model_key"],
        urgent=lambda job: bool(job.params.get("fix")),
    )
    worker.start()
    try:
        wait_for(lambda: store.get(long.id).state is JobState.RUNNING, what="the long job running")
        fix = store.enqueue("convert", {"model_key": "m", "fix": True}, title="fix", priority=100)
        wait_for(lambda: store.get(fix.id).state is JobState.DONE, what="the fix done beside the long job")
        assert store.get(long.id).state is JobState.RUNNING and store.get(book.id).state is JobState.QUEUED
        # Another model's fix cannot share the batch: it waits, first in line, for the long job.
        other = store.enqueue("convert", {"model_key": "x", "fix": True}, title="fix-other", priority=100)
        time.sleep(0.3)
        assert store.get(other.id).state is JobState.QUEUED
        assert [job.title for job in store.queued()] == ["fix-other", "book"]
        release["long"].set()
        wait_for(lambda: store.get(other.id).state is JobState.RUNNING, what="the other model's fix next")
        assert store.get(book.id).state is JobState.QUEUED
        release["fix-other"].set()
        wait_for(lambda: store.get(book.id).state is JobState.DONE, what="the book last")
        # A paused queue holds a fix too.
        QueueControl(store).pause()
        held = store.enqueue("convert", {"model_key": "m", "fix": True}, title="held", priority=100)
        time.sleep(0.3)
        assert store.get(held.id).state is JobState.QUEUED
    finally:
        for event in release.values():
            event.set()
        worker.stop()
    assert started == ["long", "fix", "fix-other", "book"]


def test_a_regenerate_is_never_a_sample_and_goes_before_the_samples(store: JobStore) -> None:
    """Samples first on: a regenerate (urgent) runs as itself, first, not as a '(sample)' of chapter one."""
    from omni_web.pipeline.review import REGENERATE_PRIORITY

    assert REGENERATE_PRIORITY >= URGENT_PRIORITY  # what Regenerate queues with
    book = store.enqueue("convert", {"n": 0}, title="Long book")
    assert store.claim_next(samples_first=True).run_kind == "sample"
    store.finish_sample(book.id, {"m4b": "x"})
    assert store.claim_next(samples_first=True).id == book.id  # its full run now
    other = store.enqueue("convert", {"n": 1}, title="Next book")
    fix = store.enqueue("convert", {"n": 2}, title="Long book", priority=URGENT_PRIORITY)
    claimed = store.claim_next(samples_first=True)
    assert (claimed.id, claimed.run_kind) == (fix.id, "full")
    assert store.claim_next(samples_first=True).id == other.id
