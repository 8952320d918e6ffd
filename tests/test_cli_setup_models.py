"""``python -m omni_web setup`` and ``models`` as a user runs them: subprocesses, environment
variables (``OMNI_WEB_HOME``, ``HF_HUB_CACHE``, ``HF_ENDPOINT``, pip's ``PIP_*``), a local hub."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from omni_web.backend.disk import format_bytes
from omni_web.catalog import SGLANG_OMNI_VERSION, get_entry
from omni_web.models import download_model, installed_keys
from omni_web.paths import REPO_ROOT, DataPaths
from omni_web.server.record import ServerRecord, load_record, process_info, save_record
from omni_web.setup_report import collect_setup_report, render_setup_report
from tests.fakes.fake_hf_hub import FakeHub, FakeRepo
from tests.fakes.fake_nvml import FakeNvml
from tests.fakes.wheels import make_wheel

pytestmark = pytest.mark.slow  # subprocesses, real ffmpeg, real ffprobe

QWEN = get_entry("qwen3_tts_0_6b_base")
VOXTRAL = get_entry("voxtral_tts")
SHARD_1, SHARD_2 = "model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors"


def _repo(entry, shard_size: int = 300_000) -> FakeRepo:
    rng = random.Random(entry.key)
    return FakeRepo(entry.repo_id, {
        "config.json": b'{"model_type": "tts"}',
        SHARD_1: rng.randbytes(shard_size),
        SHARD_2: rng.randbytes(shard_size),
    })


@pytest.fixture
def hub():
    with FakeHub() as server:
        yield server


@pytest.fixture
def env(data_paths: DataPaths, tmp_path: Path, hub: FakeHub) -> dict[str, str]:
    """The environment a user would have: data root, HF cache and hub endpoint all local."""
    return {
        **os.environ,
        "OMNI_WEB_HOME": str(data_paths.root),
        "HF_HOME": str(tmp_path / "hf-home"),
        "HF_HUB_CACHE": str(tmp_path / "hf-cache"),
        "HF_ENDPOINT": hub.url,
        "HF_HUB_DISABLE_TELEMETRY": "1",
        "PYTHONUNBUFFERED": "1",
    }


def omni(*args: str, env: dict[str, str], input_text: str | None = None, timeout: float = 120):
    return subprocess.run(
        [sys.executable, "-m", "omni_web", *args], cwd=REPO_ROOT, env=env, input=input_text,
        capture_output=True, text=True, timeout=timeout,
    )


def test_setup_check_prints_the_whole_picture(env: dict[str, str], data_paths: DataPaths) -> None:
    done = omni("setup", "--check", env=env)
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert out.startswith("omni-web setup check")
    assert f"data root: {data_paths.root}" in out
    assert f"ok  {sys.executable} (Python {'.'.join(map(str, sys.version_info[:3]))})" in out
    assert "sglang-omni 0.1.9 needs Python >=3.11,<3.13" in out
    assert f"{data_paths.backend_venv}: missing" in out and "run: python -m omni_web setup" in out
    assert "NO NVIDIA GPU" in out or "driver " in out
    for tool in ("ffmpeg", "ffprobe", "sox"):
        assert any(line.split()[:2] in (["ok", tool], ["!!", tool]) for line in out.splitlines()), tool
    assert "The backend venv needs about 10.0 GB;" in out and "is free at" in out
    assert f"HF cache {env['HF_HUB_CACHE']}:" in out
    assert "none installed" in out
    assert not data_paths.backend_venv.exists()  # a check changes nothing


def test_models_install_list_remove_end_to_end(env: dict[str, str], hub: FakeHub, tmp_path: Path) -> None:
    # huggingface_hub writes in 10 MiB chunks: a cut past the first chunk resumes with a Range.
    repo = _repo(QWEN, shard_size=11_000_000)
    hub.add_repo(repo)
    hub.cut_connection_once(repo.repo_id, SHARD_1, after_bytes=10_600_000)
    size = format_bytes(sum(len(data) for data in repo.files.values()))

    done = omni("models", "install", QWEN.key, env=env)

    assert done.returncode == 0, done.stderr
    assert f"installed {QWEN.key}:" in done.stdout
    assert "Trying to resume download" in done.stderr
    assert [req.range for req in hub.gets_of(repo.repo_id, SHARD_1)] == [None, f"bytes={10 * 1024 * 1024}-"]
    assert "companion packages" in done.stderr  # no backend venv yet: a warning, not a failure
    cache = Path(env["HF_HUB_CACHE"])
    assert installed_keys(cache_dir=cache) == {QWEN.key}

    listing = omni("models", "list", env=env)
    row = next(line for line in listing.stdout.splitlines() if line.startswith(QWEN.key + " "))
    assert "installed" in row and size in row
    assert "- " in next(line for line in listing.stdout.splitlines() if line.startswith(VOXTRAL.key))

    declined = omni("models", "remove", QWEN.key, env=env, input_text="n\n")
    assert declined.returncode == 1 and "Nothing removed." in declined.stdout
    assert f"freeing {size}" in declined.stdout
    assert installed_keys(cache_dir=cache) == {QWEN.key}

    removed = omni("models", "remove", QWEN.key, "--yes", env=env)
    assert removed.returncode == 0, removed.stderr
    assert f"Removed {QWEN.key}; freed {size}." in removed.stdout
    assert installed_keys(cache_dir=cache) == set()
    assert "none installed" in omni("setup", "--check", env=env).stdout


def test_ctrl_c_interrupts_a_download_and_a_rerun_resumes_it(env: dict[str, str], hub: FakeHub) -> None:
    rng = random.Random(7)
    repo = FakeRepo(VOXTRAL.repo_id, {
        "config.json": b"{}", SHARD_1: rng.randbytes(100_000), SHARD_2: rng.randbytes(3_000_000),
    })
    hub.add_repo(repo)
    hub.set_chunk_delay(0.005)  # the big shard takes ~1 s; files download in parallel
    cache = Path(env["HF_HUB_CACHE"])
    first_blob = cache / "models--mistralai--Voxtral-4B-TTS-2603" / "blobs" / repo.etag(SHARD_1)
    proc = subprocess.Popen(
        [sys.executable, "-m", "omni_web", "models", "install", VOXTRAL.key], cwd=REPO_ROOT, env=env,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        # As from a terminal: a test run started in the background (`cmd &` in a script) inherits
        # SIGINT ignored, and a Python started that way never turns Ctrl-C into KeyboardInterrupt.
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),  # noqa: PLW1509
    )
    deadline = time.monotonic() + 60
    while not first_blob.exists() and time.monotonic() < deadline:
        time.sleep(0.02)  # the small shard is in; the big one is under way
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 1, (out, err)
    assert "Cancelling" in err and "was cancelled" in err and "Traceback" not in err
    assert installed_keys(cache_dir=cache) == set()
    assert first_blob.read_bytes() == repo.files[SHARD_1]

    hub.set_chunk_delay(0)
    again = omni("models", "install", VOXTRAL.key, env=env)
    assert again.returncode == 0, again.stderr
    assert installed_keys(cache_dir=cache) == {VOXTRAL.key}
    assert len(hub.gets_of(repo.repo_id, SHARD_1)) == 1  # the finished shard was kept
    assert len(hub.gets_of(repo.repo_id, SHARD_2)) == 2


def test_remove_stops_the_managed_server_hosting_the_model(
    env: dict[str, str], hub: FakeHub, data_paths: DataPaths
) -> None:
    hub.add_repo(_repo(QWEN))
    download_model(QWEN, cache_dir=env["HF_HUB_CACHE"], endpoint=hub.url)
    server = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"], start_new_session=True)
    try:
        info = process_info(server.pid)
        assert info is not None
        save_record(data_paths, ServerRecord(
            pid=server.pid, pgid=server.pid, start_ticks=info.start_ticks, model_key=QWEN.key,
            repo_id=QWEN.repo_id, host="127.0.0.1", port=8100, log_path=data_paths.logs_dir / "server.log",
        ))
        removed = omni("models", "remove", QWEN.key, "--yes", env=env)
        assert removed.returncode == 0, removed.stderr
        assert f"Stopping the managed server hosting {QWEN.key} (pid {server.pid})" in removed.stdout
        assert server.wait(timeout=15) is not None
        assert load_record(data_paths) is None
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()


def test_remove_leaves_a_server_hosting_another_model_running(
    env: dict[str, str], hub: FakeHub, data_paths: DataPaths
) -> None:
    hub.add_repo(_repo(QWEN))
    download_model(QWEN, cache_dir=env["HF_HUB_CACHE"], endpoint=hub.url)
    server = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"], start_new_session=True)
    try:
        info = process_info(server.pid)
        save_record(data_paths, ServerRecord(
            pid=server.pid, pgid=server.pid, start_ticks=info.start_ticks, model_key=VOXTRAL.key,
            repo_id=VOXTRAL.repo_id, host="127.0.0.1", port=8100, log_path=data_paths.logs_dir / "s.log",
        ))
        assert omni("models", "remove", QWEN.key, "--yes", env=env).returncode == 0
        assert server.poll() is None and load_record(data_paths) is not None
    finally:
        server.kill()
        server.wait()


def test_bad_keys_and_gated_models_get_clear_messages(env: dict[str, str], hub: FakeHub) -> None:
    unknown = omni("models", "install", "no_such_model", env=env)
    assert unknown.returncode == 1
    assert "Unknown model 'no_such_model'. Known models:" in unknown.stderr and "Traceback" not in unknown.stderr
    gated = _repo(VOXTRAL)
    gated.gated = True
    hub.add_repo(gated)
    refused = omni("models", "install", VOXTRAL.key, env={**env, "HF_TOKEN": ""})
    assert (
        refused.returncode == 1 and "gated repository" in refused.stderr and "Traceback" not in refused.stderr
    )
    nothing = omni("models", "remove", VOXTRAL.key, "--yes", env=env)
    assert nothing.returncode == 0 and "nothing to remove" in nothing.stdout


def test_setup_builds_the_backend_venv_with_pip_settings_from_the_environment(
    env: dict[str, str], data_paths: DataPaths, tmp_path: Path
) -> None:
    wheels = tmp_path / "wheels"
    make_wheel(wheels, "sglang-omni", SGLANG_OMNI_VERSION, scripts={"sgl-omni": "main"})
    offline = {**env, "PIP_NO_INDEX": "1", "PIP_FIND_LINKS": str(wheels)}
    done = omni("setup", env=offline, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Backend interpreter:" in done.stdout and "Successfully installed sglang-omni" in done.stdout
    assert "The backend is ready" in done.stdout
    assert f"ok  {data_paths.backend_venv}: ready" in done.stdout
    assert (data_paths.backend_venv / "bin" / "sgl-omni").exists()


def test_report_with_a_gpu_shows_fit_per_model_and_install_lines_for_missing_tools(
    data_paths: DataPaths, tmp_path: Path
) -> None:
    gib = 1024**3
    nvml = FakeNvml([("NVIDIA GeForce RTX 3090", (8, 6), 24 * gib, 20 * gib)])
    present = {"ffmpeg", "ffprobe", "pacman"}
    report = collect_setup_report(
        data_paths,
        nvml=nvml,
        cache_dir=tmp_path / "hf",
        which=lambda n: f"/usr/bin/{n}" if n in present else None,
        app_python=sys.executable,
        app_version=(3, 13, 2),
    )
    text = render_setup_report(report)
    assert "driver 550.54.15" in text
    assert "GPU 0: NVIDIA GeForce RTX 3090, compute capability 8.6, 24.0 GiB total, 20.0 GiB free" in text
    zonos = next(line for line in text.splitlines() if " zonos2 " in line)
    assert zonos.lstrip().startswith("ok") and "8.6 < 8.9" in zonos and "bf16" in zonos
    moss = next(line for line in text.splitlines() if " moss_tts " in line)
    assert moss.lstrip().startswith("ok")  # 24 GB asked, 24 GiB present
    sox = text.splitlines().index(
        next(line for line in text.splitlines() if "sox" in line and "MISSING" in line)
    )
    assert text.splitlines()[sox + 1].strip() == "pacman: sudo pacman -S sox"  # this machine's manager first
    assert "never blocks a model download" in text
    assert "3.13.2, outside >=3.11,<3.13" in text  # the rejected app interpreter is named
