"""The alignment checks on fixed transcripts: what tiny.en heard in takes flite (voice slt) spoke of
one 110-word Alice chunk, clean and with the fake server's faults (8 words left out, 8 words said
twice, 8 words of babble appended), written down by ``bench/measure_qa_faults.py``."""

from __future__ import annotations

import json

import pytest

from omni_web.qa.alignment import align_transcript, text_words
from omni_web.qa.detectors import find_faults
from omni_web.qa.findings import FindingKind
from omni_web.qa.judge import with_transcript
from omni_web.qa.records import TakeRecord
from omni_web.qa.thresholds import DEFAULT_THRESHOLDS
from omni_web.qa.wer import score_transcript
from tests.conftest import DATA_DIR

TAKES = json.loads((DATA_DIR / "qa_flite_tiny_en_takes.json").read_text(encoding="utf-8"))
TEXT = TAKES["text"]


def _findings(transcript: str, text: str = TEXT, **kwargs):
    return find_faults(align_transcript(text, transcript), DEFAULT_THRESHOLDS, **kwargs)


def test_a_clean_take_with_scattered_mishearings_passes() -> None:
    # tiny.en wrote "white natural", "waistboat", "fort", "popped" here: scattered, one word each.
    found = _findings(TAKES["clean"])
    assert found.failures == () and found.notes == ()


def test_eight_words_left_out_are_one_gap_quoted_in_the_verdict() -> None:
    found = _findings(TAKES["gap"])
    assert len(found.failures) == 1, found.failures
    gap = found.failures[0]
    assert gap.message == "8 words not heard: 'hurried on alice started to her feet for'"
    assert gap.kind is FindingKind.GAP and gap.words == "hurried on alice started to her feet for"
    assert gap.figures == {"words": 8}


def test_eight_words_said_twice_are_a_repeat() -> None:
    found = _findings(TAKES["repeat"])
    assert [f.kind for f in found.failures] == [FindingKind.REPEAT], found.failures
    assert (
        "said twice" in found.failures[0].message and "alice started to her feet" in found.failures[0].words
    )


def test_babble_after_the_text_is_extra_tail() -> None:
    found = _findings(TAKES["babble"])
    assert [(f.kind, f.message) for f in found.failures] == [
        (
            FindingKind.BABBLE,
            "8 words heard after the text ends (babble): 'and then the little voice went on about'",
        )
    ]


def test_words_before_the_text_are_extra_head() -> None:
    found = _findings("Thank you for listening to this book today. " + TAKES["clean"])
    assert [f.kind for f in found.failures] == [FindingKind.BEFORE]
    assert found.failures[0].message.startswith("8 words heard before the text starts")


def test_words_not_in_the_text_inside_it_are_reported() -> None:
    inserted = TAKES["clean"].replace(
        "Alice started", "and the price of bread in the market town rose again Alice started"
    )
    found = _findings(inserted)
    assert [f.kind for f in found.failures] == [FindingKind.INSERTED], found.failures
    assert "the text does not have" in found.failures[0].message


def test_a_gap_at_the_end_says_so() -> None:
    cut = TAKES["clean"].rsplit(" ", 9)[0]  # the last 9 words unheard
    found = _findings(cut)
    assert [f.kind for f in found.failures] == [FindingKind.GAP]
    assert found.failures[0].message.startswith("9 words not heard at the end: 'pop down a large")


def test_short_texts_skip_the_gap_and_repeat_checks_with_a_note_but_keep_babble() -> None:
    text = "CHAPTER I. Down the Rabbit-Hole"
    assert _findings("Chapter 1. Down the rabbit hole.", text).failures == ()
    found = _findings("Chapter one.", text)
    assert found.failures == () and "gap and repeat checks skipped: 6 words" in found.notes[0]
    babble = _findings("Chapter 1, Down the rabbit hole and then the little voice went on about.", text)
    assert babble.failures and babble.failures[0].kind is FindingKind.BABBLE


def test_a_misheard_name_is_a_notice_not_a_failure() -> None:
    text = "Alice thought that Dinah would miss her very much tonight, and she said so to the White Rabbit."
    found = _findings(
        "Alice thought that Diana would miss her very much tonight, and she said so to the White Rabbit.",
        text,
        names={"dinah", "alice"},
    )
    assert found.failures == ()
    assert [(n.kind, n.message) for n in found.notices] == [
        (
            FindingKind.NAME,
            "the name 'dinah' was heard as 'diana': check it (a lexicon entry fixes a misread name)",
        )
    ]
    assert _findings(text, text, names={"dinah"}).notices == ()


def test_text_words_keep_the_token_each_word_came_from() -> None:
    words = text_words("Chapter 3. It cost 21 pounds, didn't it?")
    assert words.words == ("chapter", "three", "it", "cost", "twenty", "one", "pounds", "did", "not", "it")
    # Tokens are the spoken form the review marks ("21" is sent as "twenty-one").
    assert [words.tokens[i] for i in words.token_of][4:6] == ["twenty-one", "twenty-one"]


@pytest.mark.parametrize("fault", ["gap", "repeat", "babble"])
def test_findings_join_the_takes_failures(fault: str) -> None:
    take = TakeRecord(
        number=1,
        seed=None,
        finish_reason="stop",
        duration_s=40.0,
        expected_s=40.0,
        duration_ratio=1.0,
        silence_share=0.2,
        longest_internal_silence_s=0.5,
        clipped_share=0.0,
    )
    transcript = TAKES[fault]
    judged = with_transcript(
        take, transcript, score_transcript(TEXT, transcript), DEFAULT_THRESHOLDS, _findings(transcript)
    )
    assert not judged.passed and judged.transcript == transcript
    assert TakeRecord.from_dict(judged.to_dict()).to_dict() == judged.to_dict()
    assert TakeRecord.from_dict(judged.to_dict()).failures == judged.failures
    assert FindingKind(fault) in judged.kinds


def test_a_take_stored_before_kinds_were_kept_loads_its_sentences() -> None:
    stored = {
        "number": 1,
        "seed": None,
        "finish_reason": "stop",
        "duration_s": 1.0,
        "expected_s": 3.0,
        "duration_ratio": 0.33,
        "silence_share": 0.1,
        "longest_internal_silence_s": 0.2,
        "clipped_share": 0.0,
        "failures": ["the audio is 0.33 of the expected length: cut off or words skipped"],
        "notices": ["the name 'dinah' was heard as 'diana': check it"],
    }
    take = TakeRecord.from_dict(stored)
    assert take.kinds == {FindingKind.OTHER} and take.reasons == stored["failures"][0]
    assert take.notices[0].message == stored["notices"][0] and not take.passed


def test_the_review_marks_the_missing_repeated_and_extra_words_in_the_text() -> None:
    from omni_web.qa.marks import mark_text, marks_plain
    from omni_web.ui.review import marks_html

    assert not any(m.kind for m in mark_text(TEXT, TAKES["clean"]))
    gap = mark_text(TEXT, TAKES["gap"])
    assert [m.text for m in gap if m.kind] == ["hurried on, Alice started to her feet, for"]
    assert [m.kind for m in gap if m.kind] == ["missing"]
    assert "and then [-hurried on, Alice started to her feet, for-] it flashed" in marks_plain(gap)
    assert "<del" in marks_html(gap) and "hurried on, Alice started to her feet, for</del>" in marks_html(gap)
    repeat = mark_text(TEXT, TAKES["repeat"])
    assert [m.kind for m in repeat if m.kind] == ["repeated"] and "Alice started" in next(
        m.text for m in repeat if m.kind
    )
    babble = mark_text(TEXT, TAKES["babble"])
    assert babble[-1].kind == "extra" and babble[-1].text == "and then the little voice went on about"
    assert (
        marks_html(mark_text("Tom & <Jerry> ran off to the big old town on the hill by the sea today.", None))
        == "Tom &amp; &lt;Jerry&gt; ran off to the big old town on the hill by the sea today."
    )
