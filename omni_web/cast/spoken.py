"""A chapter cut by speaker, in spoken form: the dialogue split first, then lexicon and normalisation.

The split reads the book's own marks (curly quotes tell a closing quote from an apostrophe, a
leading dash opens a line of speech), which normalisation straightens or turns into commas; so the
spans are found in the text as written and each span then goes through the job's spoken form
(:class:`omni_web.text.SpokenForm`: lexicon, numbers, abbreviations). What is sent for every chunk
is exactly the spoken form, as without a cast, and narration outside any quote is sent unchanged.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace

from omni_web.book import Chapter, TextBlock, count_words
from omni_web.book.text import join_text
from omni_web.cast.dialogue import chapter_dialogue
from omni_web.cast.labels import QuoteLabel, relabelled, verbatim_runs
from omni_web.cast.roster import Roster
from omni_web.cast.spans import QuoteStyle
from omni_web.text import SpokenForm

__all__ = ["voiced_chapter"]


def voiced_chapter(
    chapter: Chapter, speech: SpokenForm, style: QuoteStyle, *, min_confidence: float,
    label_of: Callable[[str], str] | None = None, labels: Mapping[int, QuoteLabel] | None = None,
    roster: Roster | None = None,
) -> tuple[Chapter, dict[int, list[tuple[str, str]]]]:
    """The chapter in spoken form, and per block index its (speaker, spoken text) runs.

    Feed both to :func:`omni_web.book.chunk_chapter` (``speakers=``): blocks without speech are
    chunked as a single-voice job chunks them. ``label_of``: see
    :meth:`~omni_web.cast.dialogue.ChapterDialogue.segments`; ``labels``: the chapter's labels by
    quote number (:mod:`omni_web.cast.labels`). The runs are checked to be the book's own text
    before any spoken-form rule touches them.
    ``roster``: the book's characters (:func:`~omni_web.cast.characters.book_roster`), so a quote
    carries its character's one name.
    """
    transforms = speech.rules is not None or bool(speech.pronouncer)

    def say(text: str) -> str:
        # As SpokenForm.chapter: untouched when neither a lexicon nor rules apply.
        return speech.spoken(text) if transforms else text

    dialogue = relabelled(chapter_dialogue(chapter, style, roster=roster), labels or {})
    runs_by_block = dialogue.segments(min_confidence=min_confidence, label_of=label_of)
    verbatim_runs(chapter, runs_by_block)
    blocks: list[TextBlock] = []
    speakers: dict[int, list[tuple[str, str]]] = {}
    for index, block in enumerate(chapter.blocks):
        runs = runs_by_block.get(index)
        if runs is None:
            text = say(block.text)
            if text:
                blocks.append(TextBlock(kind=block.kind, text=text))
            continue
        spoken = [(who, speech.spoken(text)) for who, text in runs]
        spoken = [(who, text) for who, text in spoken if text]
        if not spoken:
            continue
        speakers[len(blocks)] = spoken
        joined = ""
        for _, text in spoken:
            joined = join_text(joined, text)
        blocks.append(TextBlock(kind=block.kind, text=joined))
    voiced = replace(
        chapter,
        title=say(chapter.title) or chapter.title,
        blocks=tuple(blocks),
        word_count=sum(count_words(b.text) for b in blocks),
    )
    return voiced, speakers
