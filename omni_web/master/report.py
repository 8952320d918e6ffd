"""The delivery report: every chapter's measured levels, judged against the preset.

Written as ``<Title>.levels.json`` next to the book and shown in the Jobs tab. Levels are
measured from the written files (the m4b's chapter AAC files, and for ``acx`` each MP3 as ACX will
measure it), never taken from the mastering's own expectations.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from omni_web.files import write_atomic
from omni_web.master.levels import FileLevels
from omni_web.master.presets import LoudnessPreset
from omni_web.records import JsonRecord

__all__ = ["ChapterReport", "LevelsReport", "read_levels_report", "write_levels_report"]

REPORT_SUFFIX = ".levels.json"


@dataclass(frozen=True, slots=True)
class ChapterReport:
    """One delivered file's levels and verdict."""

    number: int
    title: str
    levels: FileLevels
    problems: tuple[str, ...]
    kind: str = "chapter"  # chapter | credits | sample | part

    @property
    def passed(self) -> bool:
        """True when the file meets every rule of the preset."""
        return not self.problems

    def to_json(self) -> dict[str, Any]:
        """Plain JSON."""
        return {
            "number": self.number,
            "title": self.title,
            "kind": self.kind,
            "file": Path(self.levels.path).name,
            **{k: v for k, v in self.levels.to_json().items() if k != "path"},
            "passed": self.passed,
            "problems": list(self.problems),
        }


@dataclass(frozen=True, slots=True)
class LevelsReport:
    """The whole book's report."""

    title: str
    preset: LoudnessPreset
    chapters: tuple[ChapterReport, ...]
    acx_files: tuple[ChapterReport, ...] = ()
    acx_problems: tuple[str, ...] = ()
    notes: tuple[str, ...] = field(default_factory=tuple)

    @property
    def passed(self) -> bool:
        """Every chapter (and every ACX file and rule) passes."""
        return (
            all(c.passed for c in self.chapters)
            and all(f.passed for f in self.acx_files)
            and not self.acx_problems
        )

    def to_json(self) -> dict[str, Any]:
        """Plain JSON for the report file and the job result."""
        preset = self.preset
        data: dict[str, Any] = {
            "title": self.title,
            "preset": preset.name,
            "preset_label": preset.label,
            "targets": {
                "integrated_lufs": preset.target_lufs if preset.master else None,
                "tolerance_lu": preset.tolerance_lu,
                "max_true_peak_db": preset.max_true_peak_db if preset.master else None,
                "rms_range_db": list(preset.rms_range_db) if preset.rms_range_db else None,
                "noise_floor_range_db": list(preset.noise_floor_range_db),
                "max_lra_lu": preset.max_lra_lu,
            },
            "passed": self.passed,
            "chapters": [c.to_json() for c in self.chapters],
        }
        if preset.acx:
            data["acx"] = {
                "files": [f.to_json() for f in self.acx_files],
                "problems": list(self.acx_problems),
            }
        if self.notes:
            data["notes"] = list(self.notes)
        return data


def judge(
    number: int, title: str, levels: FileLevels, preset: LoudnessPreset, kind: str = "chapter"
) -> ChapterReport:
    """A file's report line."""
    return ChapterReport(number, title, levels, tuple(levels.failures(preset)), kind)


def write_levels_report(report: LevelsReport, path: Path) -> Path:
    """Write the report atomically (a reader never sees half a file)."""
    return write_atomic(Path(path), json.dumps(report.to_json(), ensure_ascii=False, indent=2))


def read_levels_report(path: Path) -> dict[str, Any] | None:
    """A report file's JSON, or None when it does not exist or cannot be read."""
    try:
        return json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


@dataclass(frozen=True, slots=True)
class LevelsRow(JsonRecord):
    """One file's line of a report's JSON (:meth:`ChapterReport.to_json`); None: not measured (-inf)."""

    file: str = ""
    number: int | None = None
    title: str = ""
    kind: str = "chapter"
    integrated_lufs: float | None = None
    true_peak_db: float | None = None
    rms_db: float | None = None
    noise_floor_db: float | None = None
    lra_lu: float | None = None
    passed: bool = False
    problems: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class LevelsAcx(JsonRecord):
    """The ACX part of a report's JSON."""

    files: tuple[LevelsRow, ...] = ()
    problems: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class LevelsTargets(JsonRecord):
    """What a report's preset aims for; ``integrated_lufs`` None: mastering was off."""

    integrated_lufs: float | None = None
    max_true_peak_db: float | None = None


@dataclass(frozen=True, slots=True)
class LevelsDoc(JsonRecord):
    """A levels report read back from its JSON (:meth:`LevelsReport.to_json`), for showing it."""

    title: str = ""
    preset: str = ""
    preset_label: str = ""
    targets: LevelsTargets = field(default_factory=LevelsTargets)
    passed: bool = False
    chapters: tuple[LevelsRow, ...] = ()
    acx: LevelsAcx | None = None

    @property
    def rows(self) -> tuple[LevelsRow, ...]:
        """Every file: the chapters, then the ACX files."""
        return (*self.chapters, *(self.acx.files if self.acx else ()))

    @property
    def acx_problems(self) -> tuple[str, ...]:
        """The ACX rules the book breaks as a whole."""
        return self.acx.problems if self.acx else ()


def summary_lines(report: Mapping[str, Any]) -> list[str]:
    """Short human lines for a report's JSON (CLI output and the Jobs tab's text)."""
    doc = LevelsDoc.from_dict(report)
    lines = [f"Loudness: {doc.preset_label or doc.preset} - "
             f"{'all files pass' if doc.passed else 'SOME FILES FAIL'}"]

    def show(value: float | None, unit: str) -> str:
        return f"{value:.1f} {unit}" if isinstance(value, (int, float)) else "-inf"

    for row in doc.rows:
        verdict = "ok" if row.passed else "FAIL: " + "; ".join(row.problems)
        lines.append(
            f"  {row.file}: {show(row.integrated_lufs, 'LUFS')}, peak {show(row.true_peak_db, 'dBTP')}, "
            f"RMS {show(row.rms_db, 'dB')}, floor {show(row.noise_floor_db, 'dB')}, "
            f"LRA {show(row.lra_lu, 'LU')} - {verdict}"
        )
    lines.extend(f"  ACX: {problem}" for problem in doc.acx_problems)
    return lines


__all__ += ["REPORT_SUFFIX", "LevelsAcx", "LevelsDoc", "LevelsRow", "LevelsTargets", "judge", "summary_lines"]
