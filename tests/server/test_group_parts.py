"""The pure parts of scale-out: GPU choice, the router's /health, group capacity and the 503 wait.

The whole group against the real router is in tests/contract/test_router_group.py.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from omni_web.catalog import get_entry
from omni_web.errors import ServerNotRunning, SettingsError
from omni_web.gpu import GpuInfo, GpuProbe
from omni_web.render import RenderItem, render_chunks
from omni_web.server import Endpoint
from omni_web.server.capacity import GroupCapacity, group_concurrency
from omni_web.server.gpus import parse_gpu_spec, select_gpus
from omni_web.server.group import router_argv
from omni_web.server.router import RouterHealth, is_router_health, parse_router_health, worker_id
from omni_web.server.serving import GroupServing, Recovery
from omni_web.settings import Settings
from tests.audio import wav_bytes

GIB = 1024**3
ENTRY = get_entry("qwen3_tts_1_7b_base")  # about 12 GB


def _gpu(index: int, total_gib: float) -> GpuInfo:
    return GpuInfo(index, f"Card {index}", (8, 9), int(total_gib * GIB), int(total_gib * GIB))


def test_all_takes_every_gpu_with_room_and_says_which_it_skips() -> None:
    probe = GpuProbe("550", (_gpu(0, 24), _gpu(1, 8), _gpu(2, 16)))
    chosen = select_gpus("all", ENTRY, probe)
    assert chosen.ids == (0, 2) and chosen.is_group
    assert any("GPU 1" in w and "no room" in w for w in chosen.warnings)
    assert select_gpus("", ENTRY, probe).ids == (0, 2)  # the default
    assert select_gpus("", ENTRY, GpuProbe("550", (_gpu(0, 24),))).is_group is False  # one GPU: as today


def test_explicit_ids_are_honoured_even_where_nvml_sees_nothing() -> None:
    blind = GpuProbe(None, (), warning="NO NVIDIA GPU")
    chosen = select_gpus("0,1", ENTRY, blind)
    assert chosen.ids == (0, 1) and chosen.explicit
    assert "NVML lists no GPU" in chosen.warnings[0]
    partial = select_gpus("0,3", ENTRY, GpuProbe("550", (_gpu(0, 24),)))
    assert partial.ids == (0, 3) and any("does not list GPU 3" in w for w in partial.warnings)
    assert parse_gpu_spec(" 2, 0 ,2") == (2, 0)
    with pytest.raises(SettingsError, match="write all, GPU ids like 0,2, or none"):
        parse_gpu_spec("first")


def test_settings_validate_gpus_and_worker_urls() -> None:
    settings = Settings(gpus="0,2", worker_urls="http://a:8000/, http://b:8000 http://a:8000").validate()
    assert settings.worker_url_list == ("http://a:8000", "http://b:8000")
    with pytest.raises(SettingsError, match="gpus"):
        Settings(gpus="gpu0").validate()
    with pytest.raises(SettingsError, match="worker_urls"):
        Settings(worker_urls="a:8000").validate()


HEALTH = {
    "status": "healthy", "routable_workers": 1, "total_workers": 2,
    "workers": [
        {"url": "http://127.0.0.1:8101", "health_state": "healthy", "routable": True, "active_requests": 3,
         "routed_requests": 40, "failed_requests": 0},
        {"url": "http://127.0.0.1:8102", "health_state": "unhealthy", "routable": False, "routed_requests": 9,
         "failed_requests": 8, "last_error": "All connection attempts failed"},
    ],
    "voice_routing": {"registry_state": "ready"},
}


def test_router_health_is_read_and_told_apart_from_a_plain_server() -> None:
    assert is_router_health(HEALTH)
    assert not is_router_health({"status": "healthy", "stages": ["a"]})
    health = parse_router_health(200, HEALTH)
    assert not health.all_routable and health.routable_urls() == ("http://127.0.0.1:8101",)
    dead = health.worker("http://127.0.0.1:8102/")
    assert dead is not None and dead.failed_requests == 8 and dead.last_error.startswith("All connection")
    assert health.registry_state == "ready"
    assert worker_id("http://127.0.0.1:8101") == "http%3A%2F%2F127.0.0.1%3A8101"


def test_router_argv_uses_least_request_and_every_worker() -> None:
    argv = router_argv(Path("/v/bin/sgl-omni-router-py"), host="0.0.0.0", port=8100,
                       worker_urls=["http://127.0.0.1:8101", "http://box2:8000"], state_dir=Path("/s"))
    assert argv[argv.index("--policy") + 1] == "least_request"
    start = argv.index("--worker-urls") + 1
    assert argv[start : start + 2] == ["http://127.0.0.1:8101", "http://box2:8000"]
    assert argv[argv.index("--port") + 1] == "8100" and "--router-state-dir" in argv


def _health(routable: int, total: int) -> RouterHealth:
    workers = [
        {"url": f"http://127.0.0.1:{8101 + i}", "health_state": "healthy" if i < routable else "unhealthy",
         "routable": i < routable}
        for i in range(total)
    ]
    return parse_router_health(200 if routable else 503, {"status": "x", "routable_workers": routable,
                                                          "total_workers": total, "workers": workers})


def test_capacity_is_batch_plus_one_per_routable_worker_and_is_re_read() -> None:
    seen = [_health(2, 2)]
    now = [0.0]
    capacity = GroupCapacity("http://r", 16, refresh_s=2.0, read=lambda _url: seen[0], clock=lambda: now[0])
    assert capacity() == 34
    seen[0] = _health(1, 2)
    assert capacity() == 34  # cached within refresh_s
    now[0] = 2.5
    assert capacity() == 17
    seen[0] = _health(0, 2)
    now[0] = 5.0
    assert capacity() == 1  # nothing routable: one chunk keeps probing
    assert group_concurrency(_health(4, 4), 8) == 36


def test_renderer_follows_a_changing_concurrency(tmp_path: Path) -> None:
    active = 0
    peak: list[int] = []
    lock = threading.Lock()
    limit = [2]

    def synthesize(_text: str) -> bytes:
        nonlocal active
        with lock:
            active += 1
            peak.append(active)
        time.sleep(0.02)
        with lock:
            active -= 1
        return wav_bytes(0.1)

    items = [RenderItem(f"k{i}", f"text {i}", 0, 1, "One", i + 1) for i in range(60)]

    def concurrency() -> int:
        with lock:
            done = len(peak)
        if done > 20:
            limit[0] = 6
        return limit[0]

    render_chunks(items, synthesize, cache_dir=tmp_path, concurrency=concurrency)
    assert max(peak[:15]) <= 2 and max(peak) > 2  # it grew while the run went on


class FakeGroupManager:
    """The calls a GroupServing makes of the manager: stop flag, router alive, dead workers."""

    def __init__(self, *, stopped: bool = False, dead: list[int] | None = None) -> None:
        self.stopped = stopped
        self.dead = dead or []
        self.restarts = 0

    def refuse_if_stopped(self) -> None:
        if self.stopped:
            raise ServerNotRunning("The server was stopped while the job was rendering.")

    def is_alive(self) -> bool:
        return True

    def dead_group_workers(self) -> list[int]:
        return list(self.dead)

    def revive_group_workers(self, *, on_log=None) -> list[str]:
        return []


def _group(manager: FakeGroupManager, read, **kwargs) -> GroupServing:
    endpoint = Endpoint("http://127.0.0.1:8100", "k", "m", owned=True, group=True)
    return GroupServing(manager, endpoint, batch=4, read=read, sleep_s=0.01, **kwargs)  # type: ignore[arg-type]


def test_no_eligible_upstream_waits_for_the_group_with_a_status_then_retries() -> None:
    answers = [_health(0, 2), _health(0, 2), _health(1, 2)]
    messages: list[str] = []
    serving = _group(FakeGroupManager(), lambda _url: answers.pop(0) if len(answers) > 1 else answers[0],
                     patience_s=60)
    with serving.watch(on_status=messages.append):
        assert serving.recover(RuntimeError("503 no eligible upstream")) is Recovery.ALIVE
    assert messages[0].startswith("Waiting for the server group: no worker is routable (0 of 2)")
    assert messages[-1] == "" and serving.status_line() == ""  # cleared once a worker is back
    now = [0.0]

    def clock() -> float:
        now[0] += 10
        return now[0]

    never = _group(FakeGroupManager(), lambda _url: _health(0, 2), patience_s=30, clock=clock)
    with never.watch(on_status=lambda _line: None):
        assert never.recover(RuntimeError("503")) is Recovery.NONE  # past its patience: the retry policy decides


def test_a_dead_worker_counts_as_one_crash_whoever_saw_it_first() -> None:
    """A worker's death is a crash for the renderer (poison search, fewer requests) exactly once."""
    manager = FakeGroupManager(dead=[4242])
    serving = _group(manager, lambda _url: _health(1, 2), patience_s=60)
    assert serving.recover(RuntimeError("502 upstream request failed")) is Recovery.RESTARTED
    assert serving.recover(RuntimeError("502 again, same death")) is Recovery.ALIVE
    manager.dead = [4242, 4343]  # the watch revived the first; another died
    assert serving.recover(RuntimeError("502")) is Recovery.RESTARTED


def test_a_stopped_group_stops_the_wait() -> None:
    serving = _group(FakeGroupManager(stopped=True), lambda _url: None, patience_s=60)
    with pytest.raises(ServerNotRunning, match="stopped while the job"):
        serving.recover(RuntimeError("refused"))


@pytest.mark.parametrize(
    ("status", "message", "says"),
    [(502, "upstream request failed", "dropped the request"), (503, "no eligible upstream", "no worker")],
)
def test_router_502_and_503_are_unreachable_kinds(status: int, message: str, says: str) -> None:
    """The router's own failures mean "never answered": sent again (unreachable), not busy or fatal."""
    import httpx

    from omni_web.client import SpeechClient, SpeechRequest, VoiceChoice
    from omni_web.errors import ServerBusy, ServerUnreachable
    from omni_web.retry import NO_RETRY, FailureKind, failure_kind

    def answer(request: httpx.Request) -> httpx.Response:
        if request.url.path == "/v1/audio/voices":
            return httpx.Response(200, json={"voices": ["Vivian"], "uploaded_voices": []})
        return httpx.Response(status, json={"error": {"message": message}})

    entry = get_entry("qwen3_tts_0_6b_customvoice")
    with SpeechClient(
        "http://127.0.0.1:8100", transport=httpx.MockTransport(answer), speech_retry=NO_RETRY
    ) as client:
        with pytest.raises(ServerUnreachable, match=says) as caught:
            client.speech(entry, SpeechRequest(text="Hello.", voice=VoiceChoice.speaker("Vivian")))
    assert caught.value.status_code == status and failure_kind(caught.value) is FailureKind.UNREACHABLE

    def overloaded(request: httpx.Request) -> httpx.Response:
        return httpx.Response(
            503, json={"error": {"message": "router overloaded: max in-flight requests reached"}}
        )

    with SpeechClient(
        "http://127.0.0.1:8100", transport=httpx.MockTransport(overloaded), speech_retry=NO_RETRY
    ) as client:
        with pytest.raises(ServerBusy):
            client.speech(entry, SpeechRequest(text="Hello.", voice=VoiceChoice.default()))
