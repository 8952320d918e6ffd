"""Keep the server's per-request access lines out of the boot log a person reads.

Uvicorn prints one line per request (``INFO:     127.0.0.1:5123 - "POST /v1/audio/speech
HTTP/1.1" 200 OK``); a book is thousands of requests and health polls, which bury the boot lines
that matter. The log file keeps them all; the page shows the rest with one line counting them.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

__all__ = ["fold_access_lines", "is_access_line", "read_server_log"]

_ACCESS_RE = re.compile(
    r'^(?:INFO:\s+)?\S+:\d+ - "(?P<method>[A-Z]+) (?P<path>\S+) HTTP/[\d.]+" (?P<status>\d{3})\b'
)


def is_access_line(line: str) -> bool:
    """True for a uvicorn access line (one HTTP request)."""
    return _ACCESS_RE.match(line.strip()) is not None


def fold_access_lines(text: str) -> str:
    """``text`` without access lines, plus one line at the end saying how many were hidden."""
    kept: list[str] = []
    counts: Counter[str] = Counter()
    for line in text.splitlines():
        match = _ACCESS_RE.match(line.strip())
        if match is None:
            if line.strip() or (kept and kept[-1].strip()):  # no runs of blank lines left behind
                kept.append(line)
        else:
            counts[f"{match['method']} {match['path'].split('?')[0]}"] += 1
    if counts:
        total = sum(counts.values())
        top = ", ".join(f"{what} ×{count:,}" for what, count in counts.most_common(3))
        noun = "line" if total == 1 else "lines"
        kept.append(f"… {total:,} request {noun} hidden ({top}); the log file has them all.")
    return "\n".join(kept)


def read_server_log(path: Path | None, *, head_bytes: int = 32_000, tail_bytes: int = 32_000) -> str:
    """The server log as the page shows it: its start (the boot) and its end, access lines folded.

    A long job's log is mostly access lines, so its tail alone would hide the boot; only the two
    ends are read, so a polling page stays cheap whatever the size. "" when it cannot be read.
    """
    if path is None:
        return ""
    try:
        with open(path, "rb") as handle:
            size = handle.seek(0, 2)
            handle.seek(0)
            if size <= head_bytes + tail_bytes:
                return fold_access_lines(handle.read().decode("utf-8", "replace"))
            head = handle.read(head_bytes).decode("utf-8", "replace").rsplit("\n", 1)[0]
            handle.seek(size - tail_bytes)
            tail = handle.read().decode("utf-8", "replace").split("\n", 1)[-1]
    except OSError:
        return ""
    return f"{fold_access_lines(head)}\n… ({size - head_bytes - tail_bytes:,} bytes of the log skipped)\n" \
           f"{fold_access_lines(tail)}"
