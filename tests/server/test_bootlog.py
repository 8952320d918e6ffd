"""Boot-log reading: whole lines as they arrive, and the launcher's port lines."""

from __future__ import annotations

from omni_web.server.bootlog import BootLogWatcher, came_up, parse_port_event

# The exact lines sglang-omni 0.1.9 writes (API doc 1.5).
IN_USE = (
    "2026-01-01 10:00:00,000 [WARNING] sglang_omni.serve.launcher: Port 8100 is already in use on 0.0.0.0."
)
USING = "2026-01-01 10:00:00,001 [WARNING] sglang_omni.serve.launcher: Using port 41837 instead."
STRICT = "RuntimeError: port 8100 is already in use on 127.0.0.1 and SGLANG_OMNI_STRICT_PORT=1 forbids falling back"


def test_parse_port_lines() -> None:
    event = parse_port_event(IN_USE)
    assert (event.busy_port, event.fallback_port, event.host, event.strict) == (8100, None, "0.0.0.0", False)
    event = parse_port_event(USING)
    assert (event.busy_port, event.fallback_port) == (None, 41837)
    event = parse_port_event(STRICT)
    assert (event.busy_port, event.fallback_port, event.host, event.strict) == (8100, None, "127.0.0.1", True)
    assert parse_port_event("INFO:     Uvicorn running on http://0.0.0.0:8100 (Press CTRL+C to quit)") is None


def test_watcher_returns_whole_lines_from_its_offset(tmp_path) -> None:
    log = tmp_path / "server.log"
    log.write_bytes(b"# header\n")
    watcher = BootLogWatcher(log, offset=len(b"# header\n"))
    assert watcher.poll() == []
    with open(log, "ab") as handle:
        handle.write(b"first line\nsecond li")
    assert watcher.poll() == ["first line"]
    with open(log, "ab") as handle:
        handle.write(b"ne\r\n" + IN_USE.encode() + b"\n" + USING.encode())
    assert watcher.poll() == ["second line", IN_USE]
    assert watcher.busy_port == 8100 and watcher.fallback_port is None
    assert watcher.poll(final=True) == [USING]
    assert watcher.fallback_port == 41837
    assert watcher.strict_refusal is None


def test_watcher_sees_the_strict_refusal(tmp_path) -> None:
    log = tmp_path / "server.log"
    log.write_text("Traceback (most recent call last):\n" + STRICT + "\n")
    watcher = BootLogWatcher(log)
    assert len(watcher.poll()) == 2
    assert watcher.strict_refusal is not None and watcher.strict_refusal.busy_port == 8100


def test_watcher_on_a_missing_file_returns_nothing(tmp_path) -> None:
    assert BootLogWatcher(tmp_path / "absent.log").poll(final=True) == []


def test_a_start_came_up_once_its_port_listened_and_its_warmup_did_not_fail() -> None:
    loading = "Pipeline 'qwen3_tts' started (1 GPU(s))\nINFO:     Application startup complete.\n"
    listening = loading + "INFO:     Uvicorn running on http://0.0.0.0:8100 (Press CTRL+C to quit)\n"
    assert not came_up(loading)  # died while loading: a boot that did not succeed
    assert not came_up("Process pipeline died during startup (exit code 1)\nStartup failure detail:\n")
    died = "ERROR Stage process(es) died: pipeline (exit code -11)\n"
    assert came_up(listening + died)  # up and serving: its work killed it, not its boot
    failed = "ERROR Server warmup failed, stopping the server: RuntimeError('Server warmup failed')"
    assert not came_up(listening + failed + "\n")
