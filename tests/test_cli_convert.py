"""`python -m omni_web convert` end to end: the managed (fake) server, SIGKILL halfway, and a resume."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from omni_web.assemble import probe_chapters
from omni_web.book import load_book
from omni_web.catalog import get_entry
from omni_web.client import VoiceChoice
from omni_web.paths import REPO_ROOT, DataPaths
from omni_web.pipeline import ConvertRequest, plan_conversion
from omni_web.server import ServerManager, load_record, record_matches_process
from omni_web.settings import Settings, save_settings
from tests.conftest import DATA_DIR
from tests.fakes.sgl_omni import free_port, install_fake_sgl_omni

pytestmark = pytest.mark.slow  # subprocesses, real ffmpeg

MODEL = "qwen3_tts_0_6b_customvoice"


@pytest.fixture
def managed_home(data_paths: DataPaths, tmp_path: Path) -> Iterator[tuple[DataPaths, dict[str, str], Path]]:
    """A data root with the fake backend installed, a free server port and a request log."""
    install_fake_sgl_omni(data_paths.backend_venv)
    # 0.01 s a word is no speech: QA (test_qa_pipeline.py) would retake every chunk; off here.
    save_settings(data_paths, Settings(server_port=free_port(), start_timeout_s=60, qa_level="off"))
    log = tmp_path / "requests.jsonl"
    env = {
        **os.environ,
        "OMNI_WEB_HOME": str(data_paths.root),
        "FAKE_SGL_REQUEST_LOG": str(log),
        "FAKE_SGL_SECONDS_PER_WORD": "0.01",
        "FAKE_SGL_LATENCY_S": "0.05",
        "FAKE_SGL_SLOTS": "2",
    }
    yield data_paths, env, log
    record = load_record(data_paths)  # whatever a killed run left behind is stopped by its own pid
    if record is not None and record_matches_process(record):
        os.killpg(record.pgid, signal.SIGKILL)


def cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "omni_web", "convert", *args]


def test_managed_server_is_started_and_stopped_again(managed_home) -> None:
    paths, env, _ = managed_home
    done = subprocess.run(cli(str(DATA_DIR / "hefty-water.epub"), "--model", MODEL, "--voice", "vivian"),
                          cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "started for this run" in done.stdout and "Stopping the server" in done.stdout
    m4b = Path(done.stdout.split("Audiobook: ")[1].splitlines()[0])
    assert [c.title for c in probe_chapters(m4b)] == [
        c.title for c in load_book(DATA_DIR / "hefty-water.epub").chapters
    ]
    assert load_record(paths) is None


def test_loudness_preset_from_the_command_line_masters_to_its_target(managed_home) -> None:
    from tests.levels import ebur128

    _paths, env, _ = managed_home
    env = {**env, "FAKE_SGL_SECONDS_PER_WORD": "0.1", "FAKE_SGL_LEVEL_SPREAD_DB": "16"}
    done = subprocess.run(
        cli(
            str(DATA_DIR / "wasteland.epub"),
            "--model",
            MODEL,
            "--voice",
            "vivian",
            "--chapters",
            "2",
            "--loudness",
            "R128",
        ),
        cwd=REPO_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    m4b = Path(done.stdout.split("Audiobook: ")[1].splitlines()[0])
    levels = ebur128(m4b)
    assert abs(levels.integrated_lufs + 23) <= 1.0 and levels.true_peak_db <= -1.0, levels
    assert "EBU R128" in done.stdout and "all files pass" in done.stdout
    report = Path(done.stdout.split("Levels report: ")[1].splitlines()[0])
    assert report.is_file() and report.name.endswith(".levels.json")
    bad = subprocess.run(
        cli(str(DATA_DIR / "wasteland.epub"), "--model", MODEL, "--loudness", "loud"),
        cwd=REPO_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert bad.returncode != 0 and "audiobook" in bad.stderr and "podcast" in bad.stderr


def test_sigkill_halfway_then_rerun_renders_no_finished_chunk(managed_home) -> None:
    paths, env, log = managed_home
    args = cli(str(DATA_DIR / "wasteland.epub"), "--model", MODEL, "--voice", "Vivian", "--concurrency", "2")
    first = subprocess.Popen(
        args,
        cwd=REPO_ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 120
        while len(list(paths.chunk_cache_dir.glob("*.wav"))) < 12:
            assert first.poll() is None, "the first run ended before it could be killed"
            assert time.monotonic() < deadline, "no chunks rendered"
            time.sleep(0.05)
    finally:
        os.kill(first.pid, signal.SIGKILL)
        first.wait()
    finished = {p.stem for p in paths.chunk_cache_dir.glob("*.wav")}
    requests_before = len(log.read_text().splitlines())

    second = subprocess.run(args, cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert second.returncode == 0, second.stderr
    assert f"{len(finished)} reused" in second.stdout or "reused" in second.stdout

    # Map every request of the second run back to its chunk key through the same plan.
    entry = get_entry(MODEL)
    book = load_book(DATA_DIR / "wasteland.epub")
    request = ConvertRequest(
        book_path=DATA_DIR / "wasteland.epub", model_key=MODEL, voice=VoiceChoice.speaker("Vivian")
    )
    plan = plan_conversion(book, request, entry, Settings())
    key_by_text = {item.text: item.key for item in plan.items}
    later = [json.loads(line)["input"] for line in log.read_text().splitlines()[requests_before:]]
    assert later, "the second run rendered nothing"
    rerendered = {key_by_text[text] for text in later} & finished
    assert not rerendered, f"{len(rerendered)} finished chunks were rendered again"
    assert {key_by_text[t] for t in later} | finished >= set(key_by_text.values())
    # The server the killed run started is ours, reused by the second run and still ours to stop.
    assert ServerManager(paths, Settings()).owned_record() is not None


def test_a_managed_server_that_dies_mid_job_is_restarted_and_the_job_goes_on(
    managed_home, monkeypatch
) -> None:
    from omni_web.pipeline import convert_served, serving_for
    from omni_web.services import build_server_manager
    from omni_web.settings import load_settings

    paths, _, _ = managed_home
    # The managed server inherits these: it dies (os._exit) after every 8 speech requests.
    for name, value in {"FAKE_SGL_CRASH_AFTER_REQUESTS": "8", "FAKE_SGL_SECONDS_PER_WORD": "0.01"}.items():
        monkeypatch.setenv(name, value)
    settings = load_settings(paths)
    manager = build_server_manager(paths, settings)
    entry = get_entry(MODEL)
    serving = serving_for(manager, entry)
    first_pid = manager.owned_record().pid
    request = ConvertRequest(
        book_path=DATA_DIR / "hefty-water.epub",
        model_key=MODEL,
        voice=VoiceChoice.speaker("Vivian"),
        concurrency=1,
    )
    result = convert_served(request, serving, paths=paths, settings=settings)
    assert [c.title for c in probe_chapters(result.m4b)] == [
        c.title for c in load_book(DATA_DIR / "hefty-water.epub").chapters
    ]
    assert result.chunks_total > 16  # so the server died at least twice on the way
    assert manager.owned_record().pid != first_pid  # it crashed and was started again


def test_convert_finishes_a_book_on_a_server_that_crashes_after_every_8_requests(managed_home) -> None:
    paths, env, log = managed_home
    # 8 requests in flight against a server that dies (os._exit, unanswered) at its 9th request.
    # Chunks of 12 words make ~49 requests, so even when no crash kills one in flight (a loaded
    # machine can answer each batch before the next goes out) the server dies at least 6 times:
    # a fixed restart budget of 3 would give up long before the end.
    env = {**env, "FAKE_SGL_CRASH_AFTER_REQUESTS": "8", "FAKE_SGL_SLOTS": "8"}
    done = subprocess.run(
        cli(
            str(DATA_DIR / "hefty-water.epub"),
            "--model",
            MODEL,
            "--voice",
            "Vivian",
            "--concurrency",
            "8",
            "--chunk-size",
            "12",
        ),
        cwd=REPO_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    m4b = Path(done.stdout.split("Audiobook: ")[1].splitlines()[0])
    book = load_book(DATA_DIR / "hefty-water.epub")
    assert [c.title for c in probe_chapters(m4b)] == [c.title for c in book.chapters]
    restarts = done.stderr.count("The managed server died")
    assert restarts > 3, done.stderr[-3000:]  # more crashes than the old fixed budget of 3 restarts
    plan = plan_conversion(
        book,
        ConvertRequest(
            book_path=DATA_DIR / "hefty-water.epub",
            model_key=MODEL,
            voice=VoiceChoice.speaker("Vivian"),
            chunk_words=12,
        ),
        get_entry(MODEL),
        Settings(),
    )
    assert len(plan.items) > 40  # 8 answers a life: more than 4 crashes on the way
    answered = {json.loads(line)["input"] for line in log.read_text().splitlines()}
    assert {item.text for item in plan.items} <= answered


def _dominant_hz(m4b: Path) -> float:
    """The strongest frequency of the first spoken second (the fake server's pitch is the voice's)."""
    import numpy as np

    pcm = subprocess.run(
        ["ffmpeg", "-v", "error", "-i", str(m4b), "-t", "3", "-ac", "1", "-ar", "24000", "-f", "s16le", "-"],
        capture_output=True,
        check=True,
    ).stdout
    samples = np.frombuffer(pcm, dtype=np.int16).astype(float)
    spectrum = np.abs(np.fft.rfft(samples))
    return float(np.fft.rfftfreq(len(samples), 1 / 24000)[int(np.argmax(spectrum[1:])) + 1])


def test_two_voices_of_one_book_keep_two_books_and_the_same_convert_again_resumes(managed_home) -> None:
    from omni_web.assemble import probe_tags

    _paths, env, log = managed_home
    book = str(DATA_DIR / "hefty-water.epub")

    def convert(voice: str) -> tuple[Path, str]:
        done = subprocess.run(
            cli(book, "--model", MODEL, "--voice", voice),
            cwd=REPO_ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert done.returncode == 0, done.stderr
        return Path(done.stdout.split("Audiobook: ")[1].splitlines()[0]), done.stdout

    vivian, _ = convert("vivian")
    vivian_bytes = vivian.read_bytes()
    ryan, _ = convert("ryan")
    # The library layout: one folder per narrator version (a scanner reads a folder as one book).
    assert vivian.parent != ryan.parent and vivian.parent.parent == ryan.parent.parent
    assert vivian.parent.name == "Hefty Water {Vivian - Qwen3-TTS 0.6B CustomVoice}", vivian
    assert ryan.parent.name == "Hefty Water {Ryan - Qwen3-TTS 0.6B CustomVoice}", ryan
    assert vivian.name == ryan.name == "Hefty Water.m4b"
    assert vivian.read_bytes() == vivian_bytes, "the second voice's run wrote over the first book"
    assert "Vivian" in probe_tags(vivian)["composer"] and "Ryan" in probe_tags(ryan)["composer"]
    assert abs(_dominant_hz(vivian) - _dominant_hz(ryan)) > 5, "both books hold the same voice's audio"

    requests_before = len(log.read_text().splitlines())
    again, stdout = convert("vivian")
    assert again == vivian and "0 chunks rendered" in stdout, stdout
    assert len(log.read_text().splitlines()) == requests_before, "the identical run sent requests"
    assert [p.name for p in vivian.parent.glob("*.m4b")] == [vivian.name]
