"""Settings tab, transcription model, through gradio_client: the installed state of the chosen
faster-whisper size, Install as a background task from the fake HF hub (byte progress, a live log
a new page re-attaches to, Cancel), then Transcribe in the Generate tab works.

faster-whisper itself is replaced at its load seam (``UiContext.whisper_loader``): the stand-in
refuses, like the real loader, when the weights are not in the app's HF cache, and answers with
faster-whisper's own result records (``tests/test_voices_transcribe.FakeWhisper``).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from gradio_client.exceptions import AppError

from omni_web.backend.disk import format_bytes
from omni_web.errors import TranscriberNotInstalled
from omni_web.runstate import RunState
from omni_web.settings import load_settings
from omni_web.ui.context import TASK_TRANSCRIBER
from omni_web.ui.settings import FIELDS
from omni_web.voices import whisper_local_dir, whisper_repo_id
from tests.fakes.fake_hf_hub import FakeHub, FakeRepo
from tests.test_voices_transcribe import FakeWhisper
from tests.ui.conftest import RunningApp, launch_app
from tests.ui.helpers import wait_for
from tests.voice_clips import EIGHT_SECONDS_TEXT, espeak

BASE = "qwen3_tts_0_6b_base"
TINY_FILES = {
    "config.json": b'{"alignment_heads": [[2, 2]], "lang_ids": [50259]}\n',
    "model.bin": bytes(range(256)) * 1200,  # 300 KiB of "weights"
    "tokenizer.json": b'{"version": "1.0"}\n',
    "vocabulary.txt": b"a\nb\nc\n",
}
# Bigger than huggingface_hub's 10 MiB read chunk, so a cancel lands mid-file.
BASE_FILES = {"config.json": b"{}\n", "model.bin": b"\2" * 24_000_000}


class Loader:
    """Stands in for ``load_whisper_model``: the same refusal when not installed, a fake model."""

    def __init__(self) -> None:
        self.loaded: list[Path] = []

    def __call__(self, size: str, *, device: str | None = None, cache_dir: Path | None = None) -> FakeWhisper:
        folder = whisper_local_dir(size, cache_dir=cache_dir)
        if folder is None:
            raise TranscriberNotInstalled(size, whisper_repo_id(size))
        self.loaded.append(folder)
        return FakeWhisper([" Spoken words", " from the clip. "])


@pytest.fixture(scope="module")
def hub() -> Iterator[FakeHub]:
    repos = [FakeRepo(whisper_repo_id("tiny"), TINY_FILES), FakeRepo(whisper_repo_id("base"), BASE_FILES)]
    with FakeHub(repos) as server:
        yield server


@pytest.fixture(scope="module")
def loader() -> Loader:
    return Loader()


@pytest.fixture(scope="module")
def app(tmp_path_factory: pytest.TempPathFactory, hub: FakeHub, loader: Loader) -> Iterator[RunningApp]:
    base = tmp_path_factory.mktemp("transcriber-app")
    with launch_app(base, hf_endpoint=hub.url, whisper_loader=loader) as running:
        running.ctx.library.add(espeak(EIGHT_SECONDS_TEXT, base / "speaker.wav"), name="speaker")
        yield running


def _finish(app: RunningApp):
    return wait_for(lambda: (s := app.ctx.tasks.snapshot(TASK_TRANSCRIBER)).state.finished and s,
                    timeout_s=60, what="the transcription model download to finish")


# What a page open renders: the form's fields (FIELDS), then the transcriber box's status line.
SIZE = FIELDS.index("transcription_model")
BOX = len(FIELDS)
LOG_LABEL = "Transcription model download"  # the box's task log (omni_web/ui/transcriber.py)


def _labelled(client, values: list[Any]) -> dict[str, Any]:
    """``/settings_load``'s values by their component's label, as the app describes its API."""
    returns = client.view_api(return_format="dict", print_info=False)["named_endpoints"]["/settings_load"][
        "returns"
    ]
    assert len(returns) == len(values)
    return {r["label"]: value for r, value in zip(returns, values, strict=True)}


def _use_size(client, size: str) -> None:
    values = client.predict(api_name="/settings_load")
    form = list(values[: len(FIELDS)])
    form[SIZE] = size
    client.predict(*form, api_name="/settings_save")


def test_missing_weights_are_shown_and_transcribe_points_to_the_install(app, loader):
    client = app.client()
    status = client.predict("tiny", api_name="/transcriber_status")
    assert "not downloaded" in status and "Systran/faster-whisper-tiny" in status
    assert "until you save this one" in status  # the saved size is still "small"
    loaded = client.predict(api_name="/settings_load")
    box = loaded[BOX]
    assert loaded[SIZE] == "small" and "not downloaded" in box and "faster-whisper <b>small</b>" in box
    client.predict(BASE, None, api_name="/voice_menu")
    with pytest.raises(AppError, match="Install it in the Settings tab"):
        client.predict(BASE, "clone:speaker", api_name="/voice_transcribe")
    assert loader.loaded == []


def test_install_runs_as_a_task_then_transcribe_works(app, loader):
    client = app.client()
    _use_size(client, "tiny")
    assert load_settings(app.paths).transcription_model == "tiny"
    status, task_status, log = client.predict("tiny", api_name="/transcriber_install")
    assert "Downloading faster-whisper" in task_status
    done = _finish(app)
    assert done.state is RunState.DONE, done.message
    assert done.progress == 1.0
    total = sum(len(data) for data in TINY_FILES.values())
    assert done.progress_text == f"whisper-tiny: {format_bytes(total)} / {format_bytes(total)}, 4/4 files"
    folder = whisper_local_dir("tiny", cache_dir=app.cache_dir)
    assert folder is not None and folder.is_relative_to(app.cache_dir)
    for name, data in TINY_FILES.items():
        assert (folder / name).read_bytes() == data
    assert f"Installed faster-whisper 'tiny' at {folder}" in done.log_text

    # A page opened now shows the weights installed and re-attaches to the finished task's log.
    page = app.client()
    loaded = page.predict(api_name="/settings_load")
    assert "installed" in loaded[BOX] and str(folder) in loaded[BOX]
    assert f"Installed faster-whisper 'tiny' at {folder}" in _labelled(page, loaded)[LOG_LABEL]

    client.predict(BASE, None, api_name="/voice_menu")
    text = client.predict(BASE, "clone:speaker", api_name="/voice_transcribe")
    assert text == "Spoken words from the clip."
    assert loader.loaded == [folder]
    assert (app.paths.voices_dir / "speaker.txt").read_text().strip() == text

    # Installing what is there starts nothing.
    client.predict("tiny", api_name="/transcriber_install")
    assert app.ctx.tasks.snapshot(TASK_TRANSCRIBER).started_at == done.started_at


def test_a_download_can_be_cancelled_and_leaves_nothing_installed(app, hub):
    client = app.client()
    client.predict(api_name="/transcriber_cancel")  # nothing running: nothing changes
    assert app.ctx.tasks.snapshot(TASK_TRANSCRIBER).state is RunState.DONE
    hub.set_chunk_delay(0.002)  # 16 KiB per 2 ms: about 3 s for the big file
    try:
        client.predict("base", api_name="/transcriber_install")
        running = wait_for(
            lambda: ((s := app.ctx.tasks.snapshot(TASK_TRANSCRIBER)).progress or 0) > 0 and s,
            timeout_s=60,
            what="the download to start",
        )
        assert running.running and running.title == "Downloading faster-whisper 'base'"
        base_total = format_bytes(sum(len(data) for data in BASE_FILES.values()))
        assert (
            running.progress_text.startswith("whisper-base: ")
            and f" / {base_total}, " in running.progress_text
        )
        client.predict(api_name="/transcriber_cancel")
        done = _finish(app)
    finally:
        hub.set_chunk_delay(0.0)
    assert done.state is RunState.CANCELLED, done.message
    assert "cancelled" in done.message
    assert whisper_local_dir("base", cache_dir=app.cache_dir) is None
    assert "not downloaded" in client.predict("base", api_name="/transcriber_status")
