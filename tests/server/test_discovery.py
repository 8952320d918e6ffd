"""Endpoint discovery and the remote-URL branch of the one-model policy (httpx.MockTransport)."""

from __future__ import annotations

import httpx
import pytest

from omni_web.catalog import get_entry
from omni_web.client import SpeechClient
from omni_web.errors import ForeignServer, ServerNotRunning
from omni_web.server.discovery import catalog_key_for, hosted_model_id, probe_endpoint
from omni_web.server.manager import ServerManager
from omni_web.server.status import ServerState
from omni_web.settings import Settings

REMOTE = "http://gpu-box:8000"


def _server(model_id: str | None, *, health: tuple[int, str] = (200, "healthy")):
    """A handler that answers like sglang-omni 0.1.9, or refuses connections when model_id is None."""
    seen: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request.url.path)
        if model_id is None:
            raise httpx.ConnectError("Connection refused", request=request)
        if request.url.path == "/health":
            code, word = health
            return httpx.Response(code, json={"status": word, "running": True, "stages": ["tts_engine"]})
        if request.url.path == "/v1/models":
            return httpx.Response(200, json={"object": "list", "data": [{"id": model_id, "object": "model"}]})
        return httpx.Response(404, json={"detail": "Not Found"})

    return handler, seen


def _factory(handler):
    def factory(base_url: str, **kwargs) -> SpeechClient:
        return SpeechClient(base_url, transport=httpx.MockTransport(handler), **kwargs)

    return factory


def _manager(data_paths, handler) -> ServerManager:
    return ServerManager(data_paths, Settings(remote_url=REMOTE), client_factory=_factory(handler))


def test_hosted_model_id_matches_repo_id_revision_and_key() -> None:
    entry = get_entry("higgs_audio_v3_tts")
    assert hosted_model_id(entry, ["bosonai/higgs-audio-v3-tts-4b"]) == "bosonai/higgs-audio-v3-tts-4b"
    assert hosted_model_id(entry, ["BosonAI/Higgs-Audio-V3-TTS-4B@main"]) == "BosonAI/Higgs-Audio-V3-TTS-4B@main"
    assert hosted_model_id(entry, ["higgs_audio_v3_tts"]) == "higgs_audio_v3_tts"
    assert hosted_model_id(entry, ["Zyphra/ZONOS2", "my-own-name"]) is None
    assert catalog_key_for(["my-own-name", "Zyphra/ZONOS2"]) == "zonos2"
    assert catalog_key_for(["my-own-name"]) is None


def test_probe_reads_health_and_models() -> None:
    handler, seen = _server("Zyphra/ZONOS2")
    probe = probe_endpoint(REMOTE + "/v1/", client_factory=_factory(handler))
    assert probe.base_url == REMOTE
    assert probe.reachable and probe.healthy and probe.state is ServerState.HEALTHY
    assert probe.model_ids == ("Zyphra/ZONOS2",)
    assert probe.stages == ("tts_engine",)
    assert seen == ["/health", "/v1/models"]


def test_probe_of_nothing_is_unreachable() -> None:
    handler, _ = _server(None)
    probe = probe_endpoint(REMOTE, client_factory=_factory(handler))
    assert not probe.reachable and probe.state is ServerState.STOPPED


def test_remote_server_with_the_model_is_used(data_paths) -> None:
    handler, _ = _server("Qwen/Qwen3-TTS-12Hz-0.6B-CustomVoice")
    endpoint = _manager(data_paths, handler).ensure_serving(get_entry("qwen3_tts_0_6b_customvoice")).endpoint
    assert endpoint.base_url == REMOTE
    assert endpoint.model_id == "Qwen/Qwen3-TTS-12Hz-0.6B-CustomVoice"
    assert endpoint.owned is False


def test_remote_server_with_another_model_is_refused(data_paths) -> None:
    handler, _ = _server("Zyphra/ZONOS2")
    with pytest.raises(ForeignServer) as caught:
        _manager(data_paths, handler).ensure_serving(get_entry("moss_tts"))
    assert caught.value.hosted_model == "Zyphra/ZONOS2"
    assert caught.value.wanted_model == "moss_tts"
    assert REMOTE in str(caught.value)


def test_remote_server_that_is_down_or_warming_up(data_paths) -> None:
    handler, _ = _server(None)
    with pytest.raises(ServerNotRunning, match="Nothing answers at the remote server"):
        _manager(data_paths, handler).ensure_serving(get_entry("moss_tts"))
    handler, _ = _server("OpenMOSS-Team/MOSS-TTS-v1.5", health=(503, "starting"))
    with pytest.raises(ServerNotRunning, match="not ready"):
        _manager(data_paths, handler).ensure_serving(get_entry("moss_tts"))


def test_remote_status_and_stop(data_paths) -> None:
    handler, _ = _server("Zyphra/ZONOS2")
    manager = _manager(data_paths, handler)
    status = manager.status()
    assert status.state is ServerState.HEALTHY
    assert (status.remote, status.owned, status.pid) == (True, False, None)
    assert status.model_key == "zonos2" and status.endpoint == REMOTE
    assert manager.stop() is False  # nothing of ours; the remote server is never touched

    handler, _ = _server(None)
    status = _manager(data_paths, handler).status()
    assert status.state is ServerState.STOPPED
    assert "remote URL" in status.message
