from __future__ import annotations

import threading
import time

import pytest

from omni_web.errors import BookError, JobError, JobNotFound
from omni_web.jobs import JobContext, JobState, JobStore, JobWorker, QueueControl
from omni_web.paths import DataPaths

pytestmark = pytest.mark.slow  # worker threads, many iterations


def wait_for(predicate, timeout_s: float = 60.0) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.02)
    raise AssertionError("condition not reached in time")


@pytest.fixture
def store(data_paths: DataPaths) -> JobStore:
    return JobStore(data_paths.jobs_db)


def test_jobs_run_in_queue_order_with_progress(store: JobStore) -> None:
    ran: list[str] = []

    def runner(job, ctx: JobContext):
        ctx.report({"chunks_done": 1, "chunks_total": 1})
        ran.append(job.params["name"])
        return {"output": job.params["name"] + ".m4b"}

    jobs = [store.enqueue("convert", {"name": n}, title=n) for n in ("a", "b", "c")]
    assert [store.queue_position(j.id) for j in jobs] == [1, 2, 3]
    assert store.queue_positions() == {job.id: place for place, job in enumerate(jobs, start=1)}
    worker = JobWorker(store, {"convert": runner}, idle_poll_s=0.05)
    worker.start()
    try:
        wait_for(lambda: all(store.get(j.id).state is JobState.DONE for j in jobs))
    finally:
        worker.stop()
    assert ran == ["a", "b", "c"]
    assert store.queue_positions() == {}
    done = store.get(jobs[1].id)
    assert done.result == {"output": "b.m4b"} and done.progress["chunks_done"] == 1
    assert done.started_at is not None and done.finished_at >= done.started_at


def test_cancel_queued_and_running(store: JobStore) -> None:
    started = threading.Event()

    def runner(job, ctx: JobContext):
        started.set()
        while True:
            ctx.raise_if_cancelled()
            time.sleep(0.01)

    first = store.enqueue("convert", {})
    second = store.enqueue("convert", {})
    assert store.request_cancel(second.id).state is JobState.CANCELLED
    worker = JobWorker(store, {"convert": runner}, idle_poll_s=0.05)
    worker.start()
    try:
        assert started.wait(5)
        store.request_cancel(first.id)
        wait_for(lambda: store.get(first.id).state is JobState.CANCELLED)
    finally:
        worker.stop()
    assert "resume" in store.get(first.id).error
    resumed = store.resume(first.id)
    assert resumed.state is JobState.QUEUED and not resumed.cancel_requested


def test_failures_are_recorded_and_worker_survives(store: JobStore) -> None:
    def runner(job, ctx):
        if job.params["mode"] == "book":
            raise BookError("This EPUB is not a zip file.")
        if job.params["mode"] == "bug":
            raise ValueError("boom")
        return {}

    jobs = [store.enqueue("convert", {"mode": m}) for m in ("book", "bug", "ok")]
    unknown = store.enqueue("mystery", {})
    worker = JobWorker(store, {"convert": runner}, idle_poll_s=0.05)
    worker.start()
    try:
        wait_for(lambda: store.get(unknown.id).state.finished and store.get(jobs[2].id).state.finished)
    finally:
        worker.stop()
    assert store.get(jobs[0].id).error == "This EPUB is not a zip file."
    assert "Internal error" in store.get(jobs[1].id).error
    assert store.get(jobs[2].id).state is JobState.DONE
    assert "No runner" in store.get(unknown.id).error
    with pytest.raises(JobError, match="already done"):
        store.resume(jobs[2].id)


def test_restart_requeues_an_interrupted_job(data_paths: DataPaths) -> None:
    # A previous process claimed the job and died: the row is left RUNNING.
    store = JobStore(data_paths.jobs_db)
    job = store.enqueue("convert", {"n": 1})
    assert store.claim_next().id == job.id
    # A new process (new store object on the same file) starts its worker.
    fresh = JobStore(data_paths.jobs_db)
    worker = JobWorker(fresh, {"convert": lambda j, c: {"resumed": True}}, idle_poll_s=0.05)
    assert worker.start() == [job.id]
    try:
        wait_for(lambda: fresh.get(job.id).state is JobState.DONE)
    finally:
        worker.stop()
    assert fresh.get(job.id).result == {"resumed": True}


def test_stopping_the_app_leaves_the_running_job_resumable(store: JobStore) -> None:
    started = threading.Event()

    def runner(job, ctx):
        started.set()
        while True:
            ctx.raise_if_cancelled()
            time.sleep(0.01)

    job = store.enqueue("convert", {})
    worker = JobWorker(store, {"convert": runner}, idle_poll_s=0.05)
    worker.start()
    assert started.wait(5)
    worker.stop()
    assert store.get(job.id).state is JobState.RUNNING  # picked up again by the next start


def test_two_users_submitting_at_once_both_finish_in_order(store: JobStore) -> None:
    order: list[str] = []
    worker = JobWorker(store, {"convert": lambda j, c: order.append(j.id) or {}}, idle_poll_s=0.05)
    ids: list[str] = []
    lock = threading.Lock()

    def submit(name: str) -> None:
        job = store.enqueue("convert", {"user": name})
        with lock:
            ids.append(job.id)

    threads = [threading.Thread(target=submit, args=(n,)) for n in ("alice", "bob")]
    worker.start()
    try:
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        wait_for(lambda: len(order) == 2)
    finally:
        worker.stop()
    by_seq = [j.id for j in reversed(store.list())]
    assert order == by_seq and sorted(order) == sorted(ids)


def test_unknown_job(store: JobStore) -> None:
    with pytest.raises(JobNotFound):
        store.get("nope")


def test_the_queue_wakes_its_worker_on_enqueue_and_resume(store: JobStore) -> None:
    # An hour's idle poll: only the store's own wake-up can start these jobs in time.
    done = threading.Event()
    worker = JobWorker(store, {"convert": lambda j, c: done.set() or {}}, idle_poll_s=3600)
    worker.start()
    try:
        QueueControl(store).pause()
        job = store.enqueue("convert", {})
        assert not done.wait(0.3) and store.get(job.id).state is JobState.QUEUED
        QueueControl(store).resume()
        wait_for(lambda: store.get(job.id).state is JobState.DONE, timeout_s=30)
        done.clear()
        second = store.enqueue("convert", {})
        wait_for(lambda: store.get(second.id).state is JobState.DONE, timeout_s=30)
    finally:
        worker.stop()
