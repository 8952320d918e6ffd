"""How the app is launched: file access limited to outputs and voices, login, upload limit; and
the helpers every tab shares (error mapping, picker labels, task views)."""

from __future__ import annotations

import gradio as gr
import pytest

from omni_web.auth import Credentials
from omni_web.catalog import CATALOG
from omni_web.errors import VoiceError
from omni_web.tasks import TaskRunner
from omni_web.ui.app import MAX_UPLOAD_BYTES, launch_options
from omni_web.ui.errors import guarded
from omni_web.ui.labels import model_picker_choices
from omni_web.ui.taskpanel import task_view


def test_launch_serves_only_outputs_and_voices_and_requires_the_login(ui_app):
    options = launch_options(ui_app.ctx, host="0.0.0.0", port=7860, credentials=Credentials("a", "b"))
    paths = ui_app.paths
    assert options["allowed_paths"] == [str(paths.outputs_dir.resolve()), str(paths.voices_dir.resolve())]
    assert str(paths.state_dir.resolve()) in options["blocked_paths"]
    assert str(paths.envs_dir.resolve()) in options["blocked_paths"]
    assert options["auth"] == ("a", "b") and options["max_file_size"] == MAX_UPLOAD_BYTES
    assert (options["server_name"], options["server_port"]) == ("0.0.0.0", 7860)
    assert launch_options(ui_app.ctx, host="127.0.0.1", port=1, credentials=None)["auth"] is None


def test_guarded_turns_our_errors_into_gr_error_and_bugs_into_a_logged_internal_error(caplog):
    @guarded
    def ours():
        raise VoiceError("Pick a voice <first>.")

    @guarded
    def bug():
        raise ZeroDivisionError("division by zero")

    with pytest.raises(gr.Error) as ours_error:
        ours()
    assert ours_error.value.message == "Pick a voice &lt;first&gt;."  # escaped: gr.Error renders HTML
    with caplog.at_level("ERROR", logger="omni_web.ui"), pytest.raises(gr.Error) as bug_error:
        bug()
    assert "Internal error" in bug_error.value.message and "(division by zero)" in bug_error.value.message
    assert "ZeroDivisionError" not in bug_error.value.message  # words, not a Python class name
    assert any(record.exc_info for record in caplog.records)


def test_picker_lists_every_model_with_aligned_columns():
    choices = model_picker_choices({"zonos2"})
    assert [key for _, key in choices][0] == "zonos2" and len(choices) == len(CATALOG)
    width = max(len(entry.label) for entry in CATALOG)
    labels = {entry.key: entry.label for entry in CATALOG}
    for label, key in choices:
        assert label[0] == ("●" if key == "zonos2" else " ")
        assert label[2 : 2 + width] == labels[key].ljust(width)  # names padded: columns start together
    assert len({label.find("clone") for label, _ in choices if "clone" in label}) == 1


def test_task_view_skips_unchanged_ticks_and_flags_a_finish():
    runner = TaskRunner()
    runner.start("backend", "Install", lambda handle: handle.log("line"))
    first = task_view(runner.wait("backend", 5), None)
    assert "Install" in first.status_html and first.log_text == "line"
    assert not first.just_finished  # a fresh page renders everything anyway
    again = task_view(runner.snapshot("backend"), first.seen)
    assert isinstance(again.status_html, dict) and again.status_html.get("__type__") == "update"
    seen_while_running = {"sig": "old", "finished_at": None}
    assert task_view(runner.snapshot("backend"), seen_while_running).just_finished


def test_the_page_header_names_books_not_only_epub(ui_app):
    import httpx

    from tests.ui.conftest import PASSWORD, USER

    with httpx.Client(base_url=ui_app.url, timeout=60) as http:
        http.post("/login", data={"username": USER, "password": PASSWORD})
        config = http.get("/config").text
    assert "EPUB → audiobook with" not in config and "Books (EPUB, PDF, Word, text" in config


def test_the_queue_table_shows_the_running_job_first_and_every_voice():
    from pathlib import Path

    from omni_web.client import VoiceChoice
    from omni_web.jobs import Job, JobState
    from omni_web.pipeline import ConvertRequest
    from omni_web.ui.queue_tab import HEADERS, queue_rows

    params = ConvertRequest(book_path=Path("a.epub"), model_key="qwen3_tts_0_6b_customvoice",
                            voice=VoiceChoice.speaker("Uncle_Fu")).to_dict()
    running = Job(id="r", kind="convert", title="Running book", state=JobState.RUNNING, params=params)
    queued = Job(id="q", kind="convert", title="Queued book", state=JobState.QUEUED, params=params)
    rows = queue_rows([queued], [running])
    assert HEADERS[2] == "Voice" and [row[:3] for row in rows] == [
        ["running", "Running book", "Uncle Fu · Qwen3-TTS 0.6B CustomVoice"],
        [1, "Queued book", "Uncle Fu · Qwen3-TTS 0.6B CustomVoice"]]


def test_inbox_refusals_show_on_the_queue_tab(tmp_path):
    from types import SimpleNamespace

    from omni_web.ui.queue_tab import _refusals_md

    (tmp_path / "failed").mkdir()
    (tmp_path / "failed" / "vm.txt").write_text(
        "vm was not queued.\n\n'vm' is not a book.\n", encoding="utf-8"
    )
    ctx = SimpleNamespace(paths=None, settings=SimpleNamespace(inbox_path=lambda _paths: tmp_path))
    assert "Not queued from the inbox" in _refusals_md(ctx) and "- `vm`: 'vm' is not a book." in _refusals_md(
        ctx
    )


def test_the_page_poll_answers_behind_the_login_with_what_changed(ui_app):
    import httpx

    from tests.ui.conftest import PASSWORD, USER

    assert httpx.get(ui_app.url + "/live/poll", timeout=60).status_code == 401
    with httpx.Client(base_url=ui_app.url, timeout=60) as http:
        http.post("/login", data={"username": USER, "password": PASSWORD})
        first, again = http.get("/live/poll").json(), http.get("/live/poll?job=nope").json()
    assert {"title", "jobs", "soft", "server", "parts"} <= set(first)
    assert (
        first["jobs"] == again["jobs"] and first["server"] == again["server"]
    )  # nothing changed: same marks
    assert 'data-part="jobs-table"' in first["parts"]["jobs-table"]
    # The table says which jobs it was drawn for, so a page drawn before the first answer catches up.
    assert f'data-jobs="{first["jobs"]}"' in first["parts"]["jobs-table"]
