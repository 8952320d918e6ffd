"""Fixtures of the contract tier: the cached sglang-omni venv and runs of the real CLI in it.

The venv is built on first use (`setup_env.ensure_contract_venv`, about 1.5 minutes cold, under a
second when cached). If it cannot be built the tests fail with the build log's tail, so CI cannot
pass without the contract tier; `OMNI_WEB_SKIP_CONTRACT=1` skips them instead (quick local runs).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from omni_web.catalog import CatalogEntry, get_entry
from omni_web.server.spec import build_argv, build_serve_spec
from omni_web.settings import Settings
from tests.contract.fake_hub import write_fake_hub
from tests.contract.setup_env import (
    HARNESS_DIR,
    ContractVenv,
    ContractVenvError,
    ensure_contract_venv,
    harness_env,
)

PARSER = HARNESS_DIR / "run_serve_parser.py"
RUN_APP = HARNESS_DIR / "run_app.py"
SERVER_START_TIMEOUT_S = 120.0
HIGGS_KV_CAPACITY = 1200
REFERENCE_TEXT = "This is the narrator's reference voice, reading one calm sentence for the test."
MARKER = "OMNI_WEB_RESOLVED_CONFIG "
_BOX = re.compile(r"[│╭╮╰╯─┃━┏┓┗┛]")


@dataclass(frozen=True, slots=True)
class ParseResult:
    """One run of the real `sgl-omni serve` parser, stopped before launch."""

    exit_code: int
    stdout: str
    stderr: str

    @property
    def report(self) -> dict:
        """The resolved config the harness printed (exit 0 only)."""
        for line in self.stdout.splitlines():
            if line.startswith(MARKER):
                return json.loads(line[len(MARKER) :])
        raise AssertionError(f"no resolved config in output (exit {self.exit_code}):\n{self.stderr[-3000:]}")

    @property
    def error_text(self) -> str:
        """stderr with Rich's box drawing removed and whitespace collapsed, for message checks."""
        return " ".join(_BOX.sub(" ", self.stderr).split())


@pytest.fixture(scope="session")
def contract_venv() -> ContractVenv:
    """The contract venv, built now if this machine has no finished build for its key."""
    if os.environ.get("OMNI_WEB_SKIP_CONTRACT") == "1":
        pytest.skip("OMNI_WEB_SKIP_CONTRACT=1: contract tier skipped")
    try:
        return ensure_contract_venv()
    except ContractVenvError as exc:
        failure = str(exc)
    pytest.fail(failure, pytrace=False)


@pytest.fixture(scope="session")
def contract_env(contract_venv: ContractVenv, tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """Environment for a contract run: stubs on the path, an offline fake hub, a private voices dir."""
    home = tmp_path_factory.mktemp("contract-home")
    env = harness_env()
    env.update(
        HF_HOME=str(write_fake_hub(home / "hf")),
        HF_HUB_OFFLINE="1",
        TRANSFORMERS_OFFLINE="1",
        HF_HUB_DISABLE_TELEMETRY="1",
        SPEAKER_SAMPLES_DIR=str(home / "speakers"),
        HOME=str(home),
        NO_COLOR="1",
    )
    return env


def run_serve_parser(
    venv: ContractVenv, env: dict[str, str], cases: dict[str, list[str]]
) -> dict[str, ParseResult]:
    """Run each argv (an `sgl-omni` command line minus the executable) through the real parser.

    All cases share one process (`--batch`), so the imports are paid once.
    """
    with tempfile.NamedTemporaryFile("w", suffix=".json", dir=env["HOME"], delete=False) as handle:
        json.dump([{"id": key, "argv": argv} for key, argv in cases.items()], handle)
    try:
        done = subprocess.run(  # noqa: S603 - argv list
            [str(venv.python), str(PARSER), "--batch", handle.name],
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
    finally:
        Path(handle.name).unlink()
    assert done.returncode == 0, f"parser harness crashed:\n{done.stderr[-4000:]}"
    results = {}
    for line in done.stdout.splitlines():
        if line.startswith("{"):
            item = json.loads(line)
            results[item["id"]] = ParseResult(item["exit_code"], item["stdout"], item["stderr"])
    assert set(results) == set(cases), f"missing results: {set(cases) - set(results)}"
    return results


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass(frozen=True, slots=True)
class ContractServer:
    """The real sglang-omni server (stub pipeline) started with our argv for one catalog entry."""

    entry: CatalogEntry
    argv: tuple[str, ...]
    base_url: str
    process: subprocess.Popen[bytes]
    log_path: Path

    def log_tail(self, lines: int = 40) -> str:
        """The end of the server's combined stdout/stderr."""
        text = self.log_path.read_text(encoding="utf-8", errors="replace")
        return "".join(text.splitlines(keepends=True)[-lines:])

    def stop(self) -> None:
        """SIGINT (the real server's clean stop), then SIGKILL; only our own process."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=10)


def start_contract_server(
    venv: ContractVenv,
    env: dict[str, str],
    entry: CatalogEntry,
    workdir: Path,
    *,
    extra_env: dict[str, str] | None = None,
    compute_capability: tuple[int, int] = (8, 9),
) -> ContractServer:
    """Start `run_app.py` with the argv `build_argv` makes for `entry`; return once /health is 200.

    Each server gets its own uploaded-voices folder under `workdir`.
    """
    port = free_port()
    spec = build_serve_spec(
        entry,
        settings=Settings(server_host="127.0.0.1", server_port=port),
        compute_capability=compute_capability,
    )
    argv = build_argv(spec, sgl_omni=Path("sgl-omni"))[1:]
    workdir.mkdir(parents=True, exist_ok=True)
    log_path = workdir / "server.log"
    server_env = {**env, "SPEAKER_SAMPLES_DIR": str(workdir / "speakers"), **(extra_env or {})}
    with log_path.open("wb") as log:
        process = subprocess.Popen(  # noqa: S603 - argv list
            [str(venv.python), str(RUN_APP), *argv],
            env=server_env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    server = ContractServer(entry, tuple(argv), spec.base_url, process, log_path)
    deadline = time.monotonic() + SERVER_START_TIMEOUT_S
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise AssertionError(f"contract server exited with {process.returncode}:\n{server.log_tail()}")
        try:
            if httpx.get(f"{spec.base_url}/health", timeout=2).status_code == 200:
                return server
        except httpx.TransportError:
            pass
        time.sleep(0.3)
    server.stop()
    raise AssertionError(
        f"contract server not healthy after {SERVER_START_TIMEOUT_S:.0f} s:\n{server.log_tail()}"
    )


# --- contract servers, one per checkpoint kind, shared by the HTTP and convert tests ----------


def _server(
    request: pytest.FixtureRequest,
    key: str,
    *,
    extra_env: dict[str, str] | None = None,
) -> Iterator[ContractServer]:
    venv: ContractVenv = request.getfixturevalue("contract_venv")
    env: dict[str, str] = request.getfixturevalue("contract_env")
    workdir = request.getfixturevalue("tmp_path_factory").mktemp(f"server-{key}")
    server = start_contract_server(venv, env, get_entry(key), workdir, extra_env=extra_env)
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="session")
def qwen_custom(request: pytest.FixtureRequest) -> Iterator[ContractServer]:
    yield from _server(request, "qwen3_tts_0_6b_customvoice")


@pytest.fixture(scope="session")
def qwen_design(request: pytest.FixtureRequest) -> Iterator[ContractServer]:
    yield from _server(request, "qwen3_tts_1_7b_voicedesign")


@pytest.fixture(scope="session")
def qwen_base(request: pytest.FixtureRequest) -> Iterator[ContractServer]:
    yield from _server(request, "qwen3_tts_0_6b_base")


@pytest.fixture(scope="session")
def voxtral(request: pytest.FixtureRequest) -> Iterator[ContractServer]:
    yield from _server(request, "voxtral_tts")


@pytest.fixture(scope="session")
def higgs(request: pytest.FixtureRequest) -> Iterator[ContractServer]:
    yield from _server(
        request, "higgs_audio_v3_tts", extra_env={"CONTRACT_STUB_KV_CAPACITY": str(HIGGS_KV_CAPACITY)}
    )


@pytest.fixture(scope="session")
def reference_clip(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A few seconds of real speech (espeak-ng) to clone and to upload."""
    espeak = shutil.which("espeak-ng")
    assert espeak, "espeak-ng is required (scripts/test.sh installs it)"
    path = tmp_path_factory.mktemp("reference") / "narrator.wav"
    subprocess.run([espeak, "-w", str(path), REFERENCE_TEXT], check=True, capture_output=True)  # noqa: S603
    return path
