"""Server tab handlers through gradio_client: status, Start (asking which downloaded model),
Stop, the remote URL, the command line and the boot log, against the fake sgl-omni."""

from __future__ import annotations

import shutil

import httpx
import pytest

from omni_web.runstate import RunState
from omni_web.settings import load_settings
from omni_web.ui.context import TASK_SERVER
from tests.ui.conftest import MODEL
from tests.ui.helpers import cache_model, wait_for


def _status(client) -> tuple[str, str]:
    return client.predict(api_name="/server_status")


def _healthy(client) -> tuple[str, str] | None:
    status = _status(client)
    return status if "healthy" in status[0] and "starting" not in status[0] else None


def test_load_shows_stopped_and_the_exact_command(ui_app):
    loaded = ui_app.client().predict(api_name="/server_load")
    status, boot_log, remote, model, command, gpus, workers, found, farm, pick, _pin, _timer = loaded
    assert gpus == "" and workers == "" and "GPU" in found  # the scale-out choices (tests/contract: a group)
    assert farm == "" and pick["choices"] == []  # no box (tests/ui/test_server_farm.py: boxes that joined)
    port = load_settings(ui_app.paths).server_port
    assert "stopped" in status and f"127.0.0.1:{port}" in status
    assert model == MODEL and remote == ""
    assert "SGLANG_OMNI_STRICT_PORT=1" in command
    assert (
        f"{ui_app.paths.backend_venv}/bin/sgl-omni serve --model-path Qwen/Qwen3-TTS-12Hz-0.6B-CustomVoice"
        in command
    )
    assert "configs/qwen3_tts.yaml" in command and f"--port {port}" in command
    other = ui_app.client().predict("higgs_audio_v3_tts", api_name="/server_command")
    assert "--model-path bosonai/higgs-audio-v3-tts-4b" in other and "higgs_audio_v3_tts.yaml" in other


def test_start_with_no_downloaded_model_points_to_the_models_tab(ui_app, tmp_path):
    moved = tmp_path / "moved"
    shutil.move(ui_app.cache_dir, moved)
    try:
        notice, _choice = ui_app.client().predict(api_name="/server_start")
    finally:
        shutil.move(moved, ui_app.cache_dir)
    assert "No model is downloaded" in notice and "Models" in notice
    assert "stopped" in _status(ui_app.client())[0]


def test_two_downloaded_models_ask_which_one(ui_app):
    extra = cache_model(ui_app.cache_dir, "higgs_audio_v3_tts")
    client = ui_app.client()
    try:
        notice, choice = client.predict(api_name="/server_start")  # the chooser's radio (its box opens)
    finally:
        shutil.rmtree(extra.parent.parent)
    assert notice == ""
    assert sorted(key for _, key in choice["choices"]) == sorted([MODEL, "higgs_audio_v3_tts"])
    assert choice["value"] == MODEL
    assert "stopped" in _status(client)[0]  # nothing started before the answer


def test_one_downloaded_model_starts_without_asking_then_stops(ui_app):
    client = ui_app.client()
    notice, _choice = client.predict(api_name="/server_start")
    assert notice.startswith("Start requested: Qwen3-TTS 0.6B CustomVoice")
    status, boot_log = wait_for(lambda: _healthy(client), timeout_s=60, what="the server to be healthy")
    assert "Qwen3-TTS 0.6B CustomVoice" in status and "started by omni-web" in status
    assert MODEL not in status  # the name users read, not the catalog key
    record = ui_app.services.server.owned_record()
    assert record is not None and record.model_key == MODEL
    health = httpx.get(f"{record.base_url}/health", timeout=5)
    assert health.status_code == 200 and health.json()["status"] == "healthy"
    assert "sgl-omni serve" in boot_log or "Uvicorn running" in boot_log
    assert "stopped" not in status
    assert ui_app.ctx.tasks.wait(TASK_SERVER, timeout_s=30).state is RunState.DONE  # the start has returned
    notice = client.predict(api_name="/server_stop")
    assert notice == "Stopped the server."
    assert ui_app.services.server.owned_record() is None
    with pytest.raises(httpx.HTTPError):
        httpx.get(f"{record.base_url}/health", timeout=2)
    status, boot_log = _status(client)
    assert "stopped" in status
    assert "Uvicorn running" in boot_log  # the last start's log file stays readable after the stop
    assert client.predict(api_name="/server_stop") == "No server started by omni-web is running."


def test_remote_url_is_saved_and_used_instead_of_a_local_start(ui_app):
    client = ui_app.client()
    assert (
        client.predict("http://127.0.0.1:9", api_name="/server_save_remote")
        == "Remote URL set to http://127.0.0.1:9."
    )
    assert load_settings(ui_app.paths).remote_url == "http://127.0.0.1:9"
    notice, _ = client.predict(api_name="/server_start")
    assert "remote server URL is set" in notice
    assert ui_app.services.server.owned_record() is None
    assert client.predict("", api_name="/server_save_remote") == "Remote URL cleared."
    assert load_settings(ui_app.paths).remote_url == ""


def test_bad_remote_url_is_refused_with_the_rule(ui_app):
    from gradio_client.exceptions import AppError

    with pytest.raises(AppError, match="must start with http"):
        ui_app.client().predict("gpu-box:8100", api_name="/server_save_remote")
