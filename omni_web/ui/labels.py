"""Text labels that must line up: the model picker reads as a table; chapters numbered once.

Each label starts with a mark column (``●`` when the weights are in the cache), then the model
name padded to the widest one, then one fixed-width column per capability word (``tts``,
``clone``, ``design``). Rendered in a monospace font, every word sits in its own column.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence

from omni_web.catalog import CAPABILITY_COLUMNS, CATALOG, CatalogEntry, get_entry
from omni_web.errors import UnknownModel

__all__ = ["DOWNLOADED_MARK", "chapter_label", "model_name", "model_picker_choices", "model_picker_label"]

_GAP = "  "
DOWNLOADED_MARK = "●"


def model_picker_label(entry: CatalogEntry, *, name_width: int, downloaded: bool) -> str:
    """One row: the cache mark, the name padded to ``name_width``, then the capability columns."""
    columns = [
        word.ljust(len(column))
        for word, column in zip(entry.capability_columns(), CAPABILITY_COLUMNS, strict=True)
    ]
    mark = DOWNLOADED_MARK if downloaded else " "
    return f"{mark} " + _GAP.join([entry.label.ljust(name_width), *columns]).rstrip()


def model_picker_choices(
    downloaded: Collection[str], entries: Sequence[CatalogEntry] = CATALOG
) -> list[tuple[str, str]]:
    """``(label, key)`` pairs for the picker, downloaded models first, catalog order within."""
    width = max(len(entry.label) for entry in entries)
    ordered = sorted(entries, key=lambda entry: entry.key not in downloaded)
    return [(model_picker_label(e, name_width=width, downloaded=e.key in downloaded), e.key) for e in ordered]


def model_name(key: str | None) -> str:
    """The model as users read it (``Qwen3-TTS 0.6B CustomVoice``), never the catalog key; an id
    that is not in the catalog (a foreign server's) is shown as it is; ``-`` for none."""
    try:
        return get_entry(key).label if key else "-"
    except UnknownModel:
        return key or "-"


def chapter_label(number: int, title: str, *, width: int = 0) -> str:
    """``3. Title``, or the title alone when it already starts with its number ("1. Loomings",
    "Chapter 1: Loomings"): the checklist and the job's chapter list never say "1. 1. Loomings"."""
    if re.match(rf"\s*(?:chapter\s+)?0*{number}(?!\d)", title, re.IGNORECASE):
        return " " * max(0, width - len(str(number))) + title.strip()
    return f"{number:>{width}}. {title}"
