"""A server group against the REAL SGLang-Omni router (sglang-omni 0.1.9 wheel, contract venv).

The workers are the fake `sgl-omni serve` (tests/fakes), launched by omni-web exactly as the real
ones would be (one per "GPU", own port, strict port, own log); the router in front is the wheel's
own `sgl-omni-router-py`, installed into the fake backend venv (`install_router`). What is checked
is what a user sees: processes that come and go, per-worker request counts from the router's
`/health`, chapters read back with ffprobe, and the CLI's output and exit codes.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
import wave
from pathlib import Path

import httpx
import pytest

from omni_web.assemble import probe_chapters
from omni_web.catalog import get_entry
from omni_web.client import VoiceChoice
from omni_web.errors import ServerError
from omni_web.paths import DataPaths
from omni_web.pipeline import ConvertRequest
from omni_web.pipeline.serving import GROUP_REFERENCE_LIMIT_BYTES, convert_served, serving_for
from omni_web.server import ServerManager
from omni_web.server.capacity import GroupCapacity, worker_batch
from omni_web.server.group import group_pids, router_argv
from omni_web.server.record import process_info
from omni_web.server.router import read_router_health, worker_id
from omni_web.settings import Settings, save_settings
from tests.conftest import DATA_DIR
from tests.contract.setup_env import ContractVenv
from tests.fakes.sgl_omni import free_port, install_fake_sgl_omni, install_router, start_fake_server

pytestmark = pytest.mark.contract

MODEL = "qwen3_tts_0_6b_customvoice"
BASE_MODEL = "qwen3_tts_0_6b_base"
REPO = Path(__file__).resolve().parents[2]
BOOK = DATA_DIR / "wasteland.epub"
DEADLINE_S = 120.0


@pytest.fixture
def group_home(
    data_paths: DataPaths, contract_venv: ContractVenv, monkeypatch: pytest.MonkeyPatch
) -> DataPaths:
    """A data root whose backend venv runs the fake `sgl-omni` and the real router."""
    install_fake_sgl_omni(data_paths.backend_venv)
    install_router(data_paths.backend_venv, contract_venv.python)
    # Quick fake generations with a little latency, so a book keeps both workers busy for a while.
    monkeypatch.setenv("FAKE_SGL_SECONDS_PER_WORD", "0.004")
    monkeypatch.setenv("FAKE_SGL_SLOTS", "4")
    monkeypatch.setenv("FAKE_SGL_LATENCY_S", "0.05")
    return data_paths


def _manager(paths: DataPaths, **changes) -> ServerManager:
    # 0.004 s-a-word audio would fail QA's duration check (retakes); QA is not what is tested here.
    settings = Settings(
        server_port=free_port(), gpus="0,1", start_timeout_s=DEADLINE_S, qa_level="off", **changes
    )
    return ServerManager(paths, settings)


def _alive(pid: int) -> bool:
    info = process_info(pid)
    return info is not None and info.alive


def _wait(predicate, what: str, timeout_s: float = DEADLINE_S) -> None:
    deadline = time.monotonic() + timeout_s
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.2)


def _routed(manager: ServerManager) -> dict[str, int]:
    health = read_router_health(manager.status().endpoint)
    assert health is not None
    return {w.url: w.routed_requests for w in health.workers}


def test_group_of_two_starts_reports_each_worker_and_stops_without_leftovers(group_home: DataPaths) -> None:
    manager = _manager(group_home)
    lines: list[str] = []
    endpoint = manager.ensure_serving(get_entry(MODEL), on_log=lines.append).endpoint
    try:
        assert endpoint.group and endpoint.owned
        record = manager.group.record()
        assert record is not None and record.gpus == ("0", "1")
        pids = group_pids(record)
        assert len(pids) == 3  # router + 2 workers, each recorded with its start time
        health = read_router_health(endpoint.base_url)
        assert health is not None and health.routable_workers == health.total_workers == 2
        assert health.registry_state == "ready"  # warmed before the first request
        for worker in record.workers:  # own port, own log, CUDA_VISIBLE_DEVICES and strict port
            log = worker.record.log_path.read_text(encoding="utf-8")
            assert f"CUDA_VISIBLE_DEVICES={worker.gpu}" in log and "SGLANG_OMNI_STRICT_PORT=1" in log
            env = Path(f"/proc/{worker.record.pid}/environ").read_bytes().split(b"\0")
            assert f"CUDA_VISIBLE_DEVICES={worker.gpu}".encode() in env
        assert len({w.record.port for w in record.workers} | {endpoint.base_url}) == 3
        status = manager.status()
        assert status.healthy and [m.role for m in status.members] == ["router", "worker", "worker"]
        assert all(m.state == "healthy" for m in status.members)
        assert [m.gpu for m in status.members[1:]] == ["0", "1"]
        text = "\n".join(status.lines())
        assert "GPU 0" in text and "GPU 1" in text and "routed" in text
        assert any("Router: 2 of 2 workers routable" in line for line in lines)
    finally:
        assert manager.stop()
    for pid in pids:
        _wait(lambda pid=pid: not _alive(pid), f"pid {pid} to exit", 30)
    assert manager.group.record() is None
    assert manager.status().state.value == "stopped"


def _kill_group(pid: int) -> None:
    os.killpg(pid, signal.SIGKILL)  # the test's own worker, found by its recorded pid


def test_a_worker_killed_mid_book_costs_nothing_and_is_restarted(group_home: DataPaths) -> None:
    manager = _manager(group_home)
    entry = get_entry(MODEL)
    serving = manager.ensure_serving(entry)
    endpoint = serving.endpoint
    try:
        record = manager.group.record()
        victim = record.workers[0]
        killed = threading.Event()
        docs = []

        def progress(doc) -> None:
            docs.append(doc)
            if doc.chunks_done >= 60 and not killed.is_set():
                killed.set()
                _kill_group(victim.record.pid)

        request = ConvertRequest(book_path=BOOK, model_key=entry.key, voice=VoiceChoice.speaker("Vivian"))
        result = convert_served(
            request, serving, paths=group_home, settings=manager.settings, progress=progress
        )
        assert killed.is_set()
        assert result.m4b is not None
        chapters = probe_chapters(result.m4b)
        assert len(chapters) == len(result.chapters) == 5  # every chapter present
        assert result.chunks_total == docs[-1].chunks_done
        routed = _routed(manager)
        assert all(count > 20 for count in routed.values()), routed  # both workers carried the book
        # The dead worker was started again on its GPU and port, and the router routes to it again.
        _wait(
            lambda: (
                (r := manager.group.record()) is not None and r.workers[0].record.pid != victim.record.pid
            ),
            "the worker to be restarted",
        )
        fresh = manager.group.record().workers[0]
        assert fresh.gpu == "0" and fresh.record.port == victim.record.port and _alive(fresh.record.pid)
        _wait(
            lambda: read_router_health(endpoint.base_url).routable_workers == 2,
            "the worker to be re-admitted",
        )
    finally:
        manager.stop()


def test_with_every_worker_dead_the_book_waits_for_the_group_then_finishes(
    group_home: DataPaths, monkeypatch: pytest.MonkeyPatch
) -> None:
    """503 `no eligible upstream` waits (with a status) while the dead workers are started again."""
    # Slow enough that the book is still rendering when the kill lands (progress is sent at most
    # every 0.5 s: at 0.05 s a request the book could be done by the first report past 40 chunks).
    monkeypatch.setenv("FAKE_SGL_LATENCY_S", "0.3")
    manager = _manager(group_home)
    entry = get_entry(MODEL)
    serving = manager.ensure_serving(entry)
    # The restarted workers take 10 s to load their model (a real one takes minutes): longer than
    # any client retry, so the job has to wait for the group.
    monkeypatch.setenv("FAKE_SGL_BOOT_DELAY_S", "10")
    try:
        victims = [w.record.pid for w in manager.group.record().workers]
        killed = threading.Event()
        docs = []

        def progress(doc) -> None:
            docs.append(doc)
            if doc.chunks_done >= 40 and not killed.is_set():
                killed.set()
                for pid in victims:
                    _kill_group(pid)

        request = ConvertRequest(
            book_path=BOOK, model_key=entry.key, chapters=(1, 2), voice=VoiceChoice.speaker("Vivian")
        )
        result = convert_served(
            request, serving, paths=group_home, settings=manager.settings, progress=progress
        )
        assert killed.is_set() and len(result.chapters) == 2
        assert any(d.message.startswith("Waiting for the server group: no worker is routable") for d in docs)
        fresh = [w.record.pid for w in manager.group.record().workers]
        assert not set(fresh) & set(victims) and all(_alive(pid) for pid in fresh)
    finally:
        manager.stop()


def test_requests_spread_over_both_workers_and_capacity_follows_the_routable_count(
    group_home: DataPaths,
) -> None:
    manager = _manager(group_home)
    entry = get_entry(MODEL)
    serving = manager.ensure_serving(entry)
    endpoint = serving.endpoint
    try:
        batch = worker_batch(entry, manager.settings)
        capacity = GroupCapacity(endpoint.base_url, batch, refresh_s=0)
        assert capacity() == 2 * (batch + 1)
        worker = manager.group.record().workers[1]
        drained = httpx.put(f"{endpoint.base_url}/workers/{worker_id(worker.url)}", json={"disabled": True})
        assert drained.status_code == 200, drained.text
        assert capacity() == batch + 1  # a worker that leaves lowers it while the job runs
        httpx.put(f"{endpoint.base_url}/workers/{worker_id(worker.url)}", json={"disabled": False})
        assert capacity() == 2 * (batch + 1)
        assert capacity.history == [2 * (batch + 1), batch + 1, 2 * (batch + 1)]
        # `convert --api-url <router>`: a router found at a plain URL sizes the job from its /health too.
        remote = serving_for(manager, entry, api_url=endpoint.base_url)
        assert not remote.endpoint.owned and not remote.endpoint.group
        docs = []
        request = ConvertRequest(
            book_path=BOOK, model_key=entry.key, chapters=(1,), voice=VoiceChoice.speaker("Vivian")
        )
        convert_served(request, remote, paths=group_home, settings=manager.settings, progress=docs.append)
        rendering = next(d for d in docs if d.phase == "rendering")
        assert f"{2 * (batch + 1)} requests in flight" in rendering.message
        routed = _routed(manager)
        assert min(routed.values()) > 0, routed  # spread, not pinned
    finally:
        manager.stop()


def _long_clip(path: Path, seconds: float) -> Path:
    """A 24 kHz mono WAV of ``seconds``: at 20 s its base64 (1.28 MB) is over the router's 1 MiB."""
    subprocess.run(
        ["espeak-ng", "-w", str(path), "This is the narrator's reference voice for the group test. " * 6],
        check=True,
        capture_output=True,
    )
    with wave.open(str(path), "rb") as src:
        params, frames = src.getparams(), src.readframes(src.getnframes())
    want = int(seconds * params.framerate) * params.sampwidth
    frames = (frames * (want // len(frames) + 1))[:want]
    with wave.open(str(path), "wb") as out:
        out.setparams(params)
        out.writeframes(frames)
    return path


def test_clone_references_go_inline_under_1_mib_and_spread_over_every_worker(
    group_home: DataPaths, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log_path = tmp_path / "requests.jsonl"
    monkeypatch.setenv("FAKE_SGL_REQUEST_LOG", str(log_path))
    clip = _long_clip(tmp_path / "narrator.wav", 20.0)
    assert clip.stat().st_size * 4 / 3 > 1 << 20  # sent as is, the router would pin it to one worker
    manager = _manager(group_home)
    entry = get_entry(BASE_MODEL)
    serving = manager.ensure_serving(entry)
    try:
        request = ConvertRequest(
            book_path=BOOK,
            model_key=entry.key,
            chapters=(1,),
            voice=VoiceChoice.clone(clip, "This is the narrator's reference voice for the group test."),
        )
        result = convert_served(request, serving, paths=group_home, settings=manager.settings)
        assert len(result.chapters) == 1
        bodies = [json.loads(line) for line in log_path.read_text(encoding="utf-8").splitlines()]
        assert bodies and all(str(b.get("ref_audio", "")).startswith("data:audio/") for b in bodies)
        assert max(len(json.dumps(b)) for b in bodies) < 1 << 20
        assert GROUP_REFERENCE_LIMIT_BYTES < 800_000
        routed = _routed(manager)
        assert len(routed) == 2 and min(routed.values()) >= len(bodies) // 4, routed  # not pinned to one
    finally:
        manager.stop()


def test_a_remote_worker_is_checked_added_shown_and_removed(group_home: DataPaths, tmp_path: Path) -> None:
    remote = start_fake_server(MODEL, log_path=tmp_path / "remote.log")
    wrong = start_fake_server(BASE_MODEL, log_path=tmp_path / "wrong.log")
    manager = _manager(group_home, worker_urls=remote.base_url)
    try:
        endpoint = manager.ensure_serving(get_entry(MODEL)).endpoint
        health = read_router_health(endpoint.base_url)
        assert health.total_workers == 3 and health.routable_workers == 3
        members = manager.status().members
        assert [m.role for m in members] == ["router", "worker", "worker", "remote"]
        assert members[3].url == remote.base_url and members[3].state == "healthy"
        assert manager.group.remove_remote(remote.base_url)
        assert read_router_health(endpoint.base_url).total_workers == 2
        assert [m.role for m in manager.status().members] == ["router", "worker", "worker"]
        with pytest.raises(ServerError, match="not Qwen3-TTS 0.6B CustomVoice"):
            manager.group.add_remote(wrong.base_url, get_entry(MODEL))
        manager.group.add_remote(remote.base_url, get_entry(MODEL))
        _wait(
            lambda: read_router_health(endpoint.base_url).routable_workers == 3, "the remote to be routable"
        )
        assert manager.status().members[3].state == "healthy"
        # A remote is never stopped by us; one that dies is shown as down.
        manager.stop()
        assert remote.is_alive()
        endpoint = manager.ensure_serving(get_entry(MODEL)).endpoint
        remote.stop()
        _wait(lambda: manager.status().members[3].state == "down", "the dead remote to show as down", 60)
        assert read_router_health(endpoint.base_url).routable_workers == 2  # the managed workers serve on
    finally:
        manager.stop()
        remote.stop()
        wrong.stop()


def _cli(home: Path, *args: str, timeout: float = 180) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "OMNI_WEB_HOME": str(home)}
    return subprocess.run(  # noqa: S603 - argv list
        [sys.executable, "-m", "omni_web", *args],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def test_cli_start_gpus_status_convert_and_stop(group_home: DataPaths, tmp_path: Path) -> None:
    """The issue's "Done when", through the CLI: two workers + router, a book spread, nothing left."""
    port = free_port()
    save_settings(group_home, Settings(server_port=port, qa_level="off"))  # the user's configured port
    started = _cli(group_home.root, "server", "start", "--model", MODEL, "--gpus", "0,1")
    assert started.returncode == 0, started.stdout + started.stderr
    assert "NVML" in started.stdout  # explicit ids honoured although NVML sees no card here
    try:
        status = _cli(group_home.root, "server", "status")
        assert status.returncode == 0, status.stdout
        rows = [line for line in status.stdout.splitlines() if line.startswith("  ")]
        assert len(rows) == 3 and all(" healthy " in row for row in rows), status.stdout
        record = ServerManager(group_home, Settings(server_port=port)).group.record()
        pids = group_pids(record)
        assert len(pids) == 3
        converted = _cli(
            group_home.root,
            "convert",
            str(BOOK),
            "--model",
            MODEL,
            "--voice",
            "Vivian",
            "--chapters",
            "1-2",
            "--out",
            str(tmp_path / "out"),
        )
        assert converted.returncode == 0, converted.stdout + converted.stderr
        assert f"127.0.0.1:{port}" in converted.stdout and "started for this run" not in converted.stdout
        routed = {w.url: w.routed_requests for w in read_router_health(f"http://127.0.0.1:{port}").workers}
        assert len(routed) == 2 and min(routed.values()) > 5, routed  # spread over both workers
        assert set(group_pids(ServerManager(group_home, Settings(server_port=port)).group.record())) == set(
            pids
        )
    finally:
        stopped = _cli(group_home.root, "server", "stop")
    assert stopped.returncode == 0 and "Stopped the server group" in stopped.stdout, stopped.stdout
    for pid in pids:
        _wait(lambda pid=pid: not _alive(pid), f"pid {pid} to exit", 30)


def test_a_remote_url_that_is_itself_a_router_works_as_a_plain_remote(
    group_home: DataPaths, tmp_path: Path
) -> None:
    backend = start_fake_server(MODEL, log_path=tmp_path / "behind-router.log")
    port = free_port()
    argv = router_argv(
        group_home.backend_venv / "bin" / "sgl-omni-router-py",
        host="127.0.0.1",
        port=port,
        worker_urls=[backend.base_url],
        state_dir=tmp_path / "rs",
    )
    with (tmp_path / "router2.log").open("wb") as log:
        other = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)  # noqa: S603
    other_url = f"http://127.0.0.1:{port}"
    manager = _manager(group_home, worker_urls=other_url)
    try:
        _wait(lambda: (h := read_router_health(other_url)) is not None and h.all_routable, "the other router")
        endpoint = manager.ensure_serving(get_entry(MODEL)).endpoint
        remote = manager.status().members[3]
        assert remote.role == "remote" and remote.url == other_url and remote.state == "healthy"
        for _ in range(12):
            response = httpx.post(
                f"{endpoint.base_url}/v1/audio/speech",
                timeout=30,
                json={"input": "Hello there.", "voice": "Vivian", "response_format": "wav"},
            )
            assert response.status_code == 200, response.text
        assert _routed(manager)[other_url] > 0  # it took its share like any worker
    finally:
        manager.stop()
        if other.poll() is None:
            other.send_signal(signal.SIGINT)
            other.wait(timeout=20)
        backend.stop()
