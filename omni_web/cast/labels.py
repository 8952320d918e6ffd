"""Labels laid over the rules' attribution: who speaks a quote, and how, from the LLM or a person.

A label names a quote by its chapter and its place among the chapter's quotes, and carries a
hash of the quote's text: a label whose quote changed (another edition) is ignored. Labels never
carry text, so the chapter read aloud stays the book's own (:func:`verbatim_runs` checks it). A
person's label wins over the LLM's. Saved beside the book's cast file as JSON.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from omni_web.book import Chapter
from omni_web.cast.attribution import Attribution
from omni_web.cast.dialogue import ChapterDialogue
from omni_web.errors import CastError
from omni_web.files import write_atomic

__all__ = [
    "LLM",
    "USER",
    "BookLabels",
    "QuoteLabel",
    "labels_path",
    "load_labels",
    "quote_hash",
    "relabelled",
    "verbatim_runs",
]

LLM = "llm"
USER = "user"


def quote_hash(text: str) -> str:
    """A short hash of a quote's text (a label applies only to the quote it was made for)."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]


@dataclass(frozen=True, slots=True)
class QuoteLabel:
    """Who speaks quote ``quote`` (0-based, reading order) of chapter ``chapter`` (its index), and how.

    ``speaker`` is a character's name, ``""`` for the narrator; ``delivery`` None for plainly.
    """

    chapter: int
    quote: int
    text_hash: str
    speaker: str
    confidence: float
    delivery: str | None = None
    source: str = LLM

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON."""
        data = {
            "chapter": self.chapter,
            "quote": self.quote,
            "hash": self.text_hash,
            "speaker": self.speaker,
            "confidence": self.confidence,
            "source": self.source,
        }
        return data | ({"delivery": self.delivery} if self.delivery else {})

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> QuoteLabel:
        """Inverse of :meth:`to_dict`."""
        return cls(
            int(data["chapter"]),
            int(data["quote"]),
            str(data["hash"]),
            str(data["speaker"]),
            float(data["confidence"]),
            data.get("delivery") or None,
            str(data.get("source") or LLM),
        )


@dataclass(frozen=True, slots=True)
class BookLabels:
    """Every label of one book."""

    labels: tuple[QuoteLabel, ...] = ()

    def for_chapter(self, chapter: int) -> dict[int, QuoteLabel]:
        """The chapter's labels by quote number."""
        return {label.quote: label for label in self.labels if label.chapter == chapter}

    def merged(self, new: list[QuoteLabel] | tuple[QuoteLabel, ...]) -> BookLabels:
        """These labels with ``new`` laid over them; a person's label is never replaced by the LLM's."""
        by_place = {(label.chapter, label.quote): label for label in self.labels}
        for label in new:
            old = by_place.get((label.chapter, label.quote))
            if old is not None and old.source == USER and label.source != USER:
                continue
            by_place[(label.chapter, label.quote)] = label
        return BookLabels(tuple(by_place[key] for key in sorted(by_place)))

    def to_json(self) -> str:
        """The file's text."""
        return json.dumps(
            {"labels": [label.to_dict() for label in self.labels]}, ensure_ascii=False, indent=1
        )

    @classmethod
    def from_json(cls, text: str, *, source: str) -> BookLabels:
        """Parse :meth:`to_json`'s text; ``source`` names the file in errors."""
        try:
            return cls(tuple(QuoteLabel.from_dict(item) for item in json.loads(text).get("labels") or ()))
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise CastError(
                f"The labels file {source} is damaged ({exc}). Delete it; the rules' labels "
                "are used and the LLM pass can be run again."
            ) from exc

    def save(self, path: Path) -> Path:
        """Write atomically; returns ``path``."""
        path.parent.mkdir(parents=True, exist_ok=True)
        return write_atomic(path, self.to_json())


def labels_path(cast_path: Path) -> Path:
    """The labels file beside a book's cast file."""
    return cast_path.with_name(cast_path.stem + ".labels.json")


def load_labels(path: Path) -> BookLabels:
    """The labels saved at ``path`` (none when there is no file)."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return BookLabels()
    except OSError as exc:
        raise CastError(f"Cannot read the labels file {path}: {exc}.") from exc
    return BookLabels.from_json(text, source=str(path))


def relabelled(dialogue: ChapterDialogue, labels: Mapping[int, QuoteLabel]) -> ChapterDialogue:
    """The chapter's dialogue with each label laid over its quote's attribution (when the quote's
    text is still the one labelled). A label's delivery gives way to the quote's own tag verb."""
    if not labels:
        return dialogue
    ordinal = 0
    rows: list[tuple[Attribution | None, ...]] = []
    for paragraph, row in zip(dialogue.paragraphs, dialogue.attributions, strict=True):
        out: list[Attribution | None] = []
        for span, attribution in zip(paragraph.spans, row, strict=True):
            if not span.is_dialogue or attribution is None:
                out.append(attribution)
                continue
            label = labels.get(ordinal)
            ordinal += 1
            if label is None or label.text_hash != quote_hash(span.text):
                out.append(attribution)
                continue
            out.append(
                Attribution(
                    label.speaker,
                    label.confidence,
                    f"labelled by {label.source}",
                    attribution.delivery or label.delivery,
                )
            )
        rows.append(tuple(out))
    return replace(dialogue, attributions=tuple(rows))


def verbatim_runs(chapter: Chapter, runs_by_block: Mapping[int, list[tuple[str, str]]]) -> None:
    """Check that every paragraph's speaker runs join back to the paragraph, byte for byte.

    Raises:
        CastError: a run's text is not the book's (names the chapter and paragraph).
    """
    for index, runs in runs_by_block.items():
        joined = "".join(text for _, text in runs)
        if joined != chapter.blocks[index].text:
            raise CastError(
                f"Chapter {chapter.number}, paragraph {index + 1}: the cast's speaker runs do not give back "
                "the "
                "book's text. This is a bug; render without the cast meanwhile."
            )
