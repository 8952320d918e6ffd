"""The delivery report in the Jobs tab: each chapter's measured levels against the preset.

Kept apart from ``jobs.py`` so the Jobs tab only places it. Reads the report's JSON as the
conversion stored it (``omni_web.master.report``), from the job's result or its last progress.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from omni_web.master.report import LevelsDoc, LevelsRow
from omni_web.ui.widgets import badge, esc, table

__all__ = ["levels_html", "mastering_fact"]


def mastering_fact(chapters_mastered: int, chapters_to_master: int) -> str:
    """``"mastered 3/10 chapters"`` while chapters are mastered in the background; "" before."""
    if not chapters_to_master:
        return ""
    return f"mastered {chapters_mastered}/{chapters_to_master} chapters"


def _number(value: float | None, unit: str) -> str:
    return f"{value:.1f} {unit}" if isinstance(value, (int, float)) else "−∞"


def _name(row: LevelsRow) -> str:
    """A chapter's row by its number and title; other files (ACX, credits) by their file name."""
    if row.title and row.number is not None:
        return f"{row.number}. {row.title}"
    return row.file


def levels_html(report: Mapping[str, Any] | None) -> str:
    """Every delivered file's loudness, peak, RMS, noise floor, range and verdict, collapsed under
    one line (a 138-chapter book would otherwise push everything below it off the page)."""
    if not report:
        return ""
    doc = LevelsDoc.from_dict(report)
    rows = doc.rows
    failed = sum(1 for row in rows if not row.passed)
    verdict = badge("pass", tone="ok") if doc.passed else badge("fail", tone="bad")
    tally = f"{len(rows)} files" + (f", {failed} outside the targets" if failed else ", all on target")
    head = f'<span class="ow-status" id="jobs-levels-head">{verdict} <b>Levels</b> ' \
           f'<span class="ow-dim">{esc(doc.preset_label or doc.preset)} · ' \
           f'{esc(tally)}</span></span>'
    note = ""
    if doc.targets.integrated_lufs is None:
        note = '<div class="ow-dim">Mastering is off: chapters keep the levels the server returned.</div>'
    body = [
        (
            esc(_name(row)),
            _number(row.integrated_lufs, "LUFS"),
            _number(row.true_peak_db, "dBTP"),
            _number(row.rms_db, "dB"),
            _number(row.noise_floor_db, "dB"),
            _number(row.lra_lu, "LU"),
            badge("pass", tone="ok")
            if row.passed
            else badge("fail", tone="bad") + f' <span class="ow-dim">{esc("; ".join(row.problems))}</span>',
        )
        for row in rows
    ]
    html = (
        note
        + '<div class="ow-scroll">'
        + table(
            ["File", "Loudness", "True peak", "RMS", "Noise floor", "Range", ""], body, raw_columns=(0, 6)
        )
        + "</div>"
    )
    for problem in doc.acx_problems:
        html += f'<div class="ow-dim">ACX: {esc(problem)}</div>'
    return f'<details id="jobs-levels" class="ow-fold"><summary>{head}</summary>{html}</details>'
