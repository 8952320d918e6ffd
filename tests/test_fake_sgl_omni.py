"""The fake sgl-omni behaves like sglang-omni 0.1.9 as shared/docs/sglang-omni-api.md describes it."""

from __future__ import annotations

import base64
import io
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
import wave
from array import array
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest

from tests.fakes.sgl_omni import FAKE_PROGRAM, FakeServer, free_port, install_fake_sgl_omni

pytestmark = pytest.mark.slow  # subprocesses, real ffprobe, espeak-ng speech

REPO = Path(__file__).resolve().parent.parent
StartServer = Callable[..., FakeServer]


def run_fake(
    *args: str, env: dict[str, str] | None = None, timeout: float = 20
) -> subprocess.CompletedProcess[str]:
    """Run the fake to completion (CLI errors, crashes)."""
    return subprocess.run(  # noqa: S603 - fixed argv
        [sys.executable, str(FAKE_PROGRAM), *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, **(env or {})},
        check=False,
    )


def spawn_fake(*args: str, env: dict[str, str] | None = None, log: Path) -> subprocess.Popen[bytes]:
    """Start the fake in its own process group, output to ``log``."""
    with log.open("wb") as handle:
        return subprocess.Popen(  # noqa: S603 - fixed argv
            [sys.executable, str(FAKE_PROGRAM), "serve", *args],
            stdout=handle,
            stderr=subprocess.STDOUT,
            env={**os.environ, **(env or {})},
            start_new_session=True,
        )


def wait_healthy(url: str, timeout_s: float = 60) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"{url}/health", timeout=1).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.05)
    raise AssertionError(f"{url} never became healthy")


def ffprobe(data: bytes, tmp_path: Path) -> dict[str, float]:
    path = tmp_path / f"probe-{time.monotonic_ns()}.wav"
    path.write_bytes(data)
    out = subprocess.run(  # noqa: S603 - fixed argv
        [
            "ffprobe",
            "-v",
            "error",
            "-show_entries",
            "stream=sample_rate,channels:format=duration",
            "-of",
            "json",
            str(path),
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    info = json.loads(out.stdout)
    stream = info["streams"][0]
    return {
        "rate": int(stream["sample_rate"]),
        "channels": int(stream["channels"]),
        "duration": float(info["format"]["duration"]),
    }


def rms(wav_data: bytes) -> float:
    with wave.open(io.BytesIO(wav_data)) as handle:
        samples = array("h")
        samples.frombytes(handle.readframes(handle.getnframes()))
    return (sum(s * s for s in samples) / max(len(samples), 1)) ** 0.5


@pytest.fixture(scope="module")
def espeak_clip(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real ~3 s speech clip made by espeak-ng."""
    path = tmp_path_factory.mktemp("clips") / "reference.wav"
    subprocess.run(
        ["espeak-ng", "-w", str(path), "This is a short reference clip for the voice test."],  # noqa: S603, S607
        check=True,
        capture_output=True,
    )
    return path


# -- CLI ------------------------------------------------------------------------------------------


def test_underscore_flag_is_refused_like_the_real_cli() -> None:
    result = run_fake(
        "serve", "--model-path", "Qwen/Qwen3-TTS-12Hz-0.6B-CustomVoice", "--mem_fraction_static", "0.6"
    )
    assert result.returncode == 2
    assert (
        "Error: Invalid value: 'mem_fraction_static' does not start from a stage name or a top-level "
        "configuration field of Qwen3TTSPipelineConfig"
    ) in result.stderr
    assert "stages of this pipeline: preprocessing, tts_engine, vocoder" in result.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--mem-fraction-static", "1.5"], "Input should be less than 1"),
        (["--tts_engine", "3"], "'tts_engine' names a whole stage"),
        (
            ["--tts_engine.engine.mem_fraction_static"],
            "Missing value for argument: --tts_engine.engine.mem_fraction_static",
        ),
        (["--vocoder.engine.max_running_requests", "4"], "stages.vocoder is not an engine stage"),
    ],
)
def test_cli_validation_errors_exit_2(args: list[str], message: str) -> None:
    result = run_fake("serve", "--model-path", "Qwen/Qwen3-TTS-12Hz-0.6B-CustomVoice", *args)
    assert result.returncode == 2
    assert "Error: Invalid value: " in result.stderr
    assert message in result.stderr


def test_model_path_required_and_unknown_model() -> None:
    missing = run_fake("serve", "--port", "1")
    assert missing.returncode == 2
    assert "Error: Invalid value: --model-path is required unless --config is set" in missing.stderr
    unknown = run_fake("serve", "--model-path", "nobody/nothing-tts")
    assert unknown.returncode == 1
    assert "Traceback (most recent call last):" in unknown.stderr
    assert "Could not resolve model architecture for 'nobody/nothing-tts'" in unknown.stderr


def test_bad_stage_name_and_duplicate_key_in_yaml(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(
        "config_cls: Qwen3TTSPipelineConfig\nmodel_path: Qwen/Qwen3-TTS-12Hz-0.6B-Base\n"
        "stages:\n  talker:\n    gpu: 0\n"
    )
    result = run_fake("serve", "--config", str(bad))
    assert result.returncode == 2
    assert (
        "Error: Invalid value: stages.talker: no stage named 'talker' in Qwen3TTSPipelineConfig; "
        in result.stderr
    )
    dup = tmp_path / "dup.yaml"
    dup.write_text("config_cls: Qwen3TTSPipelineConfig\nmodel_path: a/b\nmodel_path: c/d\n")
    assert "duplicate mapping key 'model_path'" in run_fake("serve", "--config", str(dup)).stderr
    no_cls = tmp_path / "nocls.yaml"
    no_cls.write_text("model_path: a/b\n")
    assert "must name its pipeline class in config_cls" in run_fake("serve", "--config", str(no_cls)).stderr


def test_vendored_configs_load_cleanly(fake_server: StartServer) -> None:
    for config in sorted((REPO / "configs").glob("*.yaml")):
        # The batch-size check runs after the file is loaded and merged, so reaching it proves the
        # file passed every config check first.
        result = run_fake("serve", "--config", str(config), "--tts-batch-max-items", "0")
        assert result.returncode == 2, config.name
        assert "Error: Invalid value: tts batch max items must be greater than 0" in result.stderr, (
            config.name
        )
    server = fake_server(
        "higgs_audio_v3_tts", extra_args=["--config", str(REPO / "configs/higgs_audio_v3_tts.yaml")]
    )
    assert httpx.get(f"{server.base_url}/health").json()["stages"] == [
        "preprocessing",
        "audio_encoder",
        "tts_engine",
        "vocoder",
    ]


# -- boot sequence --------------------------------------------------------------------------------


def test_busy_port_falls_back_and_listens_elsewhere(fake_server: StartServer) -> None:
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        held = holder.getsockname()[1]
        server = fake_server("qwen3_tts_0_6b_customvoice", port=held)
        log = server.log_text()
        assert f"[WARNING] sglang_omni.serve.launcher: Port {held} is already in use on 127.0.0.1." in log
        match = re.search(r"Using port (\d+) instead\.", log)
        assert match and int(match.group(1)) == server.port != held
        assert f"Uvicorn running on http://127.0.0.1:{server.port} " in log
        assert httpx.get(f"{server.base_url}/health").status_code == 200


def test_strict_port_refuses_to_fall_back() -> None:
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        held = holder.getsockname()[1]
        result = run_fake(
            "serve",
            "--model-path",
            "fishaudio/s2-pro",
            "--host",
            "127.0.0.1",
            "--port",
            str(held),
            env={"SGLANG_OMNI_STRICT_PORT": "1"},
        )
    assert result.returncode == 1
    assert (
        f"RuntimeError: port {held} is already in use on 127.0.0.1 and SGLANG_OMNI_STRICT_PORT=1 forbids "
        "falling back"
    ) in result.stderr


def test_refused_while_loading_then_starting_then_healthy(tmp_path: Path) -> None:
    port = free_port()
    process = spawn_fake(
        "--model-path",
        "Qwen/Qwen3-TTS-12Hz-1.7B-VoiceDesign",
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        env={"FAKE_SGL_BOOT_DELAY_S": "1.0", "FAKE_SGL_WARMUP_S": "0.8"},
        log=tmp_path / "boot.log",
    )
    seen: list[str] = []
    try:
        deadline = time.monotonic() + 60  # generous: a loaded 2-core machine boots slowly
        while time.monotonic() < deadline and (not seen or seen[-1] != "200"):
            try:
                response = httpx.get(f"http://127.0.0.1:{port}/health", timeout=1)
                status = str(response.status_code)
                if status == "503":
                    assert response.json()["status"] == "starting"
            except httpx.ConnectError:
                status = "refused"
            if not seen or seen[-1] != status:
                seen.append(status)
            time.sleep(0.05)
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=30)
    assert seen == ["refused", "503", "200"]
    log = (tmp_path / "boot.log").read_text()
    for line in (
        "MultiProcessPipelineRunner started: 3 stage(s)",
        "Model capabilities: {",
        "Pipeline 'Qwen/Qwen3-TTS-12Hz-1.7B-VoiceDesign' started (1 GPU(s))",
        "Server warmup of 1 request(s) finished in",
        "Received SIGTERM, stopping the pipeline",
        "Pipeline stopped.",
    ):
        assert line in log


def test_crash_during_boot_exits_1_with_the_detail() -> None:
    result = run_fake(
        "serve",
        "--model-path",
        "Zyphra/ZONOS2",
        "--port",
        str(free_port()),
        env={
            "FAKE_SGL_CRASH_DURING_BOOT": "3",
            "FAKE_SGL_CRASH_DETAIL": "RuntimeError: Loaded weights leave no GPU memory for the KV cache",
        },
    )
    assert result.returncode == 1
    assert (
        "RuntimeError: Process pipeline died during startup (exit code 3)\nStartup failure detail:\n"
        in result.stderr
    )
    assert result.stderr.rstrip().endswith("Loaded weights leave no GPU memory for the KV cache")


def test_sigterm_kills_by_signal_15_and_sigint_exits_0(tmp_path: Path) -> None:
    for signum, expected in ((signal.SIGTERM, -signal.SIGTERM), (signal.SIGINT, 0)):
        port = free_port()
        process = spawn_fake(
            "--model-path",
            "fishaudio/s2-pro",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            log=tmp_path / f"sig{signum}.log",
        )
        wait_healthy(f"http://127.0.0.1:{port}")
        os.kill(process.pid, signum)
        assert process.wait(timeout=30) == expected
        assert "Pipeline stopped." in (tmp_path / f"sig{signum}.log").read_text()


def test_crash_after_n_requests_kills_the_process(fake_server: StartServer) -> None:
    server = fake_server("voxtral_tts", env={"FAKE_SGL_CRASH_AFTER_REQUESTS": "2"})
    for _ in range(2):
        assert httpx.post(f"{server.base_url}/v1/audio/speech", json={"input": "Fine."}).status_code == 200
    with pytest.raises(httpx.TransportError):
        httpx.post(f"{server.base_url}/v1/audio/speech", json={"input": "This one dies."})
    assert server.process.wait(timeout=30) == 1


# -- speech ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("model_key", "rate", "channels", "extra"),
    [
        ("qwen3_tts_0_6b_customvoice", 24000, 1, {"voice": "Ryan"}),
        ("moss_tts_local", 48000, 2, {}),
        ("zonos2", 44100, 1, {}),
    ],
)
def test_speech_wav_matches_family_format_and_words(
    fake_server: StartServer, tmp_path: Path, model_key: str, rate: int, channels: int, extra: dict[str, str]
) -> None:
    server = fake_server(model_key, env={"FAKE_SGL_SECONDS_PER_WORD": "0.25"})
    text = "One two three four five six seven eight."
    response = httpx.post(f"{server.base_url}/v1/audio/speech", json={"input": text, **extra})
    assert response.status_code == 200, response.text
    assert response.headers["content-type"] == "audio/wav"
    assert re.fullmatch(r"speech-[0-9a-f-]{36}", response.headers["x-request-id"])
    assert response.headers["x-finish-reason"] == "stop"
    assert response.headers["content-disposition"] == 'attachment; filename="speech.wav"'
    probed = ffprobe(response.content, tmp_path)
    assert (probed["rate"], probed["channels"]) == (rate, channels)
    assert probed["duration"] == pytest.approx(8 * 0.25, abs=0.01)
    assert rms(response.content) > 500  # speech-like, not silence
    again = httpx.post(f"{server.base_url}/v1/audio/speech", json={"input": text, **extra})
    assert again.content == response.content  # deterministic from the text


def test_low_token_cap_truncates_with_length(fake_server: StartServer, tmp_path: Path) -> None:
    server = fake_server("qwen3_tts_0_6b_customvoice")
    response = httpx.post(
        f"{server.base_url}/v1/audio/speech", json={"input": " ".join(["word"] * 40), "max_new_tokens": 50}
    )
    assert response.headers["x-finish-reason"] == "length"
    assert ffprobe(response.content, tmp_path)["duration"] == pytest.approx(50 / 12.5, abs=0.01)
    pcm = httpx.post(
        f"{server.base_url}/v1/audio/speech", json={"input": "Two words", "response_format": "pcm"}
    )
    assert pcm.headers["content-type"] == "audio/pcm"
    assert len(pcm.content) == int(2 * 0.3 * 24000) * 2


def test_kv_capacity_error_is_exact_and_parsable(fake_server: StartServer) -> None:
    server = fake_server(
        "higgs_audio_v3_tts", extra_args=["--config", str(REPO / "configs/higgs_audio_v3_tts.yaml")]
    )
    words = 300
    response = httpx.post(
        f"{server.base_url}/v1/audio/speech",
        json={"input": " ".join(["tale"] * words), "max_new_tokens": 3000},
    )
    assert response.status_code == 400
    error = response.json()["error"]
    assert error == {
        "message": (
            "Request requires more tokens than the thinker KV cache can hold (input_tokens=1200, "
            "max_new_tokens=3000, required_tokens=4200, kv_capacity=4095). Try raising engine.kv_cache_bytes."
        ),
        "type": "BadRequestError",
        "param": None,
        "code": 400,
    }
    capacity = int(re.search(r"kv_capacity=(\d+)", error["message"]).group(1))
    used = int(re.search(r"input_tokens=(\d+)", error["message"]).group(1))
    refit = httpx.post(
        f"{server.base_url}/v1/audio/speech",
        json={"input": " ".join(["tale"] * words), "max_new_tokens": capacity - used},
    )
    assert refit.status_code == 200
    assert refit.headers["x-finish-reason"] == "length"
    assert "Rejecting request speech-" in server.log_text()


def test_family_specific_refusals(fake_server: StartServer, espeak_clip: Path) -> None:
    voxtral = fake_server("voxtral_tts")
    response = httpx.post(
        f"{voxtral.base_url}/v1/audio/speech", json={"input": "Bonjour.", "temperature": 0.7}
    )
    assert response.status_code == 500
    assert response.json()["error"] == {
        "message": (
            "Voxtral TTS does not support these /v1/audio/speech fields: temperature. Supported "
            "model-specific fields are voice and max_new_tokens."
        ),
        "type": "server_error",
        "param": None,
        "code": None,
    }
    custom = fake_server("qwen3_tts_0_6b_customvoice")
    unknown = httpx.post(f"{custom.base_url}/v1/audio/speech", json={"input": "Hi.", "voice": "Bob"})
    assert unknown.status_code == 400
    assert unknown.json()["error"]["message"].startswith(
        "Unknown voice 'Bob'. Supported voices: default, Vivian,"
    )
    ref = httpx.post(
        f"{custom.base_url}/v1/audio/speech", json={"input": "Hi.", "ref_audio": str(espeak_clip)}
    )
    assert ref.json()["error"]["message"] == "ref_audio is not supported by this model"
    base = fake_server("qwen3_tts_0_6b_base")
    text_only = httpx.post(f"{base.base_url}/v1/audio/speech", json={"input": "Hi.", "task_type": "Base"})
    assert text_only.json()["error"]["message"] == (
        "Qwen3-TTS Base requires reference audio via ref_audio or references[0].audio_path"
    )
    data_url = "data:audio/wav;base64," + base64.b64encode(espeak_clip.read_bytes()).decode()
    cloned = httpx.post(
        f"{base.base_url}/v1/audio/speech",
        json={"input": "Hi there.", "ref_audio": data_url, "ref_text": "A clip."},
    )
    assert cloned.status_code == 200
    missing = httpx.post(
        f"{base.base_url}/v1/audio/speech", json={"input": "Hi.", "ref_audio": "/no/such.wav"}
    )
    assert missing.json()["error"]["message"] == "ref_audio file does not exist: /no/such.wav"
    loop = httpx.post(
        f"{base.base_url}/v1/audio/speech", json={"input": "Hi.", "ref_audio": "http://127.0.0.1/a.wav"}
    )
    assert loop.json()["error"]["message"] == "Remote media URL resolves to a loopback address: 127.0.0.1"


def test_request_log_and_queue_full(fake_server: StartServer, tmp_path: Path) -> None:
    log = tmp_path / "requests.jsonl"
    server = fake_server("fish_s2_pro", env={"FAKE_SGL_REQUEST_LOG": str(log), "FAKE_SGL_FAIL_NEXT_503": "1"})
    body = {"input": "Queue me.", "seed": 7}
    busy = httpx.post(f"{server.base_url}/v1/audio/speech", json=body)
    assert busy.status_code == 503
    assert busy.json()["error"] == {
        "message": "The request queue is full.",
        "type": "server_error",
        "param": None,
        "code": None,
    }
    assert httpx.post(f"{server.base_url}/v1/audio/speech", json=body).status_code == 200
    assert [json.loads(line) for line in log.read_text().splitlines()] == [body, body]
    assert httpx.get(f"{server.base_url}/v1/models").json()["data"][0]["id"] == "fishaudio/s2-pro"


# -- voices ---------------------------------------------------------------------------------------


def test_voices_upload_list_use_delete(fake_server: StartServer, espeak_clip: Path, tmp_path: Path) -> None:
    server = fake_server("higgs_audio_v3_tts", env={"SPEAKER_SAMPLES_DIR": str(tmp_path / "speakers")})
    url = f"{server.base_url}/v1/audio/voices"
    clip = espeak_clip.read_bytes()
    missing = httpx.post(
        url, data={"name": "narrator"}, files={"audio_sample": ("clip.wav", clip, "audio/wav")}
    )
    assert missing.status_code == 422
    assert missing.json()["detail"][0]["loc"] == ["body", "consent"]
    uploaded = httpx.post(
        url,
        data={"name": "Narrator", "consent": "yes", "ref_text": "A short clip."},
        files={"audio_sample": ("clip.wav", clip, "audio/wav")},
    )
    assert uploaded.status_code == 200, uploaded.text
    assert uploaded.json()["file_size"] == len(clip)
    listing = httpx.get(url).json()
    assert listing["voices"] == ["default", "Narrator"]
    assert listing["uploaded_voices"][0]["ref_text"] == "A short clip."
    assert httpx.get(url, params={"names_only": "true"}).json() == {"uploaded_voice_names": ["Narrator"]}
    speech = f"{server.base_url}/v1/audio/speech"
    assert httpx.post(speech, json={"input": "Read this.", "voice": "narrator"}).status_code == 200
    stranger = httpx.post(speech, json={"input": "Read this.", "voice": "stranger"})
    assert stranger.json()["error"]["message"] == (
        "Unknown voice 'stranger'. Upload a voice first via POST /v1/audio/voices, or use ref_audio + "
        "ref_text."
    )
    reserved = httpx.post(
        url, data={"name": "default", "consent": "yes"}, files={"audio_sample": ("c.wav", clip)}
    )
    assert reserved.json()["error"]["message"] == "name is reserved for a preset voice"
    assert (tmp_path / "speakers" / "narrator.json").exists()
    assert httpx.delete(f"{url}/Narrator").json() == {
        "success": True,
        "message": "Voice 'Narrator' deleted successfully",
    }
    gone = httpx.delete(f"{url}/Narrator")
    assert gone.status_code == 404
    assert gone.json() == {"success": False, "error": "Voice 'Narrator' not found"}
    assert httpx.get(url).json()["voices"] == ["default"]


def test_installed_script_runs_the_fake(tmp_path: Path) -> None:
    script = install_fake_sgl_omni(tmp_path / "venv")
    assert (tmp_path / "venv" / "bin" / "python").resolve() == Path(sys.executable).resolve()
    result = subprocess.run(
        [str(script), "check-gpu", "--json"],
        capture_output=True,
        text=True,  # noqa: S603
        check=False,
        timeout=20,
    )
    assert result.returncode == 0
    assert json.loads(result.stdout)["gpus"] == []
    version = subprocess.run(  # noqa: S603
        [
            str(tmp_path / "venv" / "bin" / "python"),
            "-c",
            "import sys, importlib.metadata as m; print(sys.prefix, m.version('sglang-omni'))",
        ],
        capture_output=True,
        text=True,
        check=True,
        timeout=20,
    )
    assert version.stdout.split() == [str(tmp_path / "venv"), "0.1.9"]
