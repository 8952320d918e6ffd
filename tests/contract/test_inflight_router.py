"""The in-flight controller behind the REAL SGLang-Omni router (the contract venv's wheel).

Two fake `sgl-omni serve` workers of width 8 (queues as deep, 503 beyond) stand behind the wheel's
own router, given to the renderer as a server we did not start. One worker is taken out of the
router a third into the book and put back two thirds in: the number in flight must come down to
one worker's share (not fill the other's queue until refused) and go back up when it returns.
"""

from __future__ import annotations

import signal
import subprocess
import time
from pathlib import Path

import pytest

from omni_web.catalog import get_entry
from omni_web.client import SpeechClient, SpeechRequest, VoiceChoice
from omni_web.render import RenderItem, chunk_key, render_chunks, shaping_fingerprint
from omni_web.server.group import router_argv
from omni_web.server.router import add_worker, read_router_health, remove_worker, warm_voice_registry
from omni_web.server.serving import ForeignServing
from omni_web.server.status import Endpoint
from tests.contract.setup_env import ContractVenv
from tests.fakes.sgl_omni import free_port, install_router, start_fake_server

pytestmark = pytest.mark.contract

MODEL = "qwen3_tts_0_6b_customvoice"
WIDTH = 8  # each worker's batch (and queue)
CHUNKS = 480


def _start_router(router: Path, urls: list[str], work: Path) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    argv = router_argv(router, host="127.0.0.1", port=port, worker_urls=urls, state_dir=work / "rs")
    with (work / "router.log").open("wb") as log:
        process = subprocess.Popen(  # noqa: S603 - the router's own argv
            argv, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
        )
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while (health := read_router_health(base, timeout_s=2)) is None or not health.all_routable:
        assert process.poll() is None, (work / "router.log").read_text()[-2000:]
        assert time.monotonic() < deadline, "the router never saw both workers routable"
        time.sleep(0.2)
    warm_voice_registry(base)
    return process, base


def test_behind_the_real_router_the_number_follows_a_worker_leaving_and_coming_back(
    contract_venv: ContractVenv, tmp_path: Path
) -> None:
    env = {
        "FAKE_SGL_SLOTS": str(WIDTH),
        "FAKE_SGL_QUEUE_LIMIT": str(WIDTH),
        "FAKE_SGL_LATENCY_S": "0.5",
        "FAKE_SGL_SECONDS_PER_WORD": "0.1",
    }
    router = install_router(tmp_path / "router-venv", contract_venv.python)
    workers = [start_fake_server(MODEL, env=env, log_path=tmp_path / f"worker-{i}.log") for i in range(2)]
    process = None
    try:
        process, base = _start_router(router, [w.base_url for w in workers], tmp_path)
        entry = get_entry(MODEL)
        endpoint = Endpoint(base_url=base, model_key=MODEL, model_id=MODEL, owned=False)
        controller = ForeignServing(endpoint, patience_s=60, batch=4).in_flight(4)
        fingerprint = shaping_fingerprint({"test": "router-in-flight"})
        texts = [f"Sentence number {i} is read." for i in range(CHUNKS)]
        items = [
            RenderItem(chunk_key(text, fingerprint), text, i // 40, i // 40 + 1, "Test", i % 40 + 1)
            for i, text in enumerate(texts)
        ]
        before: list[int] = []  # the number allowed when the worker was taken out
        alone: list[int] = []  # the number allowed while one worker was routable
        phase = ["both"]

        def progress(p: object) -> None:
            done = getattr(p, "chunks_done", 0)
            if phase[0] == "both" and done >= CHUNKS // 3:
                phase[0] = "alone"
                before.append(controller())
                assert remove_worker(base, workers[1].base_url)
            elif phase[0] == "alone" and done >= 2 * CHUNKS // 3:
                phase[0] = "back"
                add_worker(base, workers[1].base_url)
            elif phase[0] == "alone":
                alone.append(controller())

        with SpeechClient(base, local_server=False) as client, client.metered(controller):
            voice = VoiceChoice.speaker("Vivian")
            summary = render_chunks(
                items,
                lambda item: client.speech(entry, SpeechRequest(text=item.text, voice=voice)).audio,
                cache_dir=tmp_path / "chunks",
                concurrency=controller,
                progress=progress,
            )
        state = controller.state()
        history = controller.history
        assert summary.progress.chunks_done == CHUNKS
        assert state.refusals <= 5, history
        # One worker: half the number (its share), not both workers' number kept until refused.
        assert alone and min(alone) <= before[0] // 2 + 1, (before, alone, history)
        # Both again: the number is back to both workers' width.
        assert state.limit >= 2 * WIDTH, history
    finally:
        if process is not None and process.poll() is None:
            process.send_signal(signal.SIGINT)
            process.wait(timeout=20)
        for worker in workers:
            worker.stop()
