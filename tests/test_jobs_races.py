"""Job-state transitions are conditional: a read-then-write race can never run a job twice.

Each test repeats a race many times with real threads on the real SQLite store. The clock the
store reads between its read and its write yields the thread, which widens the window the old
read-then-write code lost (these tests failed on it; the conditional UPDATEs close it).
"""

from __future__ import annotations

import threading
import time
from functools import partial
from pathlib import Path

import pytest

from omni_web.errors import JobError
from omni_web.jobs import JobState, JobStore

pytestmark = pytest.mark.slow  # worker threads, many iterations

ITERATIONS = 60


def yielding_clock() -> float:
    time.sleep(0.0005)  # hand the GIL (and SQLite's lock) to the racing thread
    return time.time()


def race(*actions) -> list[object]:
    """Run the actions at once from separate threads; their results (or exceptions), in order."""
    barrier = threading.Barrier(len(actions))
    results: list[object] = [None] * len(actions)

    def run(index: int) -> None:
        barrier.wait()
        try:
            results[index] = actions[index]()
        except Exception as exc:  # noqa: BLE001 - the test inspects what each side got
            results[index] = exc

    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(actions))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    return results


@pytest.fixture
def store(tmp_path: Path) -> JobStore:
    return JobStore(tmp_path / "jobs.sqlite", clock=yielding_clock)


def test_a_cancel_racing_the_claim_never_marks_a_running_job_cancelled(store: JobStore) -> None:
    for _ in range(ITERATIONS):
        job = store.enqueue("convert", {})
        claimed, _cancelled = race(store.claim_next, partial(store.request_cancel, job.id))
        now = store.get(job.id)
        if claimed is not None:  # the worker has it: it must stay running, asked to stop
            assert now.state is JobState.RUNNING and now.cancel_requested, now
            store.finish(job.id, JobState.CANCELLED)
        else:
            assert now.state is JobState.CANCELLED


def test_a_cancel_racing_the_claim_then_a_resume_never_runs_the_job_twice(store: JobStore) -> None:
    for _ in range(ITERATIONS):
        job = store.enqueue("convert", {})
        claimed, _ = race(store.claim_next, partial(store.request_cancel, job.id))
        try:
            store.resume(job.id)  # the user presses Resume on what looks cancelled
        except JobError:
            pass
        second = store.claim_next()
        running_twice = claimed is not None and second is not None and second.id == job.id
        assert not running_twice, "the job was claimed again while its first run was still running"
        for claim in (claimed, second):
            if claim is not None:
                store.finish(claim.id, JobState.DONE)


def test_finish_refuses_a_job_that_is_not_running(store: JobStore) -> None:
    job = store.enqueue("convert", {})
    store.request_cancel(job.id)
    with pytest.raises(JobError, match="is cancelled, not running"):
        store.finish(job.id, JobState.DONE, result={"m4b": "x"})
    assert store.get(job.id).state is JobState.CANCELLED and store.get(job.id).result == {}


def test_two_resumes_at_once_queue_the_job_once(store: JobStore) -> None:
    for _ in range(ITERATIONS // 2):
        job = store.enqueue("convert", {})
        store.request_cancel(job.id)
        race(partial(store.resume, job.id), partial(store.resume, job.id))
        assert store.claim_next().id == job.id
        assert store.claim_next() is None  # queued once, not twice
        store.finish(job.id, JobState.DONE)


def test_a_cancel_racing_finish_leaves_one_consistent_end(store: JobStore) -> None:
    for _ in range(ITERATIONS):
        job = store.enqueue("convert", {})
        store.claim_next()
        race(
            partial(store.finish, job.id, JobState.DONE, result={"ok": 1}),
            partial(store.request_cancel, job.id),
        )
        now = store.get(job.id)
        assert now.state is JobState.DONE and now.result == {"ok": 1}  # a late cancel changes nothing


def test_resume_of_a_done_job_is_refused(store: JobStore) -> None:
    job = store.enqueue("convert", {})
    store.claim_next()
    store.finish(job.id, JobState.DONE)
    with pytest.raises(JobError, match="already done"):
        store.resume(job.id)


def test_a_rerun_racing_a_resume_and_claim_never_runs_the_job_twice(store: JobStore) -> None:
    # Rerun is a guarded transition like the others: it re-queues only a job that is still
    # finished when it writes, never one a resume and the worker have just taken.
    for _ in range(ITERATIONS):
        job = store.enqueue("convert", {})
        store.claim_next()
        store.finish(job.id, JobState.FAILED, error="boom")

        def resume_then_claim(job_id: str = job.id) -> object:
            store.resume(job_id)
            return store.claim_next()

        claimed, rerun = race(resume_then_claim, partial(store.rerun, job.id))
        second = store.claim_next()
        running_twice = claimed is not None and second is not None and second.id == job.id
        assert not running_twice, "a rerun re-queued the job while its resumed run was running"
        if claimed is not None and isinstance(rerun, JobError):
            assert "not finished" in str(rerun) or "running" in str(rerun), rerun
        for claim in (claimed, second):
            if claim is not None:
                store.finish(claim.id, JobState.DONE)


def test_two_reruns_at_once_queue_the_job_once(store: JobStore) -> None:
    for _ in range(ITERATIONS // 2):
        job = store.enqueue("convert", {})
        store.claim_next()
        store.finish(job.id, JobState.DONE)
        results = race(partial(store.rerun, job.id), partial(store.rerun, job.id))
        assert sum(isinstance(r, JobError) for r in results) <= 1, results
        assert store.get(job.id).state is JobState.QUEUED
        claimed = store.claim_next()
        assert claimed is not None and claimed.id == job.id and store.claim_next() is None
        store.finish(job.id, JobState.DONE)
