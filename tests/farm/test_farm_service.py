"""``agent join ... --service``: a systemd user unit that runs the same join, the token kept in an
owner-only file; the unit's command line, run as systemd would run it, joins a real farm app."""

from __future__ import annotations

import configparser
import os
import shlex
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from omni_web.farm import FarmRegistry, farm_token_store
from omni_web.farm.service import systemd_quote
from omni_web.paths import DataPaths
from tests.fakes.sgl_omni import free_port, install_fake_sgl_omni
from tests.farm.farmkit import AgentProcess, start_farm_app, wait_for

REPO = Path(__file__).resolve().parents[2]


def _run_service(tmp_path: Path, app_url: str, token: str) -> tuple[subprocess.CompletedProcess[str], Path]:
    config = tmp_path / "config dir"  # a space: the unit's paths must survive it
    env = {**os.environ, "XDG_CONFIG_HOME": str(config), "OMNI_WEB_HOME": str(tmp_path / "box"),
           "OMNI_WEB_FARM_TOKEN": token}
    argv = [sys.executable, "-m", "omni_web", "agent", "join", app_url, "--service", "--name", "box 1%",
            "--host", "127.0.0.1", "--advertise", "127.0.0.1", "--gpus", "0",
            "--worker-port", str(free_port())]
    done = subprocess.run(argv, cwd=REPO, env=env, capture_output=True, text=True, timeout=120)
    return done, config


def _unit(path: Path) -> configparser.ConfigParser:
    parser = configparser.ConfigParser(interpolation=None)
    parser.optionxform = str  # systemd's keys are case-sensitive
    parser.read(path, encoding="utf-8")
    return parser


def _as_systemd_runs_it(service: configparser.SectionProxy) -> tuple[list[str], dict[str, str], str]:
    """ExecStart's argv, the environment and the directory the way systemd.exec(5) builds them."""

    def unescape(word: str) -> str:
        return word.replace("%%", "%").replace("$$", "$")

    argv = [unescape(word) for word in shlex.split(service["ExecStart"])]
    env = dict(word.split("=", 1) for word in shlex.split(service["Environment"]))
    for line in Path(service["EnvironmentFile"]).read_text(encoding="utf-8").splitlines():
        key, _, value = line.partition("=")
        env[key] = value
    return argv, env, service["WorkingDirectory"]


def test_the_service_unit_runs_the_same_join_with_the_token_kept_private(tmp_path: Path) -> None:
    paths = DataPaths(root=tmp_path / "app").ensure()
    _token, secret = farm_token_store(paths).create("lab")
    app = start_farm_app(FarmRegistry(paths, lambda: None))
    try:
        done, config = _run_service(tmp_path, app.url, secret)
        assert done.returncode == 0, done.stderr
        assert app.registry.boxes() == ()  # it wrote the unit and exited without joining
        unit_path = config / "systemd" / "user" / "omni-web-agent.service"
        service = _unit(unit_path)["Service"]
        env_file = Path(service["EnvironmentFile"])
        assert env_file.read_text(encoding="utf-8") == f"OMNI_WEB_FARM_TOKEN={secret}\n"
        assert stat.S_IMODE(env_file.stat().st_mode) == 0o600
        assert stat.S_IMODE(env_file.parent.stat().st_mode) == 0o700
        assert secret not in unit_path.read_text(encoding="utf-8") and secret not in done.stdout
        assert service["Restart"] == "on-failure" and service["WorkingDirectory"] == str(REPO)
        assert _unit(unit_path)["Install"]["WantedBy"] == "default.target"
        for command in ("systemctl --user daemon-reload", "systemctl --user enable --now omni-web-agent",
                        "loginctl enable-linger $USER", str(unit_path)):
            assert command in done.stdout
        argv, env, workdir = _as_systemd_runs_it(service)
        assert argv == [str(Path(sys.executable).absolute()), "-m", "omni_web", "agent", "join", app.url,
                        "--name", "box 1%", "--host", "127.0.0.1", "--advertise", "127.0.0.1",
                        "--worker-port", argv[-3], "--gpus", "0"]
        assert env["OMNI_WEB_HOME"] == str(tmp_path / "box")
        install_fake_sgl_omni(DataPaths(root=tmp_path / "box").backend_venv)
        log_path = tmp_path / "agent.log"
        with log_path.open("w", encoding="utf-8") as log:
            popen = subprocess.Popen(argv, cwd=workdir, env={"PATH": os.environ["PATH"], **env}, stdout=log,
                                     stderr=subprocess.STDOUT, text=True, start_new_session=True)
        agent = AgentProcess(popen, tmp_path / "box", log_path)
        try:
            box = wait_for(app.registry.boxes, "the service's agent to join", 60)[0]
            assert box.name == "box 1%"
        finally:
            assert agent.stop() == 0, agent.output()
    finally:
        app.stop()


def test_without_a_token_the_join_says_where_to_get_one(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "OMNI_WEB_FARM_TOKEN"}
    env |= {"XDG_CONFIG_HOME": str(tmp_path / "config"), "OMNI_WEB_HOME": str(tmp_path / "box")}
    argv = [sys.executable, "-m", "omni_web", "agent", "join", "http://127.0.0.1:9", "--service"]
    done = subprocess.run(argv, cwd=REPO, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 1
    assert "No farm token: pass --token T or set OMNI_WEB_FARM_TOKEN" in done.stderr
    assert not (tmp_path / "config").exists()


@pytest.mark.skipif(shutil.which("systemd-analyze") is None, reason="systemd-analyze is not installed")
def test_systemd_accepts_the_unit(tmp_path: Path) -> None:
    done, config = _run_service(tmp_path, "http://127.0.0.1:9", "ow_secret")
    assert done.returncode == 0, done.stderr
    runtime = tmp_path / "runtime"
    runtime.mkdir(mode=0o700)
    unit = config / "systemd" / "user" / "omni-web-agent.service"
    env = {**os.environ, "XDG_RUNTIME_DIR": str(runtime)}
    verify = subprocess.run(["systemd-analyze", "--user", "verify", str(unit)], env=env, capture_output=True,
                            text=True, timeout=60)
    assert verify.returncode == 0, verify.stderr


def test_exec_words_double_specifiers_and_dollars_and_quote_spaces() -> None:
    assert systemd_quote("/usr/bin/python") == "/usr/bin/python"
    assert systemd_quote("lab 1%") == '"lab 1%%"'
    assert systemd_quote("$HOME") == '"$$HOME"'
    assert systemd_quote('say "hi"') == '"say \\"hi\\""'
    assert systemd_quote("") == '""'
    assert systemd_quote("A=$x y", exec_line=False) == '"A=$x y"'
