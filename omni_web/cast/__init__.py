"""A cast: narration and dialogue in different voices, characters keeping theirs.

Dialogue is cut out of each paragraph in the book's quote style (:mod:`.spans`), each quote is
given a speaker with a confidence (:mod:`.attribution`), and the book's speakers are listed
(:mod:`.characters`). A :class:`Cast` maps the dialogue and characters to voices; it is saved per
book as YAML (:mod:`.store`). The pipeline chunks each run of one speaker on its own, so a chunk
never mixes narration and speech and its key includes its voice.
"""

from omni_web.cast.attribution import CONFIDENCE, Attribution, attribute_speakers, canonical_name
from omni_web.cast.characters import Character, book_roster, find_characters
from omni_web.cast.delivery import split_label, tag_delivery
from omni_web.cast.dialogue import (
    DEFAULT_MIN_CONFIDENCE,
    DIALOGUE,
    NARRATOR,
    ChapterDialogue,
    Quote,
    book_quote_style,
    chapter_dialogue,
)
from omni_web.cast.edits import CastEdits
from omni_web.cast.labels import BookLabels, QuoteLabel, labels_path, load_labels, quote_hash
from omni_web.cast.names import Age, Gender
from omni_web.cast.record import Cast
from omni_web.cast.roster import FIRST_PERSON_NARRATOR, Roster
from omni_web.cast.spans import (
    NO_DIALOGUE,
    STYLES,
    ParagraphSpans,
    QuoteStyle,
    Span,
    SpanKind,
    detect_quote_style,
    split_paragraph,
    split_paragraphs,
)
from omni_web.cast.spoken import voiced_chapter
from omni_web.cast.store import (
    CastFile,
    casts_dir,
    edit_characters,
    load_cast_file,
    saved_cast,
    saved_cast_path,
)
from omni_web.cast.voicespec import VoiceSpec

__all__ = [
    "CONFIDENCE",
    "DEFAULT_MIN_CONFIDENCE",
    "DIALOGUE",
    "FIRST_PERSON_NARRATOR",
    "NARRATOR",
    "NO_DIALOGUE",
    "STYLES",
    "Age",
    "Attribution",
    "BookLabels",
    "QuoteLabel",
    "Cast",
    "CastEdits",
    "CastFile",
    "ChapterDialogue",
    "Character",
    "Gender",
    "ParagraphSpans",
    "Quote",
    "QuoteStyle",
    "Roster",
    "Span",
    "SpanKind",
    "VoiceSpec",
    "attribute_speakers",
    "book_quote_style",
    "book_roster",
    "canonical_name",
    "casts_dir",
    "chapter_dialogue",
    "detect_quote_style",
    "edit_characters",
    "find_characters",
    "labels_path",
    "load_labels",
    "quote_hash",
    "split_label",
    "tag_delivery",
    "load_cast_file",
    "saved_cast",
    "saved_cast_path",
    "split_paragraph",
    "split_paragraphs",
    "voiced_chapter",
]
