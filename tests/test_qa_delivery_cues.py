"""A delivery cue read aloud is a fault: flite slt says a line with its tag ("whispering. Come here…")
or its instructions sentence, the real tiny.en hears it, QA retakes it and keeps the clean take;
the same words in the book's own text are no fault."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from omni_web.client import VoiceChoice
from omni_web.qa import (
    AsrPool,
    ChunkQa,
    Finding,
    FindingKind,
    QaLevel,
    QaOptions,
    QaStore,
    TakeAudio,
    Verdict,
)
from omni_web.qa.cues import cue_failures
from tests.fakes.fake_sgl_omni_faults import flite_pcm
from tests.test_qa_short_lines import RATE, _Heard, _wav

pytestmark = [pytest.mark.slow,  # flite and faster-whisper
              pytest.mark.skipif(shutil.which("flite") is None, reason="needs flite (apt-get install flite)")]

LINE = "Come here at once, before they see us in the dark."
CASES = [  # model, delivery, what a model that leaks its cue says
    ("fish_s2_pro", "whispered", "Whispering. " + LINE),
    ("higgs_audio_v3_tts", "shouted", "Style shouting. " + LINE),
    ("qwen3_tts_0_6b_customvoice", "whispered", "Whisper the line, soft and breathy. " + LINE),
]


@pytest.fixture(scope="module")
def heard() -> _Heard:
    return _Heard()


class _Item:
    def __init__(self, key: str, text: str, delivery: str | None) -> None:
        self.key, self.text = key, text
        self.voice = VoiceChoice.speaker("Ryan").with_delivery(delivery)


@pytest.mark.parametrize(("model", "delivery", "leaked"), CASES, ids=[c[0] for c in CASES])
def test_a_cue_read_aloud_is_retaken_and_the_clean_take_kept(tmp_path: Path, heard: _Heard, model: str,
                                                             delivery: str, leaked: str) -> None:
    takes = [_wav(flite_pcm(leaked, rate=RATE, channels=1)), _wav(flite_pcm(LINE, rate=RATE, channels=1))]
    pool = AsrPool(lambda: heard)
    store = QaStore(tmp_path)
    qa = ChunkQa(
        QaOptions(level=QaLevel.ASR),
        store=store,
        request_take=lambda item, seed, budget: TakeAudio(takes.pop(0), "stop"),
        model_key=model,
        voice_label="v",
        language="English",
        accepts_seed=True,
        request_slots=1,
        asr_pool=pool,
    )
    try:
        qa.take(_Item("k1", LINE, delivery))
    finally:
        pool.close()
    record = store.load("k1")
    assert record.verdict is Verdict.RETAKEN and record.chosen == 2, record.takes
    assert any(f.kind is FindingKind.CUE for f in record.takes[0].failures), record.takes[0]
    assert any("delivery cue was read aloud" in f.message for f in record.takes[0].failures)
    assert not any(f.kind is FindingKind.CUE for f in record.takes[1].failures)


def test_the_books_own_word_is_no_fault_and_a_plain_line_has_no_cue() -> None:
    text = "“I am whispering,” she whispered."
    assert (
        cue_failures("fish_s2_pro", "whispered", text=text, transcript="I am whispering, she whispered.")
        == []
    )
    assert cue_failures("fish_s2_pro", None, text="Go.", transcript="whispering go") == []
    assert (
        cue_failures("voxtral_tts", "whispered", text="Go.", transcript="whispering go") == []
    )  # no control
    assert cue_failures("fish_s2_pro", "whispered", text="Go.", transcript="Whispering, go.") == [
        Finding(FindingKind.CUE, "the delivery cue was read aloud (whispering)", words="whispering")
    ]
