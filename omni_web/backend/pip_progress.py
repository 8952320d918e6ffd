"""pip's download progress as log lines a person can follow.

pip's progress bar needs a terminal; in a log it prints nothing, so a 255 MB wheel download
shows only "Looking in links" for most of a minute. ``--progress-bar raw`` (newer pips) prints
``Progress <bytes> of <total>`` lines instead; :class:`PipProgressLog` turns them into one line
per 5 % (``Downloaded 45.2 MB of 255.0 MB (17%)``) and passes every other line through.
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Callable
from pathlib import Path

__all__ = ["PipProgressLog", "pip_progress_args"]

_RAW_RE = re.compile(r"^Progress (\d+) of (\d+)$")
_STEP_PERCENT = 5


def _mb(size: int) -> str:
    return f"{size / 1_000_000:.1f} MB"


def pip_progress_args(python: Path) -> list[str]:
    """``--progress-bar raw`` when the venv's pip knows it, else ``off`` (older pips)."""
    try:
        shown = subprocess.run(  # noqa: S603 - argv list: the venv's own python
            [str(python), "-m", "pip", "install", "--help"], capture_output=True, text=True, timeout=60,
        )
    except (OSError, subprocess.SubprocessError):
        return ["--progress-bar", "off"]
    help_text = shown.stdout if shown.returncode == 0 else ""
    option = re.search(r"--progress-bar(.*?)(?:\n  --|\Z)", help_text, flags=re.S)
    raw = option is not None and re.search(r"\braw\b", option.group(1)) is not None
    return ["--progress-bar", "raw" if raw else "off"]


class PipProgressLog:
    """A line callback for pip's output that condenses its raw progress lines."""

    def __init__(self, log: Callable[[str], None]) -> None:
        self._log = log
        self._shown = -1
        self._total = 0

    def __call__(self, line: str) -> None:
        match = _RAW_RE.match(line.strip())
        if match is None:
            self._log(line)
            return
        done, total = int(match.group(1)), int(match.group(2))
        if total != self._total:  # a new file
            self._total, self._shown = total, -1
        if total <= 0:
            return
        percent = min(100, done * 100 // total)
        step = percent // _STEP_PERCENT * _STEP_PERCENT
        if step > self._shown or (percent == 100 and self._shown < 100):
            self._shown = step if percent < 100 else 100
            self._log(f"  Downloaded {_mb(done)} of {_mb(total)} ({percent}%)")
