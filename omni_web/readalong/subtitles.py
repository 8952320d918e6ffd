"""WebVTT and SRT subtitles of a chapter: one cue per spoken sentence, the chapter title first.

When the title was spoken, its sentence is the title cue. Otherwise the title cue runs from 0 to
the first sentence (or, when the text starts at once, for two seconds over the first sentence's
cue: players stack overlapping cues), so a player shows which chapter is playing.
"""

from __future__ import annotations

from omni_web.book.text import text_key
from omni_web.readalong.records import ChapterTimings

__all__ = ["format_srt", "format_vtt", "subtitle_cues"]

_TITLE_CUE_MIN_S = 2.0
_MAX_LINE_CHARS = 42  # the usual subtitle line length


def _clock(seconds: float, separator: str) -> str:
    ms = max(0, round(seconds * 1000))
    hours, ms = divmod(ms, 3_600_000)
    minutes, ms = divmod(ms, 60_000)
    secs, ms = divmod(ms, 1000)
    return f"{hours:02d}:{minutes:02d}:{secs:02d}{separator}{ms:03d}"


def _wrap(text: str) -> str:
    """Two balanced lines for a long sentence (cues never hold a blank line)."""
    text = " ".join(text.split())
    if len(text) <= _MAX_LINE_CHARS:
        return text
    middle = len(text) // 2
    left, right = text.rfind(" ", 0, middle), text.find(" ", middle)
    cut = left if right < 0 or (left >= 0 and middle - left <= right - middle) else right
    return text if cut <= 0 else text[:cut] + "\n" + text[cut + 1:]


def subtitle_cues(timings: ChapterTimings) -> list[tuple[float, float, str]]:
    """(start, end, text) cues in order; only the title cue may overlap the first sentence."""
    cues: list[tuple[float, float, str]] = []
    sentences = list(timings.sentences)
    title = " ".join(timings.title.split())
    if title:
        spoken_title = sentences and text_key(sentences[0].text) == text_key(title)
        if spoken_title:
            first = sentences.pop(0)
            cues.append((first.start_s, first.end_s, _wrap(title)))
        else:
            first_start = sentences[0].start_s if sentences else timings.duration_s
            end = first_start if first_start > 0.2 else min(_TITLE_CUE_MIN_S, timings.duration_s)
            cues.append((0.0, end, _wrap(title)))
    for sentence in sentences:
        start = sentence.start_s
        end = max(start + 0.001, sentence.end_s)
        cues.append((start, end, _wrap(sentence.display_text)))
    return cues


def format_vtt(timings: ChapterTimings) -> str:
    """The chapter as a WebVTT file."""
    lines = ["WEBVTT", ""]
    for n, (start, end, text) in enumerate(subtitle_cues(timings), start=1):
        lines += [str(n), f"{_clock(start, '.')} --> {_clock(end, '.')}", text.replace("-->", "->"), ""]
    return "\n".join(lines)


def format_srt(timings: ChapterTimings) -> str:
    """The chapter as a SubRip file."""
    lines = []
    for n, (start, end, text) in enumerate(subtitle_cues(timings), start=1):
        lines += [str(n), f"{_clock(start, ',')} --> {_clock(end, ',')}", text, ""]
    return "\n".join(lines)
