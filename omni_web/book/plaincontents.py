"""A plain text's table of contents set as a list with page numbers ("1.  THE OLD SEA-DOG AT THE
ADMIRAL BENBOW     11", "2.  BLACK DOG APPEARS AND DISAPPEARS . . . .  17"), under part headings.

Such a list is no chapter to read: its entries, and the part headings set between them ("PART TWO /
The Sea Cook"), make one contents part, kept apart and not preselected.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from omni_web.book.model import TextBlock
from omni_web.book.parts import Part, heading

__all__ = ["gather_contents", "is_contents_list"]

# A page number at the line's end, after dot leaders or a wide space.
_PAGE_RE = re.compile(r"(?:(?:\s\.|\.\s|\.\.)\s*|\S\s{3,})(\d{1,4})$")
_CONTENTS_WORDS = frozenset({"contents", "table of contents"})


def is_contents_list(raw_lines: Sequence[str]) -> bool:
    """Lines (with their inner spacing) that end with page numbers in page order, each line without
    one an entry wrapped onto the next ("16.  NARRATIVE CONTINUED BY THE DOCTOR:" / "HOW THE SHIP
    WAS ABANDONED . . . . . . 100")."""
    pages = [_PAGE_RE.search(line.rstrip()) for line in raw_lines]
    numbers = [int(match.group(1)) for match in pages if match]
    return (
        len(numbers) >= 2
        and pages[-1] is not None
        and all(match or after for match, after in zip(pages, pages[1:], strict=False))
        and all(a <= b for a, b in zip(numbers, numbers[1:], strict=False))
    )


def gather_contents(parts: list[Part], title: str, blocks: list[TextBlock], lines: Sequence[str]) -> None:
    """Add a contents list's ``lines`` to the book's contents part (``parts``' last one, or a new one),
    with the part being read so far (``title``, ``blocks``) closed first, unless it is only a heading
    over the list, which belongs to the contents too."""
    entries = [heading(line) for line in lines]
    if title and len(blocks) == 1:
        entries.insert(0, blocks[0])
    elif title or blocks:
        if blocks and blocks[-1].text.casefold().rstrip(".:") in _CONTENTS_WORDS:
            entries.insert(0, blocks.pop())  # the "CONTENTS" line over the list
        parts.append(Part(title=title, blocks=tuple(blocks)))
    last = parts[-1] if parts else None
    if last is not None and "toc" in last.types:
        parts[-1] = Part(title=last.title, blocks=(*last.blocks, *entries), types=last.types)
    else:
        parts.append(Part(title="Contents", blocks=tuple(entries), types=frozenset({"toc"})))
