"""`python -m omni_web server ...` in real subprocesses, against the fake `sgl-omni`.

The done-when path: ``start`` returns once the server is healthy and leaves it running in the
background; ``status`` from a new process reports it; ``stop`` from another new process ends it.
"""

from __future__ import annotations

import os
import shlex
import signal
import subprocess
import sys

import pytest

from omni_web.catalog import get_entry
from omni_web.paths import REPO_ROOT
from omni_web.server.process import pid_alive, signal_group
from omni_web.server.record import load_record, record_matches_process
from tests.fakes.sgl_omni import free_port, install_fake_sgl_omni, read_json

QWEN = get_entry("qwen3_tts_0_6b_customvoice")


def _cli(*args: str, timeout_s: float = 60) -> subprocess.CompletedProcess[str]:
    # OMNI_WEB_HOME comes from the data_paths fixture through os.environ.
    return subprocess.run(  # noqa: S603 - fixed argv
        [sys.executable, "-m", "omni_web", "server", *args],
        cwd=REPO_ROOT, capture_output=True, text=True, timeout=timeout_s, env=dict(os.environ),
    )


@pytest.fixture
def backend(data_paths):
    """The fake installed as the backend; whatever the CLI started is killed by its pgid afterwards."""
    install_fake_sgl_omni(data_paths.backend_venv)
    yield data_paths
    record = load_record(data_paths)
    if record is not None and record_matches_process(record):
        signal_group(record.pgid, signal.SIGKILL)


def test_start_status_stop_from_separate_processes(backend) -> None:
    port = free_port()
    started = _cli("start", "--model", QWEN.key, "--port", str(port))
    assert started.returncode == 0, started.stderr
    assert "Uvicorn running on" in started.stdout  # the boot log was shown
    record = load_record(backend)
    assert record is not None and record.model_key == QWEN.key and record.port == port
    assert pid_alive(record.pid)  # outlived the CLI that started it
    assert read_json(f"http://127.0.0.1:{port}/health")["status"] == "healthy"

    status = _cli("status", "--port", str(port))
    assert status.returncode == 0, status.stderr
    assert "healthy" in status.stdout
    assert QWEN.key in status.stdout
    assert f"http://127.0.0.1:{port}" in status.stdout
    assert str(record.pid) in status.stdout
    assert "started by omni-web" in status.stdout

    stopped = _cli("stop")
    assert stopped.returncode == 0, stopped.stderr
    assert f"pid {record.pid}" in stopped.stdout
    assert not pid_alive(record.pid)
    assert load_record(backend) is None

    after = _cli("status", "--port", str(port))
    assert after.returncode == 3
    assert "stopped" in after.stdout


def test_command_prints_the_exact_line_a_start_runs(backend) -> None:
    port = free_port()
    printed = _cli("command", "--model", QWEN.key, "--port", str(port))
    assert printed.returncode == 0, printed.stderr
    line = printed.stdout.strip()
    started = _cli("start", "--model", QWEN.key, "--port", str(port), "--quiet")
    assert started.returncode == 0, started.stderr
    assert shlex.split(line) == list(load_record(backend).argv)
    assert _cli("stop").returncode == 0


def test_command_for_zonos2_explains_the_config_choice(backend) -> None:
    printed = _cli("command", "--model", "zonos2")
    assert printed.returncode == 0
    assert "--model-path Zyphra/ZONOS2" in printed.stdout
    assert printed.stderr.startswith("# ")  # why (no GPU here → default pipeline)


def test_bad_input_gets_a_message_not_a_traceback(backend) -> None:
    unknown = _cli("command", "--model", "nope")
    assert unknown.returncode == 1
    assert "Unknown model 'nope'" in unknown.stderr and "Traceback" not in unknown.stderr
    no_model = _cli("start", "--port", str(free_port()))
    assert no_model.returncode == 1
    assert "--model KEY" in no_model.stderr and "Traceback" not in no_model.stderr
    bad_url = _cli("status", "--api-url", "gpu-box:8000")
    assert bad_url.returncode == 1 and "remote_url" in bad_url.stderr


def test_start_uses_a_foreign_server_with_the_model(backend, fake_server) -> None:
    foreign = fake_server(QWEN.key)
    started = _cli("start", "--model", QWEN.key, "--port", str(foreign.port))
    assert started.returncode == 0, started.stderr
    assert "not started by omni-web" in started.stdout and "left running" in started.stdout
    assert load_record(backend) is None
    assert _cli("stop").returncode == 0
    assert foreign.is_alive()


def test_api_url_points_at_an_external_server(backend, fake_server) -> None:
    foreign = fake_server("zonos2")
    status = _cli("status", "--api-url", foreign.base_url)
    assert status.returncode == 0
    assert "zonos2" in status.stdout and "remote" in status.stdout
    refused = _cli("start", "--model", QWEN.key, "--api-url", foreign.base_url)
    assert refused.returncode == 1
    assert "Zyphra/ZONOS2" in refused.stderr and QWEN.key in refused.stderr


def test_a_foreign_server_is_named_even_without_a_backend(data_paths, fake_server) -> None:
    # No backend installed here: the foreign server, not the missing backend, is what matters.
    foreign = fake_server(QWEN.key)
    refused = _cli("start", "--model", "higgs_audio_v3_tts", "--port", str(foreign.port))
    assert refused.returncode == 1
    assert "not installed" not in refused.stderr
    assert "was not started by omni-web" in refused.stderr and QWEN.repo_id in refused.stderr, refused.stderr
    status = _cli("status", "--port", str(foreign.port))
    assert status.returncode == 0, status.stdout + status.stderr
    assert "healthy" in status.stdout and "not started by omni-web" in status.stdout, status.stdout
    assert QWEN.key in status.stdout and "stopped" not in status.stdout
    stopped = _cli("stop", "--port", str(foreign.port))
    assert stopped.returncode == 0
    assert f"A server omni-web did not start answers at http://127.0.0.1:{foreign.port}" in stopped.stdout
    assert foreign.is_alive()  # never signalled


def test_every_server_command_and_convert_take_the_same_endpoint_options() -> None:
    from omni_web.cli import build_parser

    parser = build_parser()
    subcommands = parser._subparsers._group_actions[0].choices  # noqa: SLF001 - argparse has no public API
    server = subcommands["server"]._subparsers._group_actions[0].choices  # noqa: SLF001
    # (server farm addresses the farm's boxes by id or name, not an endpoint)
    commands = {f"server {name}": sub for name, sub in server.items() if name != "farm"}
    commands["convert"] = subcommands["convert"]

    def endpoint_options(sub) -> set[str]:
        return {opt for action in sub._actions for opt in action.option_strings  # noqa: SLF001
                if opt in ("--port", "--api-url", "--host")}

    found = {name: endpoint_options(sub) for name, sub in commands.items()}
    assert set(found) == {"server start", "server stop", "server status", "server command", "convert"}
    assert all(options == {"--port", "--api-url", "--host"} for options in found.values()), found
