"""How a quote is said, read from its tag: "she whispered", "roared the Captain", "said Mary sadly".

A label from :data:`omni_web.delivery_cues.DELIVERIES`, or None for a plain line. The label rides
on the quote's speaker label as ``Speaker~whispered`` (:func:`labelled`), so a run of one speaker
said one way is one request; a cast whose model has no control drops it (:func:`split_label`) and
the runs join as before.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace

from omni_web.cast.attribution import Attribution
from omni_web.cast.spans import ParagraphSpans

__all__ = ["DELIVERY_MARK", "labelled", "split_label", "tag_delivery", "with_tag_deliveries"]

DELIVERY_MARK = "~"
_BY_WORD: dict[str, str] = {}
for _label, _words in {
    "whispered": "whispered whispers whispering murmured murmurs breathed",
    "shouted": "shouted shouts shouting yelled yells screamed screams bellowed roared shrieked hollered "
               "thundered",
    "laughing": "laughed laughs laughing chuckled giggled",
    "sad": "sobbed sobs wept moaned wailed sadly mournfully tearfully",
    "angry": "snapped snarled growled angrily furiously fiercely",
    "excited": "exclaimed excitedly eagerly",
    "fearful": "stammered gasped faltered nervously fearfully timidly",
}.items():
    _BY_WORD.update(dict.fromkeys(_words.split(), _label))
_WORDS = re.compile(r"[^\W\d_]+")
_CLAUSE_END = re.compile(r"[.!?;\u201c\u201d\"«»]")


def labelled(speaker: str, delivery: str | None) -> str:
    """``speaker`` with its delivery (``Hatter~whispered``); the bare speaker when plain."""
    return f"{speaker}{DELIVERY_MARK}{delivery}" if delivery else speaker


def split_label(label: str) -> tuple[str, str | None]:
    """Inverse of :func:`labelled`."""
    speaker, mark, delivery = label.partition(DELIVERY_MARK)
    return speaker, (delivery or None) if mark else None


def tag_delivery(after: str, before: str) -> str | None:
    """The delivery a quote's tag names: in the clause right after it ("…,” she whispered), or the
    clause that leads into it (He roared: “…”); None when the tag says nothing of it."""
    head = _CLAUSE_END.split(after.lstrip(), maxsplit=1)[0]
    for word in _WORDS.findall(head)[:6]:
        found = _BY_WORD.get(word.casefold())
        if found:
            return found
    tail = before.rstrip()
    if tail.endswith((",", ":", "\u2014")):
        clause = _CLAUSE_END.split(tail)[-1]
        for word in reversed(_WORDS.findall(clause)[-6:]):
            found = _BY_WORD.get(word.casefold())
            if found:
                return found
    return None


def with_tag_deliveries(
    paragraph: ParagraphSpans, row: Sequence[Attribution | None]
) -> tuple[Attribution | None, ...]:
    """The paragraph's attributions, each quote given the delivery its own tag names; a quote with
    no tag goes on the way the same speaker's previous quote in the paragraph was said
    ("“They are coming,” Mary whispered. “Hide the letters.”")."""
    spans = paragraph.spans
    out: list[Attribution | None] = []
    last: Attribution | None = None
    for k, (span, attribution) in enumerate(zip(spans, row, strict=True)):
        if attribution is None or not span.is_dialogue or attribution.delivery:
            out.append(attribution)
            last = attribution if attribution is not None else last
            continue
        after = spans[k + 1].text if k + 1 < len(spans) and not spans[k + 1].is_dialogue else ""
        before = spans[k - 1].text if k > 0 and not spans[k - 1].is_dialogue else ""
        delivery = tag_delivery(after, before)
        if delivery is None and last is not None and last.speaker == attribution.speaker:
            delivery = last.delivery
        attribution = replace(attribution, delivery=delivery) if delivery else attribution
        out.append(attribution)
        last = attribution
    return tuple(out)
