"""Presets (named job settings) and the rules that pick one from a book's metadata.

A preset holds what shapes a job: model, narrator voice or cast, QA level, loudness, format,
read-along, and which chapters. Rules map book metadata (author, series, language, subject,
title) to a preset; the first rule that matches wins. Both live in one JSON file in the data
root's state folder, so the UI, the API, the inbox and the CLI share them.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from omni_web.book import Book, BookMetadata
from omni_web.cast import BookLabels
from omni_web.errors import ChapterSelectionError, PresetError
from omni_web.files import write_atomic
from omni_web.pipeline.request import (
    ConvertRequest,
    cast_from_dict,
    cast_to_dict,
    parse_chapter_spec,
    voice_from_dict,
    voice_to_dict,
)

__all__ = ["CHAPTER_POLICIES", "RULE_FIELDS", "Preset", "PresetBook", "Rule"]

RULE_FIELDS = ("author", "series", "language", "subject", "title")
CHAPTER_POLICIES = ("default", "all")  # or a selection like "1-3,5"


@dataclass(frozen=True, slots=True)
class Preset:
    """Named job settings; ``None`` fields fall back to the user's Settings when the job runs."""

    name: str
    model_key: str
    voice: Mapping[str, Any] = field(default_factory=lambda: {"kind": "default"})
    cast: Mapping[str, Any] | None = None
    qa_level: str | None = None
    loudness: str | None = None
    output_format: str | None = None
    also_mp3_chapters: bool | None = None
    readalong: bool = False
    chapters: str = "default"  # default (front/back matter left out) | all | "1-3,5"

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON."""
        return {**asdict(self), "voice": dict(self.voice), "cast": dict(self.cast) if self.cast else None}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Preset:
        """Inverse of :meth:`to_dict`; raises PresetError naming a missing or unknown field."""
        known = set(cls.__dataclass_fields__)
        unknown = sorted(set(data) - known)
        if unknown:
            raise PresetError(
                f"Unknown preset field(s): {', '.join(unknown)}. Known: {', '.join(sorted(known))}."
            )
        if not str(data.get("name", "")).strip() or not data.get("model_key"):
            raise PresetError(
                "A preset needs a name and a model_key (a catalog key, see: python -m omni_web models list)."
            )
        preset = cls(**{**data, "name": str(data["name"]).strip()})
        try:
            preset.chapter_numbers(None)  # a bad selection is refused when saved, not when a book arrives
        except ChapterSelectionError as exc:
            raise PresetError(f"Preset '{preset.name}': {exc} Or use 'default' or 'all'.") from exc
        return preset

    @classmethod
    def from_request(cls, name: str, request: ConvertRequest) -> Preset:
        """A preset with the settings of ``request`` (from the Generate tab or a job)."""
        chapters = "default" if request.chapters is None else ",".join(map(str, request.chapters))
        # A book's labels name its own quotes: a preset for other books keeps the voices only.
        cast = replace(request.cast, labels=BookLabels()) if request.cast is not None else None
        return cls(
            name=name.strip(),
            model_key=request.model_key,
            voice=voice_to_dict(request.voice),
            cast=cast_to_dict(cast),
            qa_level=request.qa_level,
            loudness=request.loudness,
            output_format=request.output_format,
            also_mp3_chapters=request.also_mp3_chapters,
            readalong=request.readalong,
            chapters=chapters,
        )

    def chapter_numbers(self, book: Book | None) -> tuple[int, ...] | None:
        """The chapter selection for ``book`` (None: the book's default selection)."""
        if self.chapters in ("", "default"):
            return None
        if self.chapters == "all":
            return None if book is None else tuple(range(1, len(book.chapters) + 1))
        return parse_chapter_spec(self.chapters)

    def request_for(self, book_path: Path, book: Book | None = None) -> ConvertRequest:
        """The conversion of ``book_path`` with these settings."""
        return ConvertRequest(
            book_path=Path(book_path),
            model_key=self.model_key,
            voice=voice_from_dict(self.voice),
            cast=cast_from_dict(self.cast),
            chapters=self.chapter_numbers(book),
            qa_level=self.qa_level,
            loudness=self.loudness,
            output_format=self.output_format,
            also_mp3_chapters=self.also_mp3_chapters,
            readalong=self.readalong,
        )


@dataclass(frozen=True, slots=True)
class Rule:
    """``field`` of the book contains ``value`` (case ignored; a language matches by its prefix) →
    ``preset``."""

    field: str
    value: str
    preset: str

    def matches(self, meta: BookMetadata) -> bool:
        """Whether the book's metadata satisfies this rule."""
        wanted = self.value.strip().casefold()
        if not wanted:
            return False
        if self.field == "language":
            return meta.language.casefold().startswith(wanted)
        haystack = {
            "author": meta.authors,
            "series": (meta.series,),
            "subject": meta.subjects,
            "title": (meta.title,),
        }[self.field]
        return any(wanted in item.casefold() for item in haystack if item)


class PresetBook:
    """The presets and rules file (``state/presets.json``); every call re-reads it."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def _read(self) -> dict[str, Any]:
        if not self.path.is_file():
            return {"presets": [], "rules": []}
        try:
            return json.loads(self.path.read_text(encoding="utf-8"))
        except ValueError as exc:
            raise PresetError(
                f"{self.path} is not valid JSON ({exc}); fix it or delete it to start over."
            ) from exc

    def _write(self, presets: Iterable[Preset], rules: Iterable[Rule]) -> None:
        doc = {"presets": [p.to_dict() for p in presets], "rules": [asdict(r) for r in rules]}
        self.path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(self.path, json.dumps(doc, indent=2, ensure_ascii=False) + "\n")

    def presets(self) -> list[Preset]:
        """Every preset, in the order saved."""
        return [Preset.from_dict(item) for item in self._read().get("presets", [])]

    def get(self, name: str) -> Preset:
        """The preset called ``name`` (case ignored); raises PresetError listing the known ones."""
        for preset in self.presets():
            if preset.name.casefold() == name.strip().casefold():
                return preset
        known = ", ".join(p.name for p in self.presets()) or "none saved yet"
        raise PresetError(f"No preset named '{name}' (presets: {known}). Save one in the Generate tab first.")

    def save(self, preset: Preset) -> Preset:
        """Add ``preset``, or replace the one with its name."""
        presets = [p for p in self.presets() if p.name.casefold() != preset.name.casefold()]
        self._write([*presets, preset], self.rules())
        return preset

    def delete(self, name: str) -> None:
        """Remove a preset and the rules that pick it."""
        gone = self.get(name).name
        self._write(
            [p for p in self.presets() if p.name != gone], [r for r in self.rules() if r.preset != gone]
        )

    def rules(self) -> list[Rule]:
        """The rules in the order they are tried."""
        return [Rule(**item) for item in self._read().get("rules", [])]

    def set_rules(self, rules: Iterable[Rule]) -> list[Rule]:
        """Replace the rules; each must use a known field and name a saved preset."""
        rules = [
            replace(r, field=r.field.strip().lower(), value=r.value.strip(), preset=self.get(r.preset).name)
            for r in rules
            if r.value.strip()
        ]
        for rule in rules:
            if rule.field not in RULE_FIELDS:
                raise PresetError(
                    f"A rule's field must be one of {', '.join(RULE_FIELDS)}, not '{rule.field}'."
                )
        self._write(self.presets(), rules)
        return rules

    def pick(self, meta: BookMetadata) -> Preset | None:
        """The preset of the first rule the book matches, or None."""
        rule = next((r for r in self.rules() if r.matches(meta)), None)
        return self.get(rule.preset) if rule is not None else None
