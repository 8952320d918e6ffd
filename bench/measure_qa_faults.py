"""Measure what a recogniser hears in clean and faulty takes, to set the alignment detectors' limits.

Speaks the first C chunks of Alice (~W words each) with flite ``slt`` and espeak-ng, clean and with
each fault of the fake server (8 consecutive words left out, 8 words said twice, 8 words of babble
appended, a third of the words left out, words shuffled), transcribes every take with the QA model
(tiny.en by default) and writes one JSON line per take: voice, fault, text, spoken text, transcript,
audio seconds and transcription seconds. ``--summary FILE`` reads such a file and prints what the
detectors find in it (the figures quoted beside the thresholds in ``omni_web/qa/thresholds.py``).

    .venv/bin/python bench/measure_qa_faults.py --out /tmp/takes.jsonl [--chunks 30] [--words 120]
    .venv/bin/python bench/measure_qa_faults.py --summary /tmp/takes.jsonl

Not a test: it prints numbers.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.bench_qa import book_chunks, default_asr_model  # noqa: E402
from omni_web.qa import load_recogniser  # noqa: E402
from omni_web.qa.wer import score_transcript  # noqa: E402
from omni_web.render import wav_duration_s  # noqa: E402
from tests.fakes.fake_sgl_omni_audio import wav_bytes  # noqa: E402
from tests.fakes.fake_sgl_omni_faults import Faults, spoken_pcm  # noqa: E402

FAULTS = {"flite": (None, "gap", "repeat", "babble"), "espeak": (None, "drop", "shuffle", "gap", "repeat")}


def collect(out: Path, chunks: int, words: int, asr_model: str) -> None:
    texts = book_chunks(chunks, words)
    recogniser = load_recogniser(asr_model, device="cpu", cpu_threads=2)
    faults = Faults(words=8)
    with out.open("a", encoding="utf-8") as handle:
        for voice, modes in FAULTS.items():
            for index, text in enumerate(texts):
                for fault in modes:
                    spoken = faults.spoken(text, fault, attempt=1 + index % 3).text
                    wav = wav_bytes(
                        spoken_pcm(spoken, voice=voice, rate=24000, channels=1), rate=24000, channels=1
                    )
                    started = time.perf_counter()
                    heard = recogniser.transcribe(wav, "en")
                    row = {
                        "voice": voice,
                        "fault": fault,
                        "text": text,
                        "spoken": spoken,
                        "heard": heard,
                        "audio_s": round(wav_duration_s(wav), 2),
                        "asr_s": round(time.perf_counter() - started, 2),
                    }
                    handle.write(json.dumps(row, ensure_ascii=False) + "\n")
                    handle.flush()


def summary(path: Path, *, verbose: bool = False) -> None:
    from omni_web.qa.alignment import align_transcript
    from omni_web.qa.detectors import find_faults
    from omni_web.qa.thresholds import DEFAULT_THRESHOLDS

    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    groups: dict[tuple[str, str], list[dict]] = defaultdict(list)
    for row in rows:
        groups[(row["voice"], row["fault"] or "clean")].append(row)
    for (voice, fault), items in sorted(groups.items()):
        gaps, repeats, heads, tails, wers, caught = [], [], [], [], [], 0
        for row in items:
            alignment = align_transcript(row["text"], row["heard"])
            regions = alignment.regions
            gaps.append(max((r.missing for r in regions), default=0))
            repeats.append(max((r.extra for r in regions if not (r.at_start or r.at_end)), default=0))
            heads.append(max((r.extra for r in regions if r.at_start), default=0))
            tails.append(max((r.extra for r in regions if r.at_end), default=0))
            wers.append(score_transcript(row["text"], row["heard"]).wer)
            found = find_faults(alignment, DEFAULT_THRESHOLDS)
            caught += bool(found.failures)
            if verbose and bool(found.failures) != bool(row["fault"]):
                print(f"  {voice} {row['fault']}: {'; '.join(f.message for f in found.failures) or 'MISSED'}")
        n = len(items)

        def spread(values: list) -> str:
            ordered = sorted(values)
            m = len(ordered)
            return f"{ordered[0]}/{ordered[m // 2]}/{ordered[int(m * 0.9)]}/{ordered[-1]}"

        audio = sum(r["audio_s"] for r in items)
        asr = sum(r["asr_s"] for r in items)
        print(
            f"{voice:<6} {fault:<7} n={n:<3} longest gap min/med/p90/max {spread(gaps):<12} repeat "
            f"{spread(repeats):<12}"
            f" head {spread(heads):<10} tail {spread(tails):<10} WER med {sorted(wers)[n // 2]:.2f}"
            f"  flagged {caught}/{n}  RTF {asr / audio:.3f}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--out", type=Path)
    parser.add_argument("--summary", type=Path)
    parser.add_argument("--verbose", action="store_true", help="print every wrong verdict")
    parser.add_argument("--chunks", type=int, default=30)
    parser.add_argument("--words", type=int, default=120)
    parser.add_argument("--asr-model", default=default_asr_model())
    args = parser.parse_args()
    if args.out:
        collect(args.out, args.chunks, args.words, args.asr_model)
    if args.summary:
        summary(args.summary, verbose=args.verbose)


if __name__ == "__main__":
    main()
