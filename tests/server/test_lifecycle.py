"""The managed server's life against the fake `sgl-omni`: start, status, stop, and every way a boot fails.

Every process a manager launches is collected by wrapping ``launch``; the fixture kills each
still-alive group by its own pgid when the test ends, pass or fail.
"""

from __future__ import annotations

import os
import signal
import socket
import threading
import time
from dataclasses import replace

import pytest

from omni_web.catalog import get_entry
from omni_web.client import SpeechClient
from omni_web.errors import BackendError, BootTimeout, ForeignServer, PortTaken, ServerStartError
from omni_web.server import manager as manager_module
from omni_web.server import single as single_module
from omni_web.server.process import pid_alive, signal_group
from omni_web.server.record import ServerRecord, load_record, process_info, save_record
from omni_web.server.status import ServerState
from omni_web.settings import Settings
from tests.fakes.sgl_omni import free_port, install_fake_sgl_omni, read_json

QWEN = get_entry("qwen3_tts_0_6b_customvoice")
QWEN_BASE = get_entry("qwen3_tts_0_6b_base")
ZONOS2 = get_entry("zonos2")


@pytest.fixture
def launched(monkeypatch):
    """Every Popen the manager starts; killed by its own group at teardown."""
    procs = []
    real_launch = single_module.launch

    def spy(*args, **kwargs):
        proc = real_launch(*args, **kwargs)
        procs.append(proc)
        return proc

    monkeypatch.setattr(single_module, "launch", spy)
    yield procs
    for proc in procs:
        if proc.poll() is None:
            signal_group(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)


@pytest.fixture
def port() -> int:
    return free_port()


@pytest.fixture
def make_manager(data_paths, launched, port):
    """Build managers on the test's data root, with the fake installed as the backend."""
    install_fake_sgl_omni(data_paths.backend_venv)
    settings = Settings(server_port=port, start_timeout_s=30)

    def make(**kwargs) -> manager_module.ServerManager:
        kwargs.setdefault("poll_interval_s", 0.1)
        kwargs.setdefault("probe_timeout_s", 2.0)
        return manager_module.ServerManager(data_paths, kwargs.pop("settings", settings), **kwargs)

    return make


@pytest.fixture
def held_port(port):
    """Hold the port the way a stray program does: bound, not listening, without SO_REUSEADDR.

    sglang-omni's probe binds with SO_REUSEADDR, which only fails against a socket that did not set
    it; nothing accepts connections, so our pre-launch check lets the boot go ahead.
    """
    holder = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    holder.bind(("127.0.0.1", port))
    yield holder
    holder.close()


def test_start_status_stop(make_manager, launched, data_paths, port) -> None:
    manager = make_manager()
    lines: list[str] = []
    status = manager.start(QWEN, on_log=lines.append)
    (proc,) = launched
    assert status.state is ServerState.HEALTHY
    assert status.hosts(QWEN.key) and not status.hosts("zonos2")
    assert (status.model_key, status.pid, status.owned) == (QWEN.key, proc.pid, True)
    assert status.endpoint == f"http://127.0.0.1:{port}"
    assert status.model_ids == (QWEN.repo_id,)
    assert read_json(f"{status.endpoint}/health")["status"] == "healthy"
    # The boot output: the command, then the server's own log lines.
    assert any(line.startswith("Starting Qwen3-TTS 0.6B CustomVoice: ") for line in lines)
    assert any("Uvicorn running on" in line for line in lines)
    log_text = status.log_path.read_text()
    assert status.log_path.parent == data_paths.logs_dir
    assert status.log_path.name.startswith("server-qwen3_tts_0_6b_customvoice-")
    assert log_text.startswith("# omni-web: starting Qwen3-TTS 0.6B CustomVoice")
    assert "SGLANG_OMNI_STRICT_PORT=1" in log_text
    record = load_record(data_paths)
    assert (record.pid, record.port, record.model_key) == (proc.pid, port, QWEN.key)
    assert record.start_ticks == process_info(proc.pid).start_ticks
    assert os.getpgid(proc.pid) == proc.pid != os.getpgid(0)

    assert manager.stop() is True
    assert proc.poll() == -signal.SIGTERM  # stopped politely, and reaped
    assert load_record(data_paths) is None
    assert manager.status().state is ServerState.STOPPED
    assert manager.stop() is False


def test_command_line_puts_the_strict_port_env_in_front_only_when_asked(make_manager, data_paths) -> None:
    spec = make_manager().build_spec(QWEN)
    plain = make_manager().command_line(spec)
    assert plain.startswith(f"{data_paths.backend_venv}/bin/sgl-omni serve --model-path {QWEN.repo_id}")
    assert make_manager().command_line(spec, with_env=True) == f"SGLANG_OMNI_STRICT_PORT=1 {plain}"
    assert make_manager(strict_port=False).command_line(spec, with_env=True) == plain


def test_stop_before_removing_stops_only_our_server_hosting_that_model(make_manager, launched,
                                                                       data_paths) -> None:
    manager = make_manager()
    assert manager.stop_before_removing(QWEN.key) is False  # nothing of ours runs
    manager.start(QWEN)
    (proc,) = launched
    assert manager.stop_before_removing("zonos2") is False and proc.poll() is None
    lines: list[str] = []
    assert manager.stop_before_removing(QWEN.key, log=lines.append) is True
    assert proc.poll() is not None and load_record(data_paths) is None
    assert lines == [f"Stopping the managed server hosting {QWEN.key} (pid {proc.pid}) before removing it."]


def test_pollers_share_one_status_look_until_the_manager_changes(data_paths, port) -> None:
    looks: list[str] = []

    def client_factory(base_url: str, **kwargs) -> SpeechClient:
        looks.append(base_url)
        return SpeechClient(base_url, **kwargs)

    manager = manager_module.ServerManager(
        data_paths, Settings(server_port=port), client_factory=client_factory
    )
    first = manager.status(max_age_s=60)
    assert first.state is ServerState.STOPPED and len(looks) == 1
    assert manager.status(max_age_s=60) is first and len(looks) == 1  # shared
    manager.status()
    assert len(looks) == 2  # without max_age_s: always a fresh look
    manager.stop()  # what the manager knows changed: the next poll looks again
    manager.status(max_age_s=60)
    assert len(looks) == 3
    manager.use_settings(Settings(server_port=free_port()))
    assert manager.status(max_age_s=60).endpoint != first.endpoint and len(looks) == 4


def test_port_fallback_aborts_the_boot_and_names_both_ports(make_manager, launched, held_port, port) -> None:
    manager = make_manager(strict_port=False)  # let the fake fall back, as 0.1.9 does by default
    with pytest.raises(PortTaken) as caught:
        manager.start(QWEN)
    error = caught.value
    assert error.port == port
    assert error.fallback_port is not None and error.fallback_port != port
    assert str(port) in str(error) and str(error.fallback_port) in str(error)
    assert f"ss -tlnp 'sport = :{port}'" in str(error)
    (proc,) = launched
    assert proc.poll() is not None and not pid_alive(proc.pid)
    assert load_record(manager._paths) is None
    assert manager.status().state is ServerState.FAILED


def test_strict_port_refusal_is_explained_the_same_way(make_manager, launched, held_port, port) -> None:
    manager = make_manager()
    with pytest.raises(PortTaken) as caught:
        manager.start(QWEN)
    assert caught.value.port == port and caught.value.fallback_port is None
    assert f"ss -tlnp 'sport = :{port}'" in str(caught.value)
    (proc,) = launched
    assert proc.poll() is not None and not pid_alive(proc.pid)  # exit 1, or our SIGTERM got there first
    log_text = load_text(manager, proc)
    assert "SGLANG_OMNI_STRICT_PORT=1 forbids falling back" in log_text


def load_text(manager, proc) -> str:
    """The log of the start that launched ``proc`` (the only log in these tests)."""
    (log,) = manager._paths.logs_dir.glob("server-*.log")
    return log.read_text()


def test_a_listening_port_is_refused_before_launch(make_manager, launched, port) -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as holder:
        holder.bind(("127.0.0.1", port))
        holder.listen()
        with pytest.raises(PortTaken) as caught:
            make_manager().start(QWEN)
    assert caught.value.port == port
    assert launched == []


def test_crash_during_boot_reports_exit_code_and_log_tail(make_manager, launched, monkeypatch) -> None:
    monkeypatch.setenv("FAKE_SGL_CRASH_DURING_BOOT", "3")
    manager = make_manager()
    with pytest.raises(ServerStartError) as caught:
        manager.start(QWEN)
    error = caught.value
    assert type(error) is ServerStartError
    assert error.exit_code == 1
    assert "died during startup (exit code 3)" in error.log_tail
    assert len(error.log_tail.splitlines()) <= 30
    assert str(error.log_path) in str(error) and "exited with code 1" in str(error)
    assert error.log_path.is_file()
    status = manager.status()
    assert status.state is ServerState.FAILED and "exited with code 1" in status.message


def test_boot_timeout_stops_the_process(make_manager, launched, monkeypatch, data_paths) -> None:
    monkeypatch.setenv("FAKE_SGL_BOOT_DELAY_S", "120")
    manager = make_manager()
    started = time.monotonic()
    with pytest.raises(BootTimeout) as caught:
        manager.start(QWEN, timeout_s=1.5)
    assert time.monotonic() - started < 90  # stopped after the timeout, not after the 120 s boot
    assert "did not become healthy within 1.5 s" in str(caught.value)
    (proc,) = launched
    assert proc.poll() is not None and not pid_alive(proc.pid)
    assert load_record(data_paths) is None


def test_foreign_server_with_the_model_is_used_and_left_running(
    make_manager, launched, fake_server, port
) -> None:
    foreign = fake_server(QWEN.key, port=port)
    manager = make_manager()
    endpoint = manager.ensure_serving(QWEN).endpoint
    assert (endpoint.base_url, endpoint.owned, endpoint.model_id) == (foreign.base_url, False, QWEN.repo_id)
    assert launched == []
    status = manager.status()
    assert (status.state, status.owned, status.pid, status.model_key) == (
        ServerState.HEALTHY,
        False,
        None,
        QWEN.key,
    )
    assert manager.stop() is False
    assert foreign.is_alive()


def test_foreign_server_with_another_model_is_refused(make_manager, launched, fake_server, port) -> None:
    foreign = fake_server(ZONOS2.key, port=port)
    manager = make_manager()
    with pytest.raises(ForeignServer) as caught:
        manager.ensure_serving(QWEN)
    assert caught.value.hosted_model == ZONOS2.repo_id
    assert caught.value.wanted_model == QWEN.key
    assert "not started by omni-web" in str(caught.value)
    assert launched == []
    assert foreign.is_alive()


def test_model_change_restarts_our_server(make_manager, launched, data_paths) -> None:
    manager = make_manager()
    first = manager.ensure_serving(QWEN).endpoint
    assert first.owned and first.model_id == QWEN.repo_id
    first_pid = load_record(data_paths).pid
    again = manager.ensure_serving(QWEN).endpoint  # same model: reused
    assert again == first and len(launched) == 1
    second = manager.ensure_serving(QWEN_BASE).endpoint
    assert second.owned and second.model_key == QWEN_BASE.key and second.model_id == QWEN_BASE.repo_id
    assert len(launched) == 2
    assert launched[0].poll() is not None and not pid_alive(first_pid)
    assert load_record(data_paths).pid == launched[1].pid != first_pid
    models = read_json(f"{second.base_url}/v1/models")
    assert [item["id"] for item in models["data"]] == [QWEN_BASE.repo_id]
    assert manager.stop() is True


def test_stop_never_touches_a_foreign_process(make_manager, fake_server, data_paths, port) -> None:
    foreign = fake_server(QWEN.key, port=port)
    manager = make_manager()
    assert manager.stop() is False
    # A record naming the foreign pid with another start time: what pid reuse looks like.
    info = process_info(foreign.pid)
    stale = ServerRecord(
        pid=foreign.pid,
        pgid=foreign.pid,
        start_ticks=info.start_ticks + 1,
        model_key=QWEN.key,
        repo_id=QWEN.repo_id,
        host="127.0.0.1",
        port=port,
        log_path=data_paths.logs_dir / "old.log",
    )
    save_record(data_paths, stale)
    assert manager.stop(grace_s=1) is False
    assert load_record(data_paths) is None  # the stale record is dropped
    time.sleep(0.3)
    assert foreign.is_alive() and pid_alive(foreign.pid)
    assert read_json(f"{foreign.base_url}/health")["status"] == "healthy"


def test_app_restart_finds_its_server(make_manager, launched, data_paths) -> None:
    make_manager().start(QWEN)
    (proc,) = launched
    later = make_manager()  # a new app process: no Popen, only the record
    status = later.status()
    assert (status.state, status.owned, status.pid, status.model_key) == (
        ServerState.HEALTHY,
        True,
        proc.pid,
        QWEN.key,
    )
    endpoint = later.ensure_serving(QWEN).endpoint
    assert endpoint.owned and len(launched) == 1  # reused, not relaunched
    assert later.stop() is True
    assert not pid_alive(proc.pid)
    assert later.status().state is ServerState.STOPPED


def test_zonos2_bf16_fallback_is_tagged_and_explained(make_manager, launched) -> None:
    lines: list[str] = []
    status = make_manager().start(ZONOS2, compute_capability=(8, 6), on_log=lines.append)
    assert status.tag == "bf16 fallback"
    assert status.model_label == "ZONOS2 (bf16 fallback)"
    why = "GPU compute capability 8.6 < 8.9: starting ZONOS2 with configs/zonos2_bf16.yaml (bf16 fallback)"
    assert any(why in line for line in lines)
    assert why in status.log_path.read_text()
    argv = launched[0].args
    assert argv[argv.index("--config") + 1].endswith("configs/zonos2_bf16.yaml")


def test_missing_backend_is_refused_early(data_paths, launched, port) -> None:
    manager = manager_module.ServerManager(data_paths, Settings(server_port=port))
    with pytest.raises(BackendError, match=r"not installed\. Install it in the Setup tab"):
        manager.start(QWEN)
    assert launched == []


def test_before_start_hook_runs_first_and_can_abort(make_manager, launched) -> None:
    seen = []

    def hook(entry):
        seen.append(entry.key)
        raise BackendError("companion install failed")

    manager = make_manager(before_start=hook)
    with pytest.raises(BackendError, match="companion"):
        manager.start(QWEN)
    assert seen == [QWEN.key] and launched == []
    assert manager.status().message == "companion install failed"


def test_a_bug_during_start_is_named_as_one_in_the_status(make_manager, launched) -> None:
    def hook(entry):
        raise KeyError("internal detail")

    manager = make_manager(before_start=hook)
    with pytest.raises(KeyError):
        manager.start(QWEN)
    status = manager.status()
    assert status.state is ServerState.FAILED
    assert status.message.startswith("Internal error: something went wrong inside omni-web (")
    assert "KeyError" not in status.message and status.message.endswith("the app log has the details.")


def test_stop_during_boot_cancels_the_start(make_manager, launched, monkeypatch, data_paths) -> None:
    monkeypatch.setenv("FAKE_SGL_BOOT_DELAY_S", "120")
    manager = make_manager()
    errors: list[BaseException] = []

    def boot() -> None:
        try:
            manager.start(QWEN)
        except BaseException as exc:  # noqa: BLE001 - collected for the assertion below
            errors.append(exc)

    thread = threading.Thread(target=boot)
    thread.start()
    deadline = time.monotonic() + 10
    while load_record(data_paths) is None:
        assert time.monotonic() < deadline
        time.sleep(0.05)
    assert manager.status().state is ServerState.STARTING
    assert manager.stop() is True
    thread.join(timeout=20)
    assert not thread.is_alive()
    assert len(errors) == 1 and "cancelled" in str(errors[0])
    assert not pid_alive(launched[0].pid)
    assert manager.status().state is ServerState.STOPPED


def test_unexpected_exit_after_boot_shows_as_failed(make_manager, launched) -> None:
    manager = make_manager()
    manager.start(QWEN)
    (proc,) = launched
    signal_group(proc.pid, signal.SIGKILL)
    proc.wait(timeout=10)
    status = manager.status()
    assert status.state is ServerState.FAILED
    assert "exited unexpectedly with code -9" in status.message


def test_port_setting_change_restarts_on_the_new_port(make_manager, launched, data_paths) -> None:
    manager = make_manager()
    manager.start(QWEN)
    new_port = free_port()
    manager.use_settings(replace(manager.settings, server_port=new_port))
    status = manager.start(QWEN)
    assert status.endpoint.endswith(f":{new_port}") and len(launched) == 2
    assert launched[0].poll() is not None


def test_a_crash_restart_never_undoes_a_stop(make_manager, launched, data_paths) -> None:
    from omni_web.errors import ServerNotRunning

    manager = make_manager()
    manager.start(QWEN)
    assert manager.stop() is True
    # The renderer decided to restart after a crash, but the user's Stop came first: refused.
    with pytest.raises(ServerNotRunning, match="stopped while the job was rendering"):
        manager.restart(unless_stopped=True)
    assert len(launched) == 1 and load_record(data_paths) is None
    assert manager.stop_requested


def test_a_stop_during_a_crash_restart_aborts_its_boot(
    make_manager, launched, monkeypatch, data_paths
) -> None:
    manager = make_manager()
    manager.start(QWEN)
    signal_group(launched[0].pid, signal.SIGKILL)  # the crash
    launched[0].wait(timeout=30)
    monkeypatch.setenv("FAKE_SGL_BOOT_DELAY_S", "120")
    errors: list[BaseException] = []

    def restart() -> None:
        try:
            manager.restart(unless_stopped=True)
        except BaseException as exc:  # noqa: BLE001 - collected for the assertion below
            errors.append(exc)

    thread = threading.Thread(target=restart)
    thread.start()
    deadline = time.monotonic() + 60
    while len(launched) < 2 or load_record(data_paths) is None:
        assert time.monotonic() < deadline, "the restart never launched"
        time.sleep(0.05)
    manager.stop()  # the user's Stop while the restart boots
    thread.join(timeout=60)
    assert not thread.is_alive() and len(errors) == 1
    assert not pid_alive(launched[1].pid)
    assert manager.stop_requested and manager.status().state is ServerState.STOPPED
