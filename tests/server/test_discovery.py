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
    assert (
        hosted_model_id(entry, ["BosonAI/Higgs-Audio-V3-TTS-4B@main"]) == "BosonAI/Higgs-Audio-V3-TTS-4B@main"
    )
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


def test_a_remote_url_that_is_not_sgl_omni_or_answers_nothing_says_so(data_paths) -> None:
    # Another web server on the URL (a 404 page for /health) is no server starting up, and a URL
    # where nothing answers is unreachable, not "stopped".
    import dataclasses
    import http.server
    import threading

    from omni_web.server import ServerManager, ServerState
    from omni_web.settings import Settings
    from omni_web.ui.server import status_html
    from tests.fakes.sgl_omni import free_port

    class NotFound(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 - the base class's name
            body = b"<html>Not here</html>"
            self.send_response(404)
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args) -> None:
            pass

    other = http.server.ThreadingHTTPServer(("127.0.0.1", 0), NotFound)
    threading.Thread(target=other.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{other.server_address[1]}"
        status = ServerManager(data_paths, dataclasses.replace(Settings(), remote_url=url)).status()
        assert status.state is ServerState.FAILED and "not as an sgl-omni server" in status.message
        assert "HTTP 404" in status.message
    finally:
        other.shutdown()
        other.server_close()
    gone = ServerManager(
        data_paths, dataclasses.replace(Settings(), remote_url=f"http://127.0.0.1:{free_port()}")
    )
    line = status_html(gone.status())
    assert ">unreachable<" in line and ">stopped<" not in line
