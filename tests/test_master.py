"""Mastering (issue 12): levels read back from the written files with ffmpeg's ebur128 and astats."""

from __future__ import annotations

import json
import math
import subprocess
import wave
from pathlib import Path

import numpy as np
import pytest

from omni_web.assemble import AudioFormat, probe_chapters, probe_duration_ms, probe_streams
from omni_web.client import SpeechClient, VoiceChoice
from omni_web.errors import SettingsError
from omni_web.master import PRESET_NAMES, ChapterSpec, MasterOptions, get_preset, master_chapter, measure_file
from omni_web.master.acx import _split_points
from omni_web.master.leveling import leveling_gain_db, speech_level_db
from omni_web.master.loudnorm import linear_gain_fits, normalize_filter, parse_loudnorm_json
from omni_web.paths import DataPaths
from omni_web.pipeline import ConvertRequest, run_conversion
from omni_web.settings import Settings
from tests.conftest import DATA_DIR
from tests.fakes.fake_sgl_omni_audio import wav_bytes
from tests.levels import block_rms_db, digital_silence_spans, ebur128, overall_rms_db

pytestmark = pytest.mark.slow  # subprocesses, real ffmpeg, real ffprobe

UNEVEN = {"FAKE_SGL_SECONDS_PER_WORD": "0.1", "FAKE_SGL_LEVEL_SPREAD_DB": "16"}
MODEL = "qwen3_tts_0_6b_customvoice"


def convert(data_paths: DataPaths, server, book: str, **kwargs):
    settings = kwargs.pop("settings", Settings())
    docs: list[dict] = []
    request = ConvertRequest(
        book_path=DATA_DIR / book, model_key=MODEL, voice=VoiceChoice.speaker("Vivian"), **kwargs
    )
    with SpeechClient(server.base_url) as client:
        result = run_conversion(request, paths=data_paths, settings=settings, client=client,
                                progress=lambda d: docs.append(d.to_dict()))
    return result, docs


def write_wav(path: Path, samples: np.ndarray, rate: int = 24000) -> Path:
    path.write_bytes(
        wav_bytes((np.clip(samples, -1, 1) * 32767).astype("<i2").tobytes(), rate=rate, channels=1)
    )
    return path


def speechy(seconds: float, *, peak: float, pitch: float = 140.0, rate: int = 24000) -> np.ndarray:
    t = np.arange(int(seconds * rate)) / rate
    envelope = np.abs(np.sin(2 * np.pi * 2.3 * t)) ** 1.5
    tone = (
        0.6 * np.sin(2 * np.pi * pitch * t)
        + 0.3 * np.sin(2 * np.pi * 3 * pitch * t)
        + 0.1 * np.sin(2 * np.pi * 7 * pitch * t)
    )
    return peak * envelope * tone


# --- presets and pieces ---------------------------------------------------------------------


def test_presets_hold_the_delivery_numbers_and_settings_accept_exactly_them() -> None:
    assert PRESET_NAMES == ("audiobook", "acx", "r128", "podcast", "off")
    book, acx = get_preset("audiobook"), get_preset("ACX")
    assert (book.target_lufs, book.max_true_peak_db, book.rms_range_db) == (-20.0, -3.0, (-23.0, -18.0))
    assert acx.acx and 500 <= acx.head_ms <= 1000 and 1000 <= (acx.tail_ms or 0) <= 5000
    assert (get_preset("r128").target_lufs, get_preset("r128").max_true_peak_db) == (-23.0, -1.0)
    assert (get_preset("podcast").target_lufs, get_preset("podcast").max_true_peak_db) == (-16.0, -1.0)
    assert not get_preset("off").master
    with pytest.raises(SettingsError, match="audiobook, acx, r128, podcast, off"):
        get_preset("loud")
    for name in PRESET_NAMES:
        Settings(loudness=name).validate()
    with pytest.raises(SettingsError, match="loudness"):
        Settings(loudness="loud").validate()


def test_leveling_brings_takes_to_one_level_whatever_their_pauses() -> None:
    quiet = speechy(4, peak=0.05)
    loud = np.concatenate([speechy(4, peak=0.6), np.zeros(48000)])  # same take, louder, long pause
    reference = -24.0
    levels = [speech_level_db(x, 24000) for x in (quiet, loud)]
    gained = [
        x * 10 ** (leveling_gain_db(level, reference) / 20)
        for x, level in zip((quiet, loud), levels, strict=True)
    ]
    after = [speech_level_db(x, 24000) for x in gained]
    assert abs(levels[1] - levels[0] - 20 * math.log10(12)) < 0.5  # 21.6 dB apart before
    assert all(abs(a - reference) < 0.05 for a in after)
    assert speech_level_db(np.zeros(24000), 24000) is None and leveling_gain_db(None, -20) == 0.0


def test_loudnorm_falls_back_to_dynamic_exactly_when_the_rule_says_and_we_predict_it(tmp_path: Path) -> None:
    # A quiet chapter with one loud click: the linear gain to -20 LUFS would push the peak over -3.5.
    signal = speechy(12, peak=0.03)
    signal[120000:120010] = 0.9
    source = write_wav(tmp_path / "peaky.wav", signal)
    graph = "loudnorm=I=-20:TP=-3.5:LRA=20:print_format=json"
    measure = subprocess.run(
        ["ffmpeg", "-hide_banner", "-nostats", "-i", str(source), "-af", graph, "-f", "null", "-"],
        capture_output=True,
        text=True,
        check=True,
    )
    measured = parse_loudnorm_json(measure.stderr)
    assert not linear_gain_fits(measured, target_i=-20, target_tp=-3.5)
    apply = subprocess.run(
        [
            "ffmpeg",
            "-hide_banner",
            "-nostats",
            "-i",
            str(source),
            "-af",
            normalize_filter(measured, target_i=-20, target_tp=-3.5),
            "-f",
            "null",
            "-",
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    assert parse_loudnorm_json(apply.stderr).normalization_type == "dynamic"


def test_a_chapter_that_would_fall_back_is_limited_first_and_normalised_linearly(tmp_path: Path) -> None:
    chunks = tmp_path / "chunks"
    chunks.mkdir()
    keys = []
    for number in range(6):
        signal = speechy(5, peak=0.5, pitch=120 + 15 * number)
        signal[30000 + number : 30008 + number] = 0.98  # clicks the limiter must catch
        write_wav(chunks / f"k{number}.wav", signal)
        keys.append(f"k{number}")
    spec = ChapterSpec(1, "Peaky", tuple(keys), (400,) * 5 + (0,), "001-peaky")
    options = MasterOptions(get_preset("audiobook"), AudioFormat(24000, 1))
    # Leveled 12 dB under the target, so loudnorm's linear gain cannot fit under the peak limit.
    record = master_chapter(
        spec, tmp_path / "out", options, wait_chunk=lambda k: chunks / f"{k}.wav", reference_db=-32.0
    )
    assert record.limited_again
    levels = ebur128(record.m4a)
    assert abs(levels.integrated_lufs + 20) <= 1.0, levels
    assert levels.true_peak_db <= -3.0, levels
    # Timing survives mastering: the file is as long as what was fed, chunks start where recorded.
    assert abs(probe_duration_ms(record.m4a) - record.duration_ms) <= 5
    assert record.chunk_starts_ms[1] == pytest.approx(5000 + 400, abs=0.1)


def test_the_streamed_measurement_is_what_loudnorm_measures_on_real_speech(tmp_path: Path) -> None:
    # espeak-ng sentences at uneven levels (8 dB apart), mastered with every file kept (no
    # first-pass shortcut): pass 1's measurement, taken by ebur128 while the chunks streamed in,
    # plus the constant gain pass 2 applied, is what loudnorm's own measuring run reads from the
    # final lossless master, and the final files sit on the target.
    from tests.voice_clips import espeak, ffmpeg

    sentences = (
        "It was a bright cold day in April.",
        "The clocks were striking thirteen.",
        "Winston Smith slipped quickly through the glass doors.",
        "A gritty wind followed him in.",
    )
    keys = []
    for number, (text, gain) in enumerate(zip(sentences, (0, -8, 4, -4), strict=True)):
        raw = espeak(text, tmp_path / f"raw{number}.wav")
        ffmpeg(
            "-i",
            raw,
            "-af",
            f"volume={gain}dB",
            "-ar",
            "24000",
            "-c:a",
            "pcm_s16le",
            tmp_path / f"k{number}.wav",
        )
        keys.append(f"k{number}")
    spec = ChapterSpec(1, "Speech", tuple(keys), (500,) * 3 + (0,), "001-speech")
    options = MasterOptions(get_preset("audiobook"), AudioFormat(24000, 1), lossless=True)
    # Leveled a little above the target: pass 2's gain is negative, so it is one linear gain.
    record = master_chapter(
        spec, tmp_path / "out", options, wait_chunk=lambda k: tmp_path / f"{k}.wav", reference_db=-16.0
    )
    assert record.second_pass and not record.limited_again and record.flac is not None
    assert record.gain_db < -1.0, record
    done = subprocess.run(
        [
            "ffmpeg",
            "-hide_banner",
            "-nostats",
            "-i",
            str(record.flac),
            "-af",
            "aresample=192000,loudnorm=I=-20:TP=-3.8:LRA=20:print_format=json",
            "-f",
            "null",
            "-",
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    final = parse_loudnorm_json(done.stderr)
    assert abs(record.measured["input_i"] + record.gain_db - final.input_i) <= 0.2, (record.measured, final)
    assert abs(record.measured["input_tp"] + record.gain_db - final.input_tp) <= 0.5, (record.measured, final)
    # Loudness range: loudnorm's own LRA differs from the BS.1770 meter's on a short chapter; the
    # meter reads the same range from the final master (a constant gain moves no LRA).
    assert abs(record.measured["input_lra"] - ebur128(record.flac).lra_lu) <= 0.3, record.measured
    assert abs(final.input_i + 20) <= 0.3 and abs(ebur128(record.m4a).integrated_lufs + 20) <= 1.0


def test_a_chapter_on_target_in_pass_1_keeps_its_first_pass_aac_mp3_and_flac(tmp_path: Path) -> None:
    # ACX writes MP3 and lossless masters too: when pass 1 measures on target they are the final
    # files (nothing is encoded after the last chunk), and they meet the rules read back by ffmpeg.
    chunks = tmp_path / "chunks"
    chunks.mkdir()
    keys = []
    for number, peak in enumerate((0.5, 0.08, 0.3, 0.15, 0.4, 0.2)):
        write_wav(chunks / f"k{number}.wav", speechy(6, peak=peak, pitch=120 + 15 * number))
        keys.append(f"k{number}")
    spec = ChapterSpec(1, "On target", tuple(keys), (400,) * 5 + (0,), "001-on-target")
    options = MasterOptions(get_preset("acx"), AudioFormat(24000, 1), mp3_kbps=192, lossless=True)
    probe = master_chapter(spec, tmp_path / "probe", options, wait_chunk=lambda k: chunks / f"{k}.wav")
    # Aimed where the first run says this voice lands, as the book's calibration does.
    reference = (probe.reference_db or -20.0) + (-20.0 - probe.measured["input_i"])
    record = master_chapter(
        spec, tmp_path / "out", options, wait_chunk=lambda k: chunks / f"{k}.wav", reference_db=reference
    )
    assert not record.second_pass and record.gain_db == 0.0, record
    assert record.mp3 is not None and record.flac is not None
    for path in (record.m4a, record.mp3, record.flac):
        levels = ebur128(path)
        assert abs(levels.integrated_lufs + 20) <= 0.5 and levels.true_peak_db <= -3.0, (path.name, levels)
        assert abs(probe_duration_ms(path) - record.duration_ms) <= 60, path.name
    (audio,) = [s for s in probe_streams(record.mp3) if s.codec_type == "audio"]
    assert (audio.codec_name, audio.sample_rate_hz) == ("mp3", 44100)
    assert b"Info" in record.mp3.read_bytes()[:8192]  # LAME's CBR header


def test_acx_split_points_fall_in_pauses_and_keep_every_part_under_the_limit() -> None:
    from omni_web.master.records import MasteredChapter

    starts = tuple(i * 10_000.0 for i in range(40))  # 40 chunks of 9.4 s + 0.6 s pause = 400 s
    spec = ChapterSpec(1, "Long", tuple(f"k{i}" for i in range(40)), (600,) * 39 + (0,), "001-long")
    record = MasteredChapter(
        1, "Long", True, Path("a"), Path("b"), None, Path("c"), 24000, 1, 400 * 24000, 0, starts, (0.0,) * 40
    )
    cuts = _split_points(spec, record, 150.0)
    bounds = [0.0, *cuts, 400.0]
    assert len(cuts) == 2 and all(b - a <= 150 for a, b in zip(bounds, bounds[1:], strict=False))
    assert all(round((cut + 0.3) % 10, 6) in (0.0, 10.0) for cut in cuts)  # the middle of a pause


# --- the whole book ---------------------------------------------------------------------------


def test_a_book_from_takes_16_db_apart_comes_out_even_at_minus_20_lufs(
    data_paths: DataPaths, fake_server
) -> None:
    server = fake_server(MODEL, env=UNEVEN)
    result, docs = convert(data_paths, server, "wasteland.epub", chapters=(2, 3))
    # The takes really came back uneven (measured on the cached chunk files).
    chunk_levels = [ebur128(p).integrated_lufs for p in sorted(data_paths.chunk_cache_dir.glob("*.wav"))]
    assert len(chunk_levels) >= 10 and max(chunk_levels) - min(chunk_levels) >= 12, chunk_levels
    marks = probe_chapters(result.m4b)
    assert len(marks) == 2
    for mark, chapter in zip(marks, result.chapters, strict=True):
        # Measured from the m4b itself, chapter by chapter.
        levels = ebur128(result.m4b, start_s=mark.start_ms / 1000, end_s=mark.end_ms / 1000)
        assert abs(levels.integrated_lufs + 20) <= 1.0, (mark, levels)
        assert levels.true_peak_db <= -3.0, (mark, levels)
        assert levels.lra_lu <= 8.0, (mark, levels)  # no chunk much louder than its neighbours
        assert -23 <= overall_rms_db(chapter.path) <= -18
        blocks = block_rms_db(chapter.path)
        floor = min(blocks)
        assert -75 <= floor <= -60, floor  # room tone, not digital silence
        assert digital_silence_spans(chapter.path) == 0
        assert abs(mark.duration_ms - probe_duration_ms(chapter.path)) <= 50
    # The delivery report sits next to the book and agrees that every chapter passes.
    report = json.loads(result.levels_path.read_text(encoding="utf-8"))
    assert result.levels_path.name.endswith(".levels.json") and result.levels_path.parent == result.m4b.parent
    assert report["preset"] == "audiobook" and report["passed"], report
    assert [row["number"] for row in report["chapters"]] == [2, 3]
    # Phase progress for the Jobs tab: chapters were mastered one by one, the report came at the end.
    assert [d["chapters_mastered"] for d in docs][-1] == 2 and docs[-1]["levels"]["passed"]
    assert any(row["state"] == "encoding" for d in docs for row in d["chapters"])
    assert not list(Settings().output_path(data_paths).rglob(".live-join.*"))  # the live join cleaned up


def test_acx_delivery_files_pass_every_rule(data_paths: DataPaths, fake_server) -> None:
    server = fake_server(MODEL, env={"FAKE_SGL_SECONDS_PER_WORD": "0.3", "FAKE_SGL_LEVEL_SPREAD_DB": "16"})
    result, _ = convert(data_paths, server, "wasteland.epub", chapters=(2,), loudness="acx")
    files = sorted(result.acx_dir.glob("*.mp3"))
    names = [f.name for f in files]
    assert names[0].startswith("00 - Opening Credits") and any("Closing Credits" in n for n in names)
    sample = next(f for f in files if "Retail Sample" in f.name)
    assert 60 <= probe_duration_ms(sample) / 1000 <= 300
    channels = set()
    for path in files:
        (audio,) = [s for s in probe_streams(path) if s.codec_type == "audio"]
        channels.add(audio.channels)
        info = subprocess.run(
            [
                "ffprobe",
                "-v",
                "error",
                "-show_entries",
                "stream=bit_rate,sample_rate",
                "-of",
                "json",
                str(path),
            ],
            capture_output=True,
            text=True,
            check=True,
        )
        stream = json.loads(info.stdout)["streams"][0]
        assert (audio.codec_name, stream["sample_rate"], stream["bit_rate"]) == ("mp3", "44100", "192000"), (
            path
        )
        assert b"Info" in path.read_bytes()[:8192]  # LAME's CBR header (VBR would say Xing)
        assert probe_duration_ms(path) <= 120 * 60 * 1000
        levels = ebur128(path)
        assert levels.true_peak_db <= -3.0, (path.name, levels)
        assert -23 <= overall_rms_db(path) <= -18, path.name
        blocks = block_rms_db(path, block_s=0.05, rate=44100)
        loud = [i for i, value in enumerate(blocks) if value > -45]
        head_s, tail_s = loud[0] * 0.05, (len(blocks) - loud[-1] - 1) * 0.05
        assert 0.5 <= head_s <= 1.05, (path.name, head_s)
        if "Retail Sample" not in path.name:
            assert 1.0 <= tail_s <= 5.0, (path.name, tail_s)
        floor = min(block_rms_db(path, rate=44100))
        assert -75 <= floor <= -60, (path.name, floor)
    assert len(channels) == 1
    report = json.loads(result.levels_path.read_text(encoding="utf-8"))
    assert report["acx"]["problems"] == [] and all(row["passed"] for row in report["acx"]["files"]), report[
        "acx"
    ]
    # The app's own measurement agrees with ffmpeg's on the sample.
    assert abs(measure_file(sample).integrated_lufs - ebur128(sample).integrated_lufs) < 0.2


def test_a_replaced_chunk_rebuilds_only_its_chapter_and_the_join(
    data_paths: DataPaths, fake_server, tmp_path
) -> None:
    from omni_web.pipeline import rebuild_chapters

    log = tmp_path / "requests.jsonl"
    server = fake_server(MODEL, env={"FAKE_SGL_SECONDS_PER_WORD": "0.02", "FAKE_SGL_REQUEST_LOG": str(log)})
    result, _ = convert(data_paths, server, "wasteland.epub", chapters=(2, 3))
    requests = len(log.read_text().splitlines())
    first, second = result.chapters
    before = {c.index: (c.path.stat().st_mtime_ns, probe_duration_ms(c.path)) for c in result.chapters}
    # QA regenerates the first chunk of chapter 3 in place: a new take, 3 s longer, same key.
    assert set(result.chunk_starts_ms) == {"2", "3"}  # read-along: chunk starts per final chapter file
    from omni_web.book import load_book
    from omni_web.catalog import get_entry
    from omni_web.pipeline import plan_conversion

    plan = plan_conversion(
        load_book(DATA_DIR / "wasteland.epub"),
        ConvertRequest(DATA_DIR / "wasteland.epub", MODEL, VoiceChoice.speaker("Vivian"), chapters=(2, 3)),
        get_entry(MODEL),
        Settings(),
    )
    chunk = data_paths.chunk_cache_dir / f"{plan.chapters[1].items[0].key}.wav"
    with wave.open(str(chunk), "rb") as old:
        frames = old.getnframes()
    write_wav(chunk, speechy(frames / 24000 + 3.0, peak=0.2))
    with SpeechClient(server.base_url) as client:
        rebuilt = rebuild_chapters(
            ConvertRequest(
                DATA_DIR / "wasteland.epub", MODEL, VoiceChoice.speaker("Vivian"), chapters=(2, 3)
            ),
            [3],
            paths=data_paths,
            settings=Settings(),
            client=client,
        )
    assert len(log.read_text().splitlines()) == requests  # nothing was rendered again
    after = {c.index: (c.path.stat().st_mtime_ns, probe_duration_ms(c.path)) for c in rebuilt.chapters}
    assert after[2] == before[2]  # chapter 2 untouched
    assert after[3][0] != before[3][0] and abs(after[3][1] - before[3][1] - 3000) <= 60
    marks = probe_chapters(rebuilt.m4b)
    assert [abs(m.duration_ms - after[c][1]) <= 50 for m, c in zip(marks, (2, 3), strict=True)] == [
        True,
        True,
    ]
    assert first.path == rebuilt.chapters[0].path and second.path == rebuilt.chapters[1].path
    # A take replaced in place is noticed on the next plain run too (QA review deletes and redoes it).
    chunk2 = data_paths.chunk_cache_dir / f"{plan.chapters[0].items[-1].key}.wav"
    with wave.open(str(chunk2), "rb") as old:
        frames = old.getnframes()
    write_wav(chunk2, speechy(frames / 24000 + 2.0, peak=0.2))
    again, _ = convert(data_paths, server, "wasteland.epub", chapters=(2, 3))
    assert abs(probe_duration_ms(again.chapters[0].path) - after[2][1] - 2000) <= 60
    assert again.chapters[1].path.stat().st_mtime_ns == after[3][0]
    assert len(log.read_text().splitlines()) == requests


def test_a_live_join_that_goes_wrong_is_replaced_by_the_join_after_the_fact(
    data_paths: DataPaths, fake_server, monkeypatch, caplog
) -> None:
    import omni_web.assemble.live_join as live_join
    from omni_web.assemble.mp4marks import MarksNotPatchable

    def refuse(*_args, **_kwargs) -> None:
        raise MarksNotPatchable("laid out differently")

    monkeypatch.setattr(live_join, "patch_chapter_marks", refuse)
    server = fake_server(MODEL, env={"FAKE_SGL_SECONDS_PER_WORD": "0.02"})
    with caplog.at_level("WARNING"):
        result, _ = convert(data_paths, server, "wasteland.epub", chapters=(2, 3))
    assert any(
        "did not work out" in r.message and "laid out differently" in r.message for r in caplog.records
    )
    marks = probe_chapters(result.m4b)
    assert len(marks) == 2 and marks[0].start_ms == 0
    for mark, chapter in zip(marks, result.chapters, strict=True):
        assert abs(mark.duration_ms - probe_duration_ms(chapter.path)) <= 50
    assert not list(result.m4b.parent.glob(".*.tmp")) and not list(
        Settings().output_path(data_paths).rglob(".live-join.*")
    )


def test_jobs_tab_levels_table_shows_every_file_and_why_it_fails() -> None:
    from omni_web.ui.levels import levels_html, mastering_fact

    report = {
        "preset": "audiobook",
        "preset_label": "Audiobook",
        "passed": False,
        "targets": {"integrated_lufs": -20.0},
        "chapters": [
            {
                "file": "001.m4a",
                "integrated_lufs": -20.1,
                "true_peak_db": -3.6,
                "rms_db": -21.0,
                "noise_floor_db": -68.2,
                "lra_lu": 3.1,
                "passed": True,
                "problems": [],
            },
            {
                "file": "002.m4a",
                "integrated_lufs": -17.2,
                "true_peak_db": -2.1,
                "rms_db": -17.5,
                "noise_floor_db": None,
                "lra_lu": 9.0,
                "passed": False,
                "problems": ["true peak -2.1 dBTP is above -3 dBTP"],
            },
        ],
    }
    html = levels_html(report)
    assert "001.m4a" in html and "-20.1 LUFS" in html and "−∞" in html and "above -3 dBTP" in html
    assert html.count('ow-bad"') == 2 and levels_html(None) == ""
    assert mastering_fact(3, 10) == "mastered 3/10 chapters" and mastering_fact(0, 0) == ""
