"""What a conversion is asked to do, as a frozen record that round-trips through job params."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from omni_web.cast import DEFAULT_MIN_CONFIDENCE, BookLabels, Cast, CastEdits, QuoteLabel
from omni_web.client import VoiceChoice, VoiceKind
from omni_web.deliver.layout import OutputLayout
from omni_web.errors import ChapterSelectionError
from omni_web.qa.thresholds import QaLevel, parse_level
from omni_web.records import JsonRecord

if TYPE_CHECKING:
    from omni_web.settings import Settings

__all__ = [
    "MASTERING_SETTINGS",
    "ConvertRequest",
    "cast_from_dict",
    "cast_to_dict",
    "parse_chapter_spec",
    "voice_from_dict",
    "voice_to_dict",
]


def voice_to_dict(voice: VoiceChoice) -> dict[str, Any]:
    """Plain JSON for a voice choice."""
    data: dict[str, Any] = {
        "kind": voice.kind.value,
        "name": voice.name,
        "reference": str(voice.reference) if voice.reference else None,
        "ref_text": voice.ref_text,
        "instructions": voice.instructions,
    }
    if voice.delivery:  # only when set: older jobs' params keep their shape
        data["delivery"] = voice.delivery
    return data


def voice_from_dict(data: Mapping[str, Any]) -> VoiceChoice:
    """Inverse of :func:`voice_to_dict`."""
    reference = data.get("reference")
    return VoiceChoice(
        kind=VoiceKind(data.get("kind", "default")),
        name=data.get("name") or "",
        reference=Path(reference) if reference else None,
        ref_text=data.get("ref_text"),
        instructions=data.get("instructions"),
        delivery=data.get("delivery") or None,
    )


def cast_to_dict(cast: Cast | None) -> dict[str, Any] | None:
    """Plain JSON for a cast (None stays None)."""
    if cast is None:
        return None
    data: dict[str, Any] = {
        "dialogue": voice_to_dict(cast.dialogue) if cast.dialogue is not None else None,
        "characters": [[name, voice_to_dict(voice)] for name, voice in cast.characters],
        "min_confidence": cast.min_confidence,
    }
    if cast.delivery:  # only when on: older jobs' params keep their shape
        data["delivery"] = True
    if cast.labels.labels:
        data["labels"] = [label.to_dict() for label in cast.labels.labels]
    if not cast.edits.empty:
        data["edits"] = cast.edits.to_yaml()  # only when edited: older jobs' params keep their shape
    return data


def cast_from_dict(data: Mapping[str, Any] | None) -> Cast | None:
    """Inverse of :func:`cast_to_dict`."""
    if not data:
        return None
    dialogue = data.get("dialogue")
    return Cast(
        dialogue=voice_from_dict(dialogue) if dialogue else None,
        characters=tuple((str(name), voice_from_dict(voice)) for name, voice in data.get("characters") or ()),
        min_confidence=float(data.get("min_confidence", DEFAULT_MIN_CONFIDENCE)),
        delivery=bool(data.get("delivery", False)),
        labels=BookLabels(tuple(QuoteLabel.from_dict(item) for item in data.get("labels") or ())),
        edits=CastEdits.from_yaml(data.get("edits"), source="the job's cast"),
    )


# The settings that shape a book's mastered chapter files and its join (omni_web.pipeline.mastering):
# a run keeps the values it used with its request, so a regenerated chunk is mastered like the rest.
MASTERING_SETTINGS = (
    "loudness",
    "aac_bitrate_kbps",
    "pause_between_chapters_ms",
    "output_format",
    "also_mp3_chapters",
)


def parse_chapter_spec(spec: str) -> tuple[int, ...]:
    """Parse ``"1-3,5"`` into 1-based chapter numbers ``(1, 2, 3, 5)``."""
    numbers: list[int] = []
    for part in filter(None, (p.strip() for p in spec.split(","))):
        try:
            if "-" in part:
                first, last = (int(x) for x in part.split("-", 1))
                if first > last:
                    raise ValueError
                numbers.extend(range(first, last + 1))
            else:
                numbers.append(int(part))
        except ValueError:
            raise ChapterSelectionError(
                f"Bad chapter selection '{part}': use numbers and ranges like 1-3,5."
            ) from None
    if any(n < 1 for n in numbers):
        raise ChapterSelectionError("Chapter numbers start at 1.")
    return tuple(dict.fromkeys(numbers))


@dataclass(frozen=True, slots=True)
class ConvertRequest(JsonRecord):
    """One book to convert, with every choice that shapes the result; stored as the job's params.

    ``chapters`` holds 1-based chapter numbers; None means the book's default selection (front
    and back matter deselected). ``None`` settings fall back to the user's Settings. Fields with a
    closed set of values hold their enum (a caller may pass its plain word: ``"asr"``, ``"flat"``).
    """

    book_path: Path
    model_key: str
    voice: VoiceChoice = field(default_factory=VoiceChoice.default)
    chapters: tuple[int, ...] | None = None
    chunk_words: int | None = None
    # The user chose to keep a chunk size above the model's per-request word cap (audio may cut off).
    keep_over_cap: bool = False
    concurrency: int | None = None
    language: str | None = None
    output_format: str | None = None  # m4b | mp3
    also_mp3_chapters: bool | None = None
    output_dir: Path | None = None
    api_url: str | None = None
    # Dialogue and character voices beside ``voice`` (the narrator's); None reads everything in one voice.
    cast: Cast | None = None
    # Audio QA (None = the user's Settings): off | basic | asr, the ASR model, takes per chunk.
    qa_level: QaLevel | None = None
    qa_model: str | None = None
    qa_takes: int | None = None
    readalong: bool = False  # also write subtitles and <Title>.readalong.epub (omni_web.readalong)
    # The file stem this job claimed for its m4b / MP3 folder (pipeline.outputs); None: the title.
    output_name: str | None = None
    loudness: str | None = None  # a mastering preset (omni_web.master.PRESET_NAMES); None = the setting
    # How ``output_name`` turns into paths (omni_web.deliver.layout.OutputLayout), fixed when the
    # name is claimed; a job stored before layouts existed reads back as "flat", where its files are.
    output_layout: OutputLayout = OutputLayout.LIBRARY
    # The user's corrections to the book's metadata before rendering, as (field, value) pairs of
    # omni_web.deliver.metadata.EDITABLE_FIELDS ("title", "series", ...); empty: the book's own.
    metadata: tuple[tuple[str, str], ...] = ()
    # Footnotes inside chapters: skip | end-of-paragraph (omni_web.book.options); None = the setting.
    # Kept with the job so a resume or a regenerated chunk reads the book as the job did.
    footnotes: str | None = None
    # (setting, value) pairs of MASTERING_SETTINGS the book was made with (see with_mastering);
    # empty: the user's Settings at run time.
    mastering: tuple[tuple[str, Any], ...] = ()

    def with_mastering(self, settings: Settings) -> ConvertRequest:
        """This request with its mastering settings kept: its own choices, else ``settings``' values."""
        if self.mastering:
            return self
        own = {
            "loudness": self.loudness,
            "output_format": self.output_format,
            "also_mp3_chapters": self.also_mp3_chapters,
        }
        kept = tuple(
            (name, own[name] if own.get(name) not in (None, "") else getattr(settings, name))
            for name in MASTERING_SETTINGS
        )
        return replace(self, mastering=kept)

    def mastering_settings(self, settings: Settings) -> Settings:
        """``settings`` with the kept mastering values in place of the current ones."""
        return replace(settings, **dict(self.mastering)) if self.mastering else settings

    def __post_init__(self) -> None:
        object.__setattr__(self, "output_layout", OutputLayout(self.output_layout))
        object.__setattr__(self, "qa_level", parse_level(self.qa_level) if self.qa_level else None)

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON for the job store (the voice and the cast in their own shapes, mastering as an object)."""
        doc = JsonRecord.to_dict(self)
        doc.update(
            voice=voice_to_dict(self.voice), cast=cast_to_dict(self.cast), mastering=dict(self.mastering)
        )
        return doc

    def same_work_as(self, other: ConvertRequest) -> bool:
        """True when both ask for the same audio (where the files go does not count)."""
        mine, theirs = self.to_dict(), other.to_dict()
        # The kept mastering is what a run used, not what was asked for.
        for name in ("output_name", "output_layout", "mastering"):
            mine.pop(name)
            theirs.pop(name)
        return mine == theirs

    @classmethod
    def read(cls, data: Mapping[str, Any] | None) -> ConvertRequest:
        """The request a stored job's params describe, for showing and bookkeeping: never raises.

        Params that lack the book or the model (a job of another kind, a row from an older
        version) read with an empty ``model_key`` and book; a field it cannot read leaves only those.
        """
        data = dict(data or {})
        data["book_path"] = data.get("book_path") or ""
        data["model_key"] = str(data.get("model_key") or "")
        try:
            return cls.from_dict(data)
        except (TypeError, ValueError, AttributeError):
            return cls(book_path=Path(str(data["book_path"])), model_key=data["model_key"])

    @classmethod
    def from_dict(cls, data: Mapping[str, Any] | None) -> ConvertRequest:
        """Inverse of :meth:`to_dict`; reads the params of jobs stored by older versions too.

        Raises:
            TypeError: ``book_path`` or ``model_key`` is missing.
            ValueError: a closed field holds a word it does not know.
        """
        data = dict(data or {})
        voice, cast, mastering = data.pop("voice", None), data.pop("cast", None), data.pop("mastering", None)
        # A job stored before layouts existed reads back as flat, where its files are.
        data["output_layout"] = data.get("output_layout") or OutputLayout.FLAT
        if not data.get("output_dir"):
            data.pop("output_dir", None)
        base = JsonRecord.from_dict.__func__(cls, data)  # type: ignore[attr-defined]
        kept = tuple((str(k), v) for k, v in (mastering or {}).items() if k in MASTERING_SETTINGS)
        return replace(base, voice=voice_from_dict(voice or {}), cast=cast_from_dict(cast), mastering=kept)
