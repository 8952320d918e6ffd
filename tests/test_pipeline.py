"""The whole conversion against the fake sgl-omni: every fixture EPUB to an m4b, read back with ffprobe."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from omni_web.assemble import probe_chapters, probe_duration_ms, probe_streams, probe_tags
from omni_web.book import load_book
from omni_web.catalog import get_entry
from omni_web.cli.convert import ask_higgs_window
from omni_web.client import SpeechClient, VoiceChoice
from omni_web.errors import ChapterSelectionError, ChunkFailed, JobCancelled, UnknownVoice
from omni_web.paths import DataPaths
from omni_web.pipeline import (
    ConvertRequest,
    chunk_size_conflict,
    parse_chapter_spec,
    plan_conversion,
    run_conversion,
)
from omni_web.render import RetryPolicy
from omni_web.settings import Settings
from tests.conftest import DATA_DIR

pytestmark = pytest.mark.slow  # real ffprobe

FIXTURES = sorted(p.name for p in DATA_DIR.glob("*.epub"))
FAST = {"FAKE_SGL_SECONDS_PER_WORD": "0.004"}
# 0.004 s a word is no speech: QA (tested in test_qa_pipeline.py) would rightly retake every chunk.
NO_QA = Settings(qa_level="off")


def convert(data_paths: DataPaths, server, book: str, **kwargs):
    settings = kwargs.pop("settings", NO_QA)
    client_kwargs = kwargs.pop("client_kwargs", {})
    retry = kwargs.pop("retry", RetryPolicy())
    docs: list[dict] = []
    request = ConvertRequest(
        book_path=DATA_DIR / book, model_key=kwargs.pop("model", "qwen3_tts_0_6b_customvoice"), **kwargs
    )
    with SpeechClient(server.base_url, **client_kwargs) as client:
        result = run_conversion(
            request,
            paths=data_paths,
            settings=settings,
            client=client,
            retry=retry,
            progress=lambda d: docs.append(json.loads(json.dumps(d.to_dict()))),
        )
    return result, docs


@pytest.mark.parametrize("book", FIXTURES)
def test_every_fixture_becomes_an_m4b_with_real_chapters(
    data_paths: DataPaths, fake_server, book: str
) -> None:
    server = fake_server("qwen3_tts_0_6b_customvoice", env=FAST)
    settings = Settings(pause_between_chapters_ms=1000, qa_level="off")
    result, docs = convert(data_paths, server, book, voice=VoiceChoice.speaker("Vivian"), settings=settings)
    parsed = load_book(DATA_DIR / book)
    expected = [c for c in parsed.chapters if c.selected_by_default and c.has_text]
    marks = probe_chapters(result.m4b)
    assert [m.title for m in marks] == [c.title for c in expected]
    # The m4b is joined from the final chapter files (each ends with the 1 s chapter pause as room
    # tone); its marks match those files, read back with ffprobe, within 50 ms each and overall.
    file_ms = [probe_duration_ms(audio.path) for audio in result.chapters]
    for mark, audio, measured in zip(marks, result.chapters, file_ms, strict=True):
        assert abs(mark.duration_ms - measured) <= 50, (mark, audio, measured)
        assert measured > 1000
    total_ms = probe_duration_ms(result.m4b)
    assert abs(total_ms - sum(file_ms)) <= 50 * len(marks)
    assert abs(marks[-1].end_ms - total_ms) <= 50
    tags = probe_tags(result.m4b)
    assert tags.get("title") == (parsed.metadata.title or (DATA_DIR / book).stem)
    assert "Vivian - Qwen3-TTS 0.6B CustomVoice" in json.dumps(tags, ensure_ascii=False)
    assert tags.get("genre") == "Audiobook"
    if parsed.cover is not None:
        assert any(s.codec_type == "video" for s in probe_streams(result.m4b))
    # Every chapter was playable before the book was done.
    assert docs[-1]["phase"] == "done"
    first_ready = next(i for i, d in enumerate(docs) if any(c["state"] == "ready" for c in d["chapters"]))
    assert first_ready < len(docs) - 1
    assert all(Path(c["audio_path"]).is_file() for c in docs[-1]["chapters"])


def test_mp3_chapters_and_a_rerun_reuses_everything(
    data_paths: DataPaths, fake_server, tmp_path: Path
) -> None:
    log = tmp_path / "requests.jsonl"
    server = fake_server("voxtral_tts", env={**FAST, "FAKE_SGL_REQUEST_LOG": str(log)})
    kwargs = dict(
        model="voxtral_tts", voice=VoiceChoice.preset("Casual_Male"), chapters=(2, 3), also_mp3_chapters=True
    )
    result, _ = convert(data_paths, server, "wasteland.epub", **kwargs)
    requests = [json.loads(line) for line in log.read_text().splitlines()]
    assert {tuple(sorted(r)) for r in requests} <= {
        ("input", "response_format", "voice"),
        ("input", "max_new_tokens", "response_format", "voice"),
    }
    assert all(r["voice"] == "casual_male" for r in requests)
    mp3s = sorted(result.mp3_dir.glob("*.mp3"))
    assert len(mp3s) == 2 and mp3s[0].name.startswith("01 - ")
    # The library layout: the MP3 set in its own tree, the same relative path as the book's folder.
    root = Settings().output_path(data_paths)
    assert result.mp3_dir.relative_to(root / "mp3") == result.m4b.parent.relative_to(root)
    assert result.mp3_dir.relative_to(root).parts == (
        "mp3",
        "T.S. Eliot",
        "The Waste Land {casual male - Voxtral TTS 4B}",
    )
    again, _ = convert(data_paths, server, "wasteland.epub", **kwargs)
    assert len(log.read_text().splitlines()) == len(requests)  # not one request more
    assert again.chunks_cached == again.chunks_total and again.m4b == result.m4b


def test_unknown_voice_is_refused_before_any_speech(
    data_paths: DataPaths, fake_server, tmp_path: Path
) -> None:
    log = tmp_path / "requests.jsonl"
    server = fake_server("qwen3_tts_0_6b_customvoice", env={"FAKE_SGL_REQUEST_LOG": str(log)})
    with pytest.raises(UnknownVoice, match="Vivian"):
        convert(data_paths, server, "hefty-water.epub", voice=VoiceChoice.speaker("Nobody"))
    assert not log.exists() or not log.read_text()


def test_failing_chunk_stops_the_job_naming_it(data_paths: DataPaths, fake_server) -> None:
    server = fake_server("qwen3_tts_0_6b_customvoice", env={**FAST, "FAKE_SGL_CRASH_AFTER_REQUESTS": "3"})
    with pytest.raises(ChunkFailed) as info:
        convert(
            data_paths,
            server,
            "hefty-water.epub",
            voice=VoiceChoice.speaker("Vivian"),
            concurrency=1,
            client_kwargs={"backoff_s": 0.01, "connect_retries": 2},
            retry=RetryPolicy(attempts=2, backoff_s=0.01),
        )
    assert "Chunk" in str(info.value) and "chapter" in str(info.value)
    assert len(list(data_paths.chunk_cache_dir.glob("*.wav"))) == 3  # kept for a resume


def test_cancel_keeps_finished_chunks(data_paths: DataPaths, fake_server) -> None:
    server = fake_server("qwen3_tts_0_6b_customvoice", env={**FAST, "FAKE_SGL_LATENCY_S": "0.05"})
    request = ConvertRequest(
        book_path=DATA_DIR / "wasteland.epub",
        model_key="qwen3_tts_0_6b_customvoice",
        voice=VoiceChoice.speaker("Vivian"),
        concurrency=2,
    )
    seen = {"n": 0}

    def progress(doc) -> None:
        seen["n"] = doc.chunks_done

    with SpeechClient(server.base_url) as client, pytest.raises(JobCancelled):
        run_conversion(
            request,
            paths=data_paths,
            settings=Settings(),
            client=client,
            progress=progress,
            cancelled=lambda: seen["n"] >= 4,
        )
    assert len(list(data_paths.chunk_cache_dir.glob("*.wav"))) >= 4


def test_clone_reference_changes_every_chunk_key(data_paths: DataPaths, tmp_path: Path) -> None:
    book = load_book(DATA_DIR / "hefty-water.epub")
    entry = get_entry("qwen3_tts_0_6b_base")
    clip_a, clip_b = tmp_path / "a.wav", tmp_path / "b.wav"
    clip_a.write_bytes(b"RIFF-a")
    clip_b.write_bytes(b"RIFF-b")

    def keys(clip: Path, text: str | None) -> set[str]:
        request = ConvertRequest(
            book_path=DATA_DIR / "hefty-water.epub", model_key=entry.key, voice=VoiceChoice.clone(clip, text)
        )
        return {i.key for i in plan_conversion(book, request, entry, Settings()).items}

    assert keys(clip_a, "hello").isdisjoint(keys(clip_b, "hello"))
    assert keys(clip_a, "hello").isdisjoint(keys(clip_a, None))
    assert keys(clip_a, "hello") == keys(clip_a, "hello")


def test_higgs_window() -> None:
    higgs = get_entry("higgs_audio_v3_tts")
    assert chunk_size_conflict(higgs, 120) == 80 and chunk_size_conflict(higgs, 80) is None
    assert chunk_size_conflict(get_entry("qwen3_tts_0_6b_base"), 500) is None
    out = io.StringIO()
    assert ask_higgs_window(higgs, 120, stdin=io.StringIO(""), stdout=out) == (
        80,
        False,
    )  # not a console: clamp
    assert "No console" in out.getvalue()

    class Console(io.StringIO):
        def isatty(self) -> bool:
            return True

    assert ask_higgs_window(higgs, 120, stdin=Console("t\n"), stdout=io.StringIO()) == (120, True)
    assert ask_higgs_window(higgs, 120, stdin=Console("\n"), stdout=io.StringIO()) == (80, False)
    with pytest.raises(JobCancelled, match="Cancelled"):
        ask_higgs_window(higgs, 120, stdin=Console("c\n"), stdout=io.StringIO())


def test_chapter_spec() -> None:
    assert parse_chapter_spec("1-3,5,3") == (1, 2, 3, 5)
    with pytest.raises(ChapterSelectionError):
        parse_chapter_spec("3-1")


def test_keeping_a_chunk_size_over_the_cap_is_honoured() -> None:
    higgs = get_entry("higgs_audio_v3_tts")
    book = load_book(DATA_DIR / "pg11-alice.epub")

    def longest(keep: bool) -> int:
        request = ConvertRequest(
            book_path=DATA_DIR / "pg11-alice.epub",
            model_key=higgs.key,
            chunk_words=120,
            keep_over_cap=keep,
            chapters=(6,),
        )
        return max(len(i.text.split()) for i in plan_conversion(book, request, higgs, Settings()).items)

    assert longest(False) <= 80 < longest(True) <= 120 + 10
    request = ConvertRequest(book_path=Path("b.epub"), model_key=higgs.key, keep_over_cap=True)
    assert ConvertRequest.from_dict(request.to_dict()).keep_over_cap


class FakeManager:
    def __init__(self, *, alive: bool, stop_requested: bool = False) -> None:
        self.alive = alive
        self.stop_requested = stop_requested
        self.restarts = 0

    def is_alive(self) -> bool:
        return self.alive

    def restart(self, *, unless_stopped: bool = False) -> None:
        assert unless_stopped  # a crash restart must never undo a Stop
        if self.stop_requested:  # what the real manager checks under its lock
            from omni_web.errors import ServerNotRunning
            from omni_web.server.serving import STOPPED_MID_JOB

            raise ServerNotRunning(STOPPED_MID_JOB)
        self.restarts += 1
        self.alive = True


def test_recover_restarts_only_a_dead_server_of_ours() -> None:
    from omni_web.errors import ServerNotRunning, ServerUnreachable
    from omni_web.render import Recovery
    from omni_web.server import Endpoint
    from omni_web.server.serving import SingleServing

    ours = Endpoint(base_url="http://127.0.0.1:1", model_key="m", model_id="m", owned=True)
    dead = FakeManager(alive=False)
    recover = SingleServing(dead, ours).recover  # type: ignore[arg-type]
    assert recover(ServerUnreachable("refused")) is Recovery.RESTARTED and dead.restarts == 1
    assert recover(ServerUnreachable("refused")) is Recovery.ALIVE and dead.restarts == 1  # alive: no restart
    # No fixed cap here: the renderer counts crashes against finished chunks.
    crashing = FakeManager(alive=False)
    crash_recover = SingleServing(crashing, ours).recover  # type: ignore[arg-type]
    for _ in range(10):
        crashing.alive = False
        assert crash_recover(ServerUnreachable("x")) is Recovery.RESTARTED
    assert crashing.restarts == 10
    with pytest.raises(ServerNotRunning, match="stopped while the job"):
        SingleServing(FakeManager(alive=False, stop_requested=True), ours).recover(ServerUnreachable("x"))  # type: ignore[arg-type]
