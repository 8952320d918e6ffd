"""Quoted words that are not speech: a title ('he read "The Raven" twice'), a song ('the song
"Yankee Doodle"'), a word talked about ('the word "grin"').

The splitter (:mod:`.spans`) cuts at every quote mark; this pass gives such mentions back to the
narration, so they are read in the narrator's voice, inside the narrator's request, and never
listed as a character. A mention sits inside a sentence of narration: the text right before it
ends in a word that is not a speech verb (speech follows a comma, a colon, a sentence's end, a
speech verb or the paragraph's start), it is a few words long and not a sentence (no closing
full stop, question or exclamation mark inside), and no attribution follows it.
"""

from __future__ import annotations

import re

from omni_web.cast.attribution import SPEECH_VERBS, speaker_after
from omni_web.cast.spans import ParagraphSpans, Span, SpanKind

__all__ = ["MENTION_MAX_WORDS", "without_mentions"]

# Titles and quoted phrases are short; a quoted sentence longer than this is speech.
MENTION_MAX_WORDS = 6
_SPEECH_ENDS = ".!?…—–-"
_LAST_WORD = re.compile(r"([^\W\d_][\w’'\-]*)\s*$")


def _speech_verb(word: str) -> bool:
    """"cried", and its -ing form ("saying", "shouting") that leads into speech as well."""
    folded = word.casefold()
    if folded in SPEECH_VERBS:
        return True
    stem = folded[:-3] if folded.endswith("ing") else ""
    return bool(stem) and any(stem + end in SPEECH_VERBS for end in ("", "s", "es", "ed", "e", "ed"))


def _is_mention(before: str, span: Span, after: str) -> bool:
    if not span.closed or span.continued:
        return False
    word = _LAST_WORD.search(before)
    if word is None or _speech_verb(word.group(1)):
        return False  # opens the paragraph, follows punctuation, or "she cried “Help!”"
    inner = span.text.strip("\"'«»„“”‘’「」『』 ")
    if not inner or len(inner.split()) > MENTION_MAX_WORDS or inner[-1] in _SPEECH_ENDS:
        return False  # a sentence, an exclamation or a broken-off line is said, not named
    attribution = speaker_after(after) if after else None
    return attribution is None


def without_mentions(paragraph: ParagraphSpans) -> ParagraphSpans:
    """The paragraph with its mentions turned into narration and joined to the narration around them."""
    spans = paragraph.spans
    if not any(span.is_dialogue for span in spans):
        return paragraph
    kinds = []
    for k, span in enumerate(spans):
        before = spans[k - 1].text if k > 0 and not spans[k - 1].is_dialogue else ""
        after = spans[k + 1].text if k + 1 < len(spans) and not spans[k + 1].is_dialogue else ""
        mention = span.is_dialogue and _is_mention(before, span, after)
        kinds.append(SpanKind.NARRATION if mention or not span.is_dialogue else SpanKind.DIALOGUE)
    if all(kind is span.kind for kind, span in zip(kinds, spans, strict=True)):
        return paragraph
    merged: list[Span] = []
    for kind, span in zip(kinds, spans, strict=True):
        if kind is SpanKind.NARRATION and merged and not merged[-1].is_dialogue:
            last = merged[-1]
            merged[-1] = Span(SpanKind.NARRATION, last.start, span.end, last.text + span.text)
        elif kind is SpanKind.NARRATION:
            merged.append(Span(SpanKind.NARRATION, span.start, span.end, span.text))
        else:
            merged.append(span)
    return ParagraphSpans(tuple(merged), paragraph.open_at_end)
