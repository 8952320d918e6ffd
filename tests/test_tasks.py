"""The TaskRunner: one background task per kind, live log and progress, cancel, outcomes."""

from __future__ import annotations

import threading

import pytest

from omni_web.errors import DownloadCancelled, InstallError, TaskBusy
from omni_web.runstate import RunState
from omni_web.tasks import TaskRunner


def test_a_task_logs_reports_progress_and_returns_its_result():
    runner = TaskRunner()
    release = threading.Event()

    def work(handle):
        handle.log("step 1")
        handle.progress(0.5, "half way")
        release.wait(5)
        handle.log("step 2")
        return 42

    started = runner.start("backend", "Install", work)
    assert started.running and runner.is_running("backend")
    live = runner.snapshot("backend")
    assert live.title == "Install"
    release.set()
    done = runner.wait("backend", 5)
    assert done.state is RunState.DONE and done.result == 42
    assert done.log_lines == ("step 1", "step 2")
    assert done.progress == 0.5 and done.progress_text == "half way"
    assert done.finished_at is not None and done.elapsed_s >= 0


def test_one_task_per_kind_at_a_time_but_kinds_are_independent():
    runner = TaskRunner()
    release = threading.Event()
    runner.start("models", "Download", lambda handle: release.wait(5))
    with pytest.raises(TaskBusy, match="'Download' is still running"):
        runner.start("models", "Another", lambda handle: None)
    runner.start("server", "Start", lambda handle: "ok")
    assert runner.wait("server", 5).state is RunState.DONE
    release.set()
    assert runner.wait("models", 5).state is RunState.DONE
    runner.start("models", "Again", lambda handle: None)
    assert runner.wait("models", 5).title == "Again"


def test_cancel_sets_the_event_and_a_cancel_error_marks_cancelled():
    runner = TaskRunner()

    def work(handle):
        handle.cancel_event.wait(5)
        raise DownloadCancelled("qwen3_tts_0_6b_base", "Qwen/Qwen3-TTS-12Hz-0.6B-Base")

    runner.start("models", "Download", work)
    assert runner.cancel("models")
    done = runner.wait("models", 5)
    assert done.state is RunState.CANCELLED and done.cancel_requested
    assert "Cancel requested" in done.log_text
    assert not runner.cancel("models")


def test_our_errors_fail_with_their_message_and_bugs_say_internal_error():
    runner = TaskRunner()

    def fails(handle):
        raise InstallError("pip could not install sglang-omni")

    runner.start("backend", "Install", fails)
    failed = runner.wait("backend", 5)
    assert failed.state is RunState.FAILED and failed.message == "pip could not install sglang-omni"
    assert failed.log_lines[-1] == failed.message

    runner.start("backend", "Install", lambda handle: 1 / 0)
    bug = runner.wait("backend", 5)
    assert bug.state is RunState.FAILED and bug.message.startswith("Internal error: something went wrong")


def test_an_idle_kind_has_an_empty_snapshot():
    snapshot = TaskRunner().snapshot("backend")
    assert snapshot.state is None and snapshot.log_lines == () and not snapshot.running
    assert snapshot.summary == "Nothing has run yet."


def test_the_log_keeps_the_newest_lines():
    runner = TaskRunner(max_log_lines=3)
    runner.start("backend", "Chatty", lambda handle: [handle.log(str(i)) for i in range(10)])
    assert runner.wait("backend", 5).log_lines == ("7", "8", "9")


def test_jobs_and_tasks_share_one_run_state_and_a_task_that_never_ran_has_none():
    from omni_web.jobs import JobState

    assert JobState is RunState and RunState("queued").finished is False  # stored values read back
    runner = TaskRunner()
    idle = runner.snapshot("models")
    assert idle.state is None and not idle.finished and not idle.running  # no task is not a queued one
    runner.start("backend", "Quick", lambda handle: 1)
    done = runner.wait("backend", 5)
    assert done.state is RunState.DONE and done.finished and done.summary.startswith("Quick: done")
