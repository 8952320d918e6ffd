"""The QA pass keeps the chosen take's word times for the read-along pass (issue 16 on issue 10).

With read-along on, QA hears each take with word timestamps; only the take that goes into the book
keeps its words (with the SHA-256 of its audio), so a retake, a regeneration or a take that lost
never leaves its words on the chunk. Records without words load and save as before.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from omni_web.qa import AsrPool, ChunkQa, ChunkRecord, Heard, QaLevel, QaOptions, QaStore, Verdict
from tests.test_qa import TEXT, _Item, _Server


class _ScriptedRecogniser:
    """Hears what it is told, call by call; each word gets times from the call's own clock."""

    name = "scripted"

    def __init__(self, heard: list[str]) -> None:
        self.heard = list(heard)
        self.calls: list[bool] = []  # word_times of each call

    def covers(self, language: str | None) -> bool:
        return True

    def _next(self) -> str:
        return self.heard.pop(0) if self.heard else TEXT

    def transcribe(self, wav: bytes, language: str | None) -> str:
        self.calls.append(False)
        return self._next()

    def transcribe_words(self, wav: bytes, language: str | None) -> Heard:
        self.calls.append(True)
        text = self._next()
        offset = 0.01 * len(self.calls)  # tells one call's words from another's
        words = tuple((w, round(offset + 0.3 * i, 3), round(offset + 0.3 * i + 0.25, 3))
                      for i, w in enumerate(text.split()))
        return Heard(text, words)


@contextmanager
def _qa(tmp_path: Path, recogniser: _ScriptedRecogniser, *, word_times: bool) -> Iterator[ChunkQa]:
    pool = AsrPool(lambda: recogniser)
    try:
        yield ChunkQa(QaOptions(level=QaLevel.ASR, word_times=word_times), store=QaStore(tmp_path),
                      request_take=_Server([]), model_key="m", voice_label="v", language="English",
                      accepts_seed=True, request_slots=1, asr_pool=pool)
    finally:
        pool.close()


def test_only_the_chosen_take_keeps_its_words_with_the_hash_of_its_audio(tmp_path: Path) -> None:
    garbled = " ".join(reversed(TEXT.split()))  # take 1 is heard shuffled: it fails and is retaken
    recogniser = _ScriptedRecogniser([garbled, TEXT])
    with _qa(tmp_path, recogniser, word_times=True) as qa:
        audio = qa.take(_Item("w1"))
        record = QaStore(tmp_path).load("w1")
        assert record is not None and record.verdict is Verdict.RETAKEN and record.chosen == 2
        assert recogniser.calls == [True, True]
        first, second = record.takes
        assert first.words is None and first.audio_sha256 == "" and first.failures
        assert second.audio_sha256 == hashlib.sha256(audio).hexdigest()
        assert [w[0] for w in second.words] == TEXT.split()
        assert second.words[0][1] == 0.02  # the second call's words, not the first's

        # A regeneration (review: the audio file is removed, the record stays): the new chosen
        # take carries the new words and the old chosen take gives its words up.
        qa.take(_Item("w1"))
        again = QaStore(tmp_path).load("w1")
        assert again.chosen == 3 and [t.words is not None for t in again.takes] == [False, False, True]
        assert again.chosen_take.words[0][1] == 0.03


def test_without_read_along_takes_are_heard_text_only_and_records_keep_their_old_form(tmp_path: Path) -> None:
    recogniser = _ScriptedRecogniser([])
    with _qa(tmp_path, recogniser, word_times=False) as qa:
        qa.take(_Item("w2"))
    assert recogniser.calls == [False]
    stored = json.loads(QaStore(tmp_path).path("w2").read_text(encoding="utf-8"))
    assert "words" not in stored["takes"][0] and "audio_sha256" not in stored["takes"][0]
    # A record written before word times existed loads as it was.
    old = {
        "key": "w0",
        "text": TEXT,
        "level": "asr",
        "verdict": "passed",
        "chosen": 1,
        "takes": [
            {
                "number": 1,
                "seed": None,
                "finish_reason": "stop",
                "duration_s": 9.1,
                "expected_s": 9.0,
                "duration_ratio": 1.01,
                "silence_share": 0.1,
                "longest_internal_silence_s": 0.2,
                "clipped_share": 0.0,
                "failures": [],
                "wer": 0.0,
                "word_recall": 1.0,
                "transcript": TEXT,
            }
        ],
    }
    record = ChunkRecord.from_dict(old)
    assert record.chosen_take.words is None and record.chosen_take.transcript == TEXT
    assert ChunkRecord.from_dict(record.to_dict()) == record


def test_word_times_survive_a_round_trip_through_the_record(tmp_path: Path) -> None:
    recogniser = _ScriptedRecogniser([])
    with _qa(tmp_path, recogniser, word_times=True) as qa:
        qa.take(_Item("w3"))
    store = QaStore(tmp_path)
    record = store.load("w3")
    assert (
        record.chosen_take.words and ChunkRecord.from_dict(json.loads(store.path("w3").read_text())) == record
    )
