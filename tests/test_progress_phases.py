"""Every phase of a conversion reports its own count and ETA, and a resumed run starts from what is
already made (chunks counted, finished chapters still "ready"), against the fake sgl-omni."""

from __future__ import annotations

from omni_web.client import VoiceChoice
from omni_web.paths import DataPaths
from omni_web.pipeline import PhaseProgress, PhaseState
from omni_web.settings import Settings
from tests.test_pipeline import FAST, convert


def _phase(doc: dict, name: str) -> dict:
    return next(row for row in doc["phases"] if row["name"] == name)


def test_each_phase_has_its_own_progress(data_paths: DataPaths, fake_server) -> None:
    server = fake_server("qwen3_tts_0_6b_customvoice", env=FAST)
    settings = Settings(also_mp3_chapters=True)
    result, docs = convert(data_paths, server, "hefty-water.epub", voice=VoiceChoice.speaker("Vivian"),
                           settings=settings)
    assert [row["name"] for row in docs[0]["phases"]] == ["rendering", "chapters", "book", "mp3"]
    last = docs[-1]
    assert all(row["state"] == PhaseState.DONE for row in last["phases"]), last["phases"]
    assert _phase(last, "rendering")["done"] == last["chunks_total"]
    assert _phase(last, "chapters")["done"] == len(result.chapters) == 4
    assert _phase(last, "book") == {**_phase(last, "book"), "done": 100, "total": 100, "unit": "%"}
    # The book file's phase moved on its own while the rendering one was already full.
    encoding = [d for d in docs if _phase(d, "rendering")["state"] == PhaseState.DONE
                and _phase(d, "book")["state"] != PhaseState.PENDING]
    assert encoding and any(_phase(d, "book")["state"] == PhaseState.DONE for d in encoding)
    assert last["words"] > 0


def test_a_resumed_run_starts_from_what_is_done(data_paths: DataPaths, fake_server) -> None:
    server = fake_server("qwen3_tts_0_6b_customvoice", env=FAST)
    first, _ = convert(data_paths, server, "hefty-water.epub", voice=VoiceChoice.speaker("Vivian"), chapters=(2, 3))
    _, docs = convert(data_paths, server, "hefty-water.epub", voice=VoiceChoice.speaker("Vivian"), chapters=(2, 3))
    opening = docs[0]
    assert opening["chunks_done"] == opening["chunks_total"] == opening["chunks_cached"] > 0
    # The first snapshot already shows the finished chapters ready, with their files and lengths,
    # and the chapters phase counts them; no chapter ever goes back from "ready".
    assert [c["state"] for c in opening["chapters"]] == ["ready", "ready"]
    assert [c["audio_path"] for c in opening["chapters"]] == [str(c.path) for c in first.chapters]
    assert all(c["duration_s"] > 0 for c in opening["chapters"])
    assert _phase(opening, "chapters")["done"] == 2 and opening["chapters_mastered"] == 2
    assert all(c["state"] == "ready" for doc in docs for c in doc["chapters"])
    assert docs[-1]["chapters_mastered"] == 2  # confirmed again by the finisher, not counted twice
    assert docs[-1]["chunks_cached"] == opening["chunks_total"]
    assert [str(c.path) for c in first.chapters] == [c["audio_path"] for c in docs[-1]["chapters"]]


def test_phase_eta_comes_from_its_own_rate() -> None:
    phase = PhaseProgress(name="chapters", total=10)
    started = phase.advanced(2, now=100.0, baseline=2)  # two found done: no rate yet
    assert started.state == PhaseState.ACTIVE and started.eta_s is None and started.started_at == 100.0
    later = started.advanced(4, now=110.0, baseline=2)  # 2 more in 10 s: 6 left = 30 s
    assert later.eta_s == 30.0
    assert later.advanced(10, now=130.0, baseline=2).state == PhaseState.DONE
