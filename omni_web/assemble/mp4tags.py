"""The m4b's identifiers (ISBN, ASIN) as iTunes free-form atoms, set in place after the join.

ffmpeg's MP4 muxer writes only the iTunes atoms it knows; a free-form ``----`` atom needs
``-movflags use_metadata_tags``, which drops the standard atoms players read. So the join writes a
placeholder tag (``lyrics``, ©lyr) as long as the identifiers will be, and :func:`set_identifier_tags`
swaps it for them with mutagen. The swap keeps the tag list's size, so mutagen rewrites only that
list inside the index: the audio is never moved, whether the index sits before the audio
(``+faststart``) or after it (the live join). ffprobe shows a free-form atom by its name, and
Audiobookshelf reads the format tags ``isbn``/``ISBN`` and ``asin``/``ASIN``
(audiobookshelf ``server/utils/prober.js``, parseTags).
"""

from __future__ import annotations

from pathlib import Path

from mutagen import MutagenError
from mutagen.mp4 import MP4, AtomDataType, MP4FreeForm

from omni_web.assemble.records import AudiobookTags
from omni_web.errors import FfmpegError

__all__ = ["PLACEHOLDER_KEY", "identifier_pairs", "placeholder_tag", "set_identifier_tags"]

PLACEHOLDER_KEY = "lyrics"  # ffmpeg's name for ©lyr; nothing of ours writes it otherwise
_PLACEHOLDER_ATOM = "\xa9lyr"
_FREEFORM = "----:com.apple.iTunes:"
# A free-form atom: 8 (----) + 28 (mean "com.apple.iTunes") + 12 + name (name) + 16 + value (data).
_FREEFORM_OVERHEAD = 8 + 28 + 12 + 16
# The ©lyr atom holding the placeholder: 8 + 16 (data) + value; mutagen's free atom header: 8.
_PLACEHOLDER_OVERHEAD = 8 + 16
_SPARE = 64


def identifier_pairs(tags: AudiobookTags) -> list[tuple[str, str]]:
    """``[("ISBN", ...), ("ASIN", ...)]`` for the identifiers the book has (upper-case names, as
    Audiobookshelf's prober looks them up either way)."""
    pairs = [("ISBN", tags.isbn.strip()), ("ASIN", tags.asin.strip())]
    return [(name, value) for name, value in pairs if value]


def placeholder_tag(tags: AudiobookTags) -> tuple[str, str] | None:
    """The FFMETADATA tag that reserves room for the identifiers in the index, or None without any."""
    pairs = identifier_pairs(tags)
    if not pairs:
        return None
    needed = sum(_FREEFORM_OVERHEAD + len(name) + len(value.encode("utf-8")) for name, value in pairs)
    return PLACEHOLDER_KEY, "." * max(1, needed + 8 + _SPARE - _PLACEHOLDER_OVERHEAD)


def set_identifier_tags(path: Path, tags: AudiobookTags) -> None:
    """Swap the placeholder of a just-joined m4b for its ISBN/ASIN free-form atoms, in place.

    Call it on the file before it is published (the join's scratch file): an interrupted write
    then never reaches the user. Without identifiers nothing is touched.

    Raises:
        FfmpegError: the file is not an MP4 mutagen can tag (the join went wrong).
    """
    pairs = identifier_pairs(tags)
    if not pairs:
        return
    try:
        mp4 = MP4(path)
        if mp4.tags is None:
            mp4.add_tags()
        mp4.tags.pop(_PLACEHOLDER_ATOM, None)
        for name, value in pairs:
            mp4.tags[_FREEFORM + name] = [MP4FreeForm(value.encode("utf-8"), dataformat=AtomDataType.UTF8)]
        # Keep the room the placeholder left as padding: the list keeps its size, nothing moves.
        mp4.save(padding=lambda info: info.padding if info.padding >= 0 else 1024)
    except MutagenError as exc:
        raise FfmpegError(f"Could not write the ISBN/ASIN tags into {Path(path).name}: {exc}. "
                          "Build the audiobook again.") from exc
