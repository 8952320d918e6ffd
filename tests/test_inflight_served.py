"""Requests in flight against the fake sgl-omni as a batching server: found, configured, shown.

The fake generates ``width`` requests at once (its config's ``max_running_requests``, or
FAKE_SGL_SLOTS), each taking FAKE_SGL_LATENCY_S, and refuses beyond FAKE_SGL_QUEUE_LIMIT waiting
with the real 503 text. How full the server is comes from its own ``/health`` (``request_states``),
read by a watcher thread while the book renders; it stops on an event, not after a sleep.
"""

from __future__ import annotations

import threading
from pathlib import Path

import httpx
import pytest

from omni_web.catalog import get_entry
from omni_web.client import SpeechClient, SpeechRequest, VoiceChoice
from omni_web.client.inflight import InFlightController, Phase
from omni_web.gpu import GpuInfo, GpuProbe
from omni_web.paths import DataPaths
from omni_web.pipeline import ConvertRequest
from omni_web.pipeline.serving import convert_served
from omni_web.render import RenderItem, chunk_key, render_chunks, shaping_fingerprint
from omni_web.retry import NO_RETRY
from omni_web.server import manager as manager_module
from omni_web.server.serving import ForeignServing
from omni_web.server.status import Endpoint
from omni_web.settings import Settings
from tests.conftest import DATA_DIR
from tests.fakes.sgl_omni import free_port, install_fake_sgl_omni

pytestmark = pytest.mark.slow  # fake servers and their processes

MODEL = get_entry("qwen3_tts_0_6b_customvoice")
H100 = GpuProbe(driver_version="550.54.15",
                gpus=(GpuInfo(0, "NVIDIA H100 80GB HBM3", (9, 0), 80 * 1024**3, 79 * 1024**3),))


class RunningWatch:
    """The most requests the server reported running at once, polled from its /health until stopped."""

    def __init__(self, base_url: str) -> None:
        self.peak = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, args=(base_url,), daemon=True)

    def _run(self, base_url: str) -> None:
        with httpx.Client(base_url=base_url, timeout=5) as http:
            while not self._stop.wait(0.05):
                states = http.get("/health").json().get("request_states", {})
                self.peak = max(self.peak, int(states.get("running", 0)))

    def __enter__(self) -> RunningWatch:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=10)


def items(count: int, salt: str) -> list[RenderItem]:
    fingerprint = shaping_fingerprint({"inflight": salt})
    texts = [f"Sentence number {i} of the test book, read aloud." for i in range(count)]
    return [RenderItem(chunk_key(t, fingerprint), t, 0, 1, "One", i + 1) for i, t in enumerate(texts)]


def render_with(base_url: str, controller: InFlightController, chunks: list[RenderItem], cache: Path) -> None:
    with SpeechClient(base_url, speech_retry=NO_RETRY) as client, client.metered(controller):
        def synthesize(item: RenderItem) -> bytes:
            return client.speech(
                MODEL, SpeechRequest(text=item.text, voice=VoiceChoice.speaker("Vivian"))
            ).audio

        render_chunks(chunks, synthesize, cache_dir=cache, concurrency=controller)


def test_a_foreign_server_is_filled_to_its_width_found_while_rendering(fake_server, tmp_path: Path) -> None:
    server = fake_server(
        MODEL.key,
        env={
            "FAKE_SGL_SLOTS": "32",
            "FAKE_SGL_QUEUE_LIMIT": "32",
            "FAKE_SGL_LATENCY_S": "0.5",
            "FAKE_SGL_SECONDS_PER_WORD": "0.05",
        },
    )
    endpoint = Endpoint(base_url=server.base_url, model_key=MODEL.key, model_id=MODEL.repo_id, owned=False)
    controller = ForeignServing(endpoint, patience_s=30, batch=16).in_flight(MODEL.default_concurrency)
    assert controller() == MODEL.default_concurrency  # the catalog's number is only the start
    with RunningWatch(server.base_url) as watch:
        render_with(server.base_url, controller, items(32 * 12, "foreign"), tmp_path / "cache")
    state = controller.state()
    assert watch.peak == 32, controller.history  # the whole batch was busy
    assert state.phase is Phase.HOLDING
    assert state.full_at is not None and 28 <= state.full_at <= 40, controller.history
    assert state.refusals <= 5
    assert "in flight, server full at ~" in state.line


def test_a_queue_bound_caps_the_number_with_a_handful_of_refusals(fake_server, tmp_path: Path) -> None:
    server = fake_server(
        MODEL.key,
        env={
            "FAKE_SGL_SLOTS": "8",
            "FAKE_SGL_QUEUE_LIMIT": "4",
            "FAKE_SGL_LATENCY_S": "0.3",
            "FAKE_SGL_SECONDS_PER_WORD": "0.05",
        },
    )
    controller = InFlightController(16)  # the catalog's start, above what this server takes
    with RunningWatch(server.base_url) as watch:
        render_with(server.base_url, controller, items(160, "refused"), tmp_path / "cache")
    state = controller.state()
    # The first burst over the bound is refused (16 sent, 8 + 4 taken); the cap keeps it from happening again.
    assert 1 <= state.refusals <= 8, controller.history
    assert state.limit <= 8 + 4
    assert watch.peak == 8
    assert state.full_at is not None and state.full_at >= 6, controller.history
    assert "refused (queue full)" in state.line


def test_a_managed_server_started_with_the_throughput_profile_is_filled_to_its_width(
    data_paths: DataPaths, tmp_path: Path
) -> None:
    install_fake_sgl_omni(data_paths.backend_venv)
    settings = Settings(server_port=free_port(), start_timeout_s=60)
    manager = manager_module.ServerManager(data_paths, settings, gpu_probe=lambda: H100, poll_interval_s=0.1)
    env = {"FAKE_SGL_LATENCY_S": "0.5", "FAKE_SGL_SECONDS_PER_WORD": "0.05"}
    with pytest.MonkeyPatch.context() as patch:
        for name, value in env.items():
            patch.setenv(name, value)  # the manager's child inherits them; its width comes from the config
        serving = manager.ensure_serving(MODEL)
        try:
            assert serving.endpoint.tag == "throughput profile"
            assert manager.status().model_label.endswith("(throughput profile)")
            from omni_web.ui.server import status_html  # noqa: PLC0415 - the Server tab's line, Gradio loaded late

            assert "throughput profile" in status_html(
                manager.status()
            )  # the Server tab says which profile runs
            controller = serving.in_flight(MODEL.default_concurrency)
            assert controller() >= 64 and controller.state().full_at == 64
            with RunningWatch(serving.endpoint.base_url) as watch:
                render_with(
                    serving.endpoint.base_url, controller, items(64 * 4, "managed"), tmp_path / "cache"
                )
            assert (
                watch.peak == 64
            )  # the configured width, filled; the fake runs no more than its config says
            assert controller.state().peak_in_flight >= 64
        finally:
            manager.stop()


def test_the_progress_document_says_how_many_are_in_flight(data_paths: DataPaths, fake_server) -> None:
    server = fake_server(MODEL.key, env={"FAKE_SGL_SECONDS_PER_WORD": "0.004"})
    endpoint = Endpoint(base_url=server.base_url, model_key=MODEL.key, model_id=MODEL.repo_id, owned=False)
    serving = ForeignServing(endpoint, patience_s=30, batch=16)
    docs = []
    request = ConvertRequest(
        book_path=DATA_DIR / "hefty-water.epub",
        model_key=MODEL.key,
        voice=VoiceChoice.speaker("Vivian"),
        chapters=(1,),
    )
    convert_served(
        request, serving, paths=data_paths, settings=Settings(qa_level="off"), progress=docs.append
    )
    rendering = [d for d in docs if d.phase == "rendering" and d.in_flight_line]
    assert rendering, [d.phase for d in docs]
    assert rendering[-1].peak_in_flight >= 1
    assert " in flight" in rendering[-1].in_flight_line
