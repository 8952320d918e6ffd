"""Benchmark sections for QA's voice, reading and budget checks (run by bench/bench_qa.py).

3. Voice and pace: C chunks of Alice read by flite slt (and espeak-ng), a share of first takes in
   another voice (flite rms / awb / kal by turns) or read 1.4 times faster or slower (sox tempo),
   each chunk taken as a job takes it (ChunkQa, voice checks on, retakes clean). Catch rate =
   faulty first takes failed; false flags = clean first takes failed (each would be retaken).
4. Runaways: C chunks against the fake sgl-omni (flite slt), a share of requests looping until
   their ``max_new_tokens`` (finish reason ``length``), with budgets and without (the catalog's
   value: the server's 2,048). Slot time is the tokens generated (the fake holds a slot per token);
   printed: the runaways' share of it, every runaway retaken, and the budget sent against the
   tokens the text needed (median).
5. The speaker embedding's CPU cost per second of audio (after its one-off warm-up).
"""

from __future__ import annotations

import statistics
import tempfile
import time
import zlib
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from omni_web.catalog import get_entry
from omni_web.client import SpeechClient, SpeechRequest, VoiceChoice
from omni_web.qa import (
    ChunkQa,
    QaLevel,
    QaOptions,
    QaStore,
    TakeAudio,
    TokenBudget,
    VoiceChecks,
    decode_wav,
)
from tests.fakes.fake_sgl_omni_audio import wav_bytes
from tests.fakes.fake_sgl_omni_faults import espeak_pcm, flite_pcm, tempo_pcm
from tests.fakes.sgl_omni import start_fake_server

MODEL = "qwen3_tts_0_6b_customvoice"
RATE = 16000
OTHER_VOICES = ("rms", "awb", "kal")


@dataclass(frozen=True, slots=True)
class _Item:
    key: str
    text: str


def _reading(text: str, voice: str) -> bytes:
    if voice == "espeak":
        return espeak_pcm(text, rate=RATE, channels=1)
    return flite_pcm(text, rate=RATE, channels=1, voice=voice)


def _faulty(text: str, fault: str, index: int, voice: str) -> bytes:
    if fault == "voice":
        return flite_pcm(text, rate=RATE, channels=1, voice=OTHER_VOICES[index % len(OTHER_VOICES)])
    clean = _reading(text, voice)
    return tempo_pcm(clean, 1.4 if fault == "fast" else 1 / 1.4, rate=RATE, channels=1)


def _drawn(index: int, share: float, salt: str) -> bool:
    return zlib.crc32(f"{salt}|{index}".encode()) % 1000 < share * 1000


class _FirstTakeFaulty:
    """A request hook: the first take of a planned chunk has the fault, every other take is clean."""

    def __init__(self, plan: set[int], fault: str, voice: str) -> None:
        self.plan, self.fault, self.voice = plan, fault, voice
        self.asked: dict[str, int] = {}

    def __call__(self, item: _Item, seed: int | None, budget: int | None) -> TakeAudio:
        index = int(item.key)
        self.asked[item.key] = self.asked.get(item.key, 0) + 1
        first_of_planned = index in self.plan and self.asked[item.key] == 1
        pcm = (
            _faulty(item.text, self.fault, index, self.voice)
            if first_of_planned
            else _reading(item.text, self.voice)
        )
        return TakeAudio(wav_bytes(pcm, rate=RATE, channels=1), "stop")


def voice_catch(texts: list[str], encoder, *, share: float = 0.15) -> None:
    """Print catch and false-flag rates of the voice and pace checks per voice and fault."""
    print(
        f"voice and reading checks: {len(texts)} Alice chunks, {share:.0%} of first takes faulty, "
        f"speaker encoder {encoder.name}"
    )
    for voice in ("slt", "espeak"):
        for fault in ("voice", "fast", "slow"):
            plan = {i for i in range(len(texts)) if _drawn(i, share, f"{voice}{fault}")}
            request = _FirstTakeFaulty(plan, fault, voice)
            with tempfile.TemporaryDirectory() as tmp:
                qa = ChunkQa(
                    QaOptions(level=QaLevel.BASIC),
                    store=QaStore(Path(tmp)),
                    request_take=request,
                    model_key=MODEL,
                    voice_label=voice,
                    language="English",
                    accepts_seed=True,
                    request_slots=1,
                    voices=VoiceChecks(QaOptions().thresholds, encoder=lambda: encoder),
                )
                started = time.perf_counter()
                for index, text in enumerate(texts):
                    qa.take(_Item(str(index), text))
                wall = time.perf_counter() - started
                caught = clean_failed = 0
                how: Counter[str] = Counter()
                why: Counter[str] = Counter()
                for index in range(len(texts)):
                    first = qa.store.load(str(index)).takes[0]
                    if index in plan:
                        caught += not first.passed
                        how.update(f.kind.value for f in first.failures)
                    elif not first.passed:
                        clean_failed += 1
                        why.update(f.kind.value for f in first.failures)
                faulty, clean = len(plan), len(texts) - len(plan)
                print(
                    f"  {voice:<6} {fault:<5}: caught {caught}/{faulty} = {caught / max(faulty, 1):.0%} "
                    f"({_kinds(how)}); clean takes failed {clean_failed}/{clean} = "
                    f"{clean_failed / max(clean, 1):.1%}"
                    f"{' (' + _kinds(why) + ')' if why else ''}; {wall:.0f} s"
                )


def _kinds(counts: Counter[str]) -> str:
    return ", ".join(f"{kind} {n}" for kind, n in counts.most_common())


def embedding_cost(texts: list[str], encoder) -> float:
    """CPU seconds of the speaker embedding per second of audio (printed)."""
    wavs = [wav_bytes(_reading(t, "slt"), rate=24000, channels=1) for t in texts]
    audio_s = sum(len(decode_wav(w)[0]) / 24000 for w in wavs)
    started = time.process_time()
    for wav in wavs:
        encoder.embed(wav)
    cost = (time.process_time() - started) / audio_s
    print(
        f"speaker embedding ({encoder.name}, one torch thread, resampling and VAD included): "
        f"{cost * 1000:.1f} ms of CPU per second of audio over {audio_s:.0f} s"
    )
    return cost


def runaway_slots(texts: list[str], *, share: float = 0.03, token_s: float = 0.0005) -> None:
    """Print the runaways' share of slot time with and without budgets, against the fake server."""
    entry = get_entry(MODEL)
    voice = VoiceChoice.speaker("Vivian")
    env = {
        "FAKE_SGL_VOICE": "flite",
        "FAKE_SGL_FAULTS": "runaway",
        "FAKE_SGL_FAULT_SHARE": str(share),
        "FAKE_SGL_TOKEN_S": str(token_s),
        "FAKE_SGL_SLOTS": "8",
    }
    print(
        f"runaways: {len(texts)} chunks on the fake server (flite), {share:.0%} of requests loop to their "
        f"max_new_tokens; slot time = tokens generated x {token_s * 1000:.1f} ms"
    )
    for budgeted in (False, True):
        with (
            tempfile.TemporaryDirectory() as tmp,
            start_fake_server(MODEL, env=env, log_path=Path(tmp) / "fake.log") as server,
            SpeechClient(server.base_url) as client,
        ):

            def request(item: _Item, seed: int | None, budget: int | None) -> TakeAudio:
                result = client.speech(
                    entry, SpeechRequest(text=item.text, voice=voice, seed=seed, max_new_tokens=budget)
                )
                return TakeAudio(result.audio, result.finish_reason, result.completion_tokens)

            qa = ChunkQa(
                QaOptions(level=QaLevel.BASIC),
                store=QaStore(Path(tmp) / "qa"),
                request_take=request,
                model_key=MODEL,
                voice_label="vivian",
                language="English",
                accepts_seed=True,
                request_slots=1,
                budget=TokenBudget(entry.max_new_tokens_limit) if budgeted else None,
            )
            for index, text in enumerate(texts):
                qa.take(_Item(str(index), text))
            _print_slots(qa, len(texts), budgeted)


def _print_slots(qa: ChunkQa, count: int, budgeted: bool) -> None:
    takes = [t for i in range(count) for t in qa.store.load(str(i)).takes]
    total = sum(t.completion_tokens or 0 for t in takes)
    runaway = [t for t in takes if t.finish_reason == "length"]
    lost = sum(t.completion_tokens or 0 for t in runaway)
    chunks = [qa.store.load(str(i)) for i in range(count)]
    retaken = sum(1 for r in chunks if r.takes[0].finish_reason == "length" and r.chosen_take.passed)
    first_runaways = sum(1 for r in chunks if r.takes[0].finish_reason == "length")
    clean = [t for t in takes if t.finish_reason != "length" and t.completion_tokens]
    ratios = [t.max_new_tokens / t.completion_tokens for t in clean if t.max_new_tokens]
    sent = (
        f"median budget {statistics.median(ratios):.2f}x the tokens the take used"
        if ratios
        else "no budget sent (the server's 2,048)"
    )
    print(
        f"  {'with budgets   ' if budgeted else 'without budgets'}: "
        f"runaway takes {len(runaway)} of {len(takes)} "
        f"hold {lost / max(total, 1):.1%} of slot time ({lost:,} of {total:,} tokens); "
        f"chunks whose first take "
        f"ran away {first_runaways}, passed on a retake {retaken}; {sent}"
    )
