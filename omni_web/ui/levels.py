"""The delivery report in the Jobs tab: each chapter's measured levels against the preset.

Kept apart from ``jobs.py`` so the Jobs tab only places it. Reads the report's JSON as the
conversion stored it (``omni_web.master.report``), from the job's result or its last progress.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from omni_web.ui.widgets import badge, esc, table

__all__ = ["levels_html", "mastering_fact"]


def mastering_fact(chapters_mastered: int, chapters_to_master: int) -> str:
    """``"mastered 3/10 chapters"`` while chapters are mastered in the background; "" before."""
    if not chapters_to_master:
        return ""
    return f"mastered {chapters_mastered}/{chapters_to_master} chapters"


def _number(row: Mapping[str, Any], key: str, unit: str) -> str:
    value = row.get(key)
    return f"{value:.1f} {unit}" if isinstance(value, (int, float)) else "−∞"


def levels_html(report: Mapping[str, Any] | None) -> str:
    """A table of every delivered file's loudness, peak, RMS, noise floor, range and verdict."""
    if not report:
        return ""
    targets = report.get("targets") or {}
    verdict = badge("pass", tone="ok") if report.get("passed") else badge("fail", tone="bad")
    head = f'<div class="ow-status" id="jobs-levels-head">{verdict} <b>Levels</b> ' \
           f'<span class="ow-dim">{esc(report.get("preset_label") or report.get("preset") or "")}</span></div>'  # fmt: skip
    if targets.get("integrated_lufs") is None:
        head += '<div class="ow-dim">Mastering is off: chapters keep the levels the server returned.</div>'
    rows = [*report.get("chapters", []), *(report.get("acx") or {}).get("files", [])]
    body = [
        (
            str(row.get("file", "")),
            _number(row, "integrated_lufs", "LUFS"),
            _number(row, "true_peak_db", "dBTP"),
            _number(row, "rms_db", "dB"),
            _number(row, "noise_floor_db", "dB"),
            _number(row, "lra_lu", "LU"),
            badge("pass", tone="ok")
            if row.get("passed")
            else badge("fail", tone="bad") + f' <span class="ow-dim">{esc("; ".join(row.get("problems", [])))}</span>',
        )
        for row in rows
    ]
    html = head + table(["File", "Loudness", "True peak", "RMS", "Noise floor", "Range", ""], body,
                        raw_columns=(6,))  # fmt: skip
    for problem in (report.get("acx") or {}).get("problems", []):
        html += f'<div class="ow-dim">ACX: {esc(problem)}</div>'
    return f'<div id="jobs-levels">{html}</div>'
