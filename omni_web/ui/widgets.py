"""Small HTML pieces the tabs share: badges, progress bars, tables, times, task status.

Everything here only formats values it is given; escaping happens here so no tab builds markup
from raw text.
"""

from __future__ import annotations

import html
from collections.abc import Sequence

from omni_web.runstate import RunState
from omni_web.tasks import TaskSnapshot
from omni_web.timefmt import duration_words

__all__ = [
    "badge",
    "callout",
    "clock_str",
    "duration_str",
    "esc",
    "progress_bar",
    "size_str",
    "table",
    "task_status_html",
]

# Badge colours by state word (jobs, tasks, server).
_TONES = {
    "healthy": "ok", "done": "ok", "ready": "ok", "installed": "ok", "found": "ok",
    "running": "busy", "starting": "busy", "stopping": "busy", "queued": "wait", "partial": "wait",
    "failed": "bad", "missing": "bad", "broken": "bad", "cancelled": "mute", "stopped": "mute",
    "idle": "mute", "incomplete": "wait", "outdated": "wait",
}


def esc(value: object) -> str:
    """HTML-escape ``str(value)``."""
    return html.escape(str(value))


def badge(word: str, *, tone: str | None = None) -> str:
    """A coloured pill with ``word``; the colour follows the word unless ``tone`` is given."""
    tone = tone or _TONES.get(word.lower(), "mute")
    return f'<span class="ow-badge ow-{tone}">{esc(word)}</span>'


def progress_bar(fraction: float | None, *, text: str = "") -> str:
    """A horizontal bar (an indeterminate stripe when ``fraction`` is None) with a caption."""
    caption = f'<span class="ow-bar-text">{esc(text)}</span>' if text else ""
    if fraction is None:
        return f'<div class="ow-bar ow-bar-unknown"><div></div></div>{caption}'
    percent = max(0.0, min(1.0, fraction)) * 100
    return (
        f'<div class="ow-bar" role="progressbar" aria-valuenow="{percent:.0f}" aria-valuemin="0" '
        f'aria-valuemax="100"><div style="width:{percent:.1f}%"></div></div>{caption}'
    )


def table(headers: Sequence[str], rows: Sequence[Sequence[str]], *, raw_columns: Sequence[int] = ()) -> str:
    """An HTML table; cells are escaped except in ``raw_columns`` (already HTML)."""
    head = "".join(f"<th>{esc(h)}</th>" for h in headers)
    body = "".join(
        "<tr>" + "".join(
            f"<td>{cell if index in raw_columns else esc(cell)}</td>" for index, cell in enumerate(row)
        ) + "</tr>"
        for row in rows
    )
    return f'<table class="ow-table"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'


def callout(text: str, *, tone: str = "info") -> str:
    """A boxed note (``info``, ``warn`` or ``bad``) around escaped ``text``."""
    return f'<div class="ow-callout ow-callout-{tone}">{esc(text)}</div>'


def clock_str(seconds: float | None) -> str:
    """``1:02:03`` / ``4:05`` for a duration; ``-`` when unknown."""
    if seconds is None or seconds < 0:
        return "-"
    total = round(seconds)
    hours, rest = divmod(total, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


def duration_str(seconds: float | None) -> str:
    """A length of audio or time in words: ``20 h 45 min``, ``12 min``, ``45 s``; ``-`` when unknown."""
    return duration_words(seconds)


def size_str(size_bytes: int | None) -> str:
    """``604.2 MB`` (decimal units, as disks are sold); ``-`` when unknown."""
    if size_bytes is None:
        return "-"
    size = float(size_bytes)
    for unit in ("B", "KB", "MB", "GB"):
        if size < 1000 or unit == "TB":
            return f"{int(size)} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1000
    return f"{size:.1f} TB"


def task_status_html(snapshot: TaskSnapshot) -> str:
    """The status line of a background task: badge, title, elapsed time, progress bar."""
    if snapshot.state is None:
        return ""
    line = (
        f'<div class="ow-status">{badge(snapshot.state.value)} <b>{esc(snapshot.title)}</b> '
        f'<span class="ow-dim">{clock_str(snapshot.elapsed_s)}</span></div>'
    )
    if snapshot.running:
        line += progress_bar(snapshot.progress, text=snapshot.progress_text)
    elif snapshot.message:
        tone = "bad" if snapshot.state is RunState.FAILED else "info"
        line += callout(snapshot.message, tone=tone)
    return line
