"""The alignment checks: a clause left out, a phrase said twice, babble, a misheard name.

Each reads the :class:`~omni_web.qa.alignment.Alignment` of one take and says what it found in
words a user reads ("words not heard: 'and the sea beyond the rocks'"). Gaps, repeats and babble
fail the take (it is requested again); a name heard as another word is only a notice for review,
since the fix for a misread name is a lexicon entry, not another take. A text too short for a
check skips it with a note instead of guessing.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

from omni_web.qa.alignment import Alignment, Region
from omni_web.qa.findings import Finding, FindingKind
from omni_web.qa.thresholds import Thresholds

__all__ = ["Findings", "find_faults", "quote"]


@dataclass(frozen=True, slots=True)
class Findings:
    """What the alignment checks found in one take."""

    failures: tuple[Finding, ...] = ()  # retake
    notices: tuple[Finding, ...] = ()  # show in review, keep the take
    notes: tuple[str, ...] = ()  # checks skipped and why


def quote(words: str, limit: int = 12) -> str:
    """``'a b c'`` with at most ``limit`` words (``…`` marks the cut)."""
    parts = words.split()
    shown = " ".join(parts[:limit]) + (" …" if len(parts) > limit else "")
    return f"'{shown}'"


def _gap(alignment: Alignment, region: Region) -> Finding:
    text = alignment.text_of(region)
    heard = alignment.heard_of(region)
    where = " at the start" if region.at_start else " at the end" if region.at_end else ""
    instead = f" (heard {quote(heard, 6)} there)" if heard else ""
    return Finding(
        FindingKind.GAP,
        f"{region.missing} words not heard{where}: {quote(text)}{instead}",
        {"words": region.missing},
        text,
    )


def _extra(kind: FindingKind, alignment: Alignment, region: Region, what: str) -> Finding:
    heard = alignment.heard_of(region)
    return Finding(kind, f"{region.extra} words {what}: {quote(heard)}", {"words": region.extra}, heard)


def find_faults(alignment: Alignment, thresholds: Thresholds, *, names: Collection[str] = ()) -> Findings:
    """Run the gap, repeat, babble and name checks on one take's alignment."""
    t = thresholds
    failures: list[Finding] = []
    notes: list[str] = []
    words = len(alignment.text.words)
    inside = words >= t.min_words_for_alignment
    if not inside:
        notes.append(
            f"gap and repeat checks skipped: {words} words, fewer than the "
            f"{t.min_words_for_alignment} they need"
        )
    for region in alignment.regions:
        if inside and region.missing >= t.gap_words:
            failures.append(_gap(alignment, region))
        elif region.extra >= t.extra_words and region.at_start:
            failures.append(_extra(FindingKind.BEFORE, alignment, region, "heard before the text starts"))
        elif region.extra >= t.extra_words and region.at_end:
            failures.append(
                _extra(FindingKind.BABBLE, alignment, region, "heard after the text ends (babble)")
            )
        elif inside and region.extra >= t.repeat_words and alignment.repeats_text(region):
            failures.append(_extra(FindingKind.REPEAT, alignment, region, "said twice"))
        elif inside and region.extra >= t.inserted_words:
            failures.append(
                _extra(FindingKind.INSERTED, alignment, region, "heard that the text does not have")
            )
    notices = [
        Finding(
            FindingKind.NAME,
            f"the name '{name}' was heard as {quote(heard, 4)}: check it "
            "(a lexicon entry fixes a misread name)",
            words=name,
        )
        for name, heard in alignment.substitutions(names)
    ]
    return Findings(tuple(failures), tuple(dict.fromkeys(notices)), tuple(notes))
