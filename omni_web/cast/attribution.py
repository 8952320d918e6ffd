"""Who says each quote: speaker attribution from the narration around it, with a confidence.

Evidence, strongest first (confidence in brackets):

- a speech verb next to a name right after or before the quote: "said Ahab", "Ahab said",
  "asked Starbuck", "the March Hare meekly replied", "Alice said, “…”" (0.9 / 0.85);
- a pronoun with a speech verb ("she remarked") in a paragraph whose narration names a known
  speaker ("Alice looked all round the table…") (0.7), or a named subject opening the paragraph
  before the quote with no verb at all ("Alice sighed. “I think…”") (0.65);
- every quote of a paragraph is one speaker's, and a quote continued from the previous paragraph
  keeps its speaker;
- in an exchange of bare quotes, speakers alternate: the speaker before the previous one
  (0.6, less for every further guess in a row).

Quotes below the cast's ``min_confidence`` fall back to the dialogue voice.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from omni_web.cast.roster import Roster
from omni_web.cast.spans import ParagraphSpans, Span

__all__ = ["Attribution", "SPEECH_VERBS", "attribute_speakers", "canonical_name", "speaker_after"]

# Speech verbs in the languages the splitter's quote styles serve (en, fr, es, de, it).
SPEECH_VERBS = frozenset(
    """
    said says say asked asks answered answers replied replies cried cries shouted shouts whispered
    whispers muttered mutters added adds continued continues remarked remarks exclaimed exclaims called
    calls thought thinks began begins repeated repeats sighed sighs screamed screams yelled yells
    murmured murmurs observed observes interrupted interrupts declared declares demanded demands
    inquired inquires enquired explained explains growled growls snapped snaps retorted protested
    pleaded admitted agreed insisted suggested laughed sobbed roared grumbled urged returned
    responded stammered gasped moaned hissed rejoined shrieked bellowed sang sneered chuckled
    wondered told warned ordered called
    dit répondit demanda reprit ajouta fit cria murmura souffla lança répliqua continua poursuivit
    expliqua interrogea hurla chuchota observa déclara rétorqua soupira pensa
    dijo respondió preguntó contestó exclamó gritó murmuró añadió replicó susurró repuso
    sagte fragte antwortete rief flüsterte meinte erwiderte murmelte entgegnete
    disse chiese rispose gridò
    """.split()
)
_MULTIWORD_VERBS = ("went on", "put in", "broke in", "cut in", "called out", "cried out")
_PRONOUNS = frozenset("he she they i we it il elle ils elles on él ella er sie es lui lei".split())
# Capitalised words that are not names (sentence openers, pronouns, titles alone).
_NOT_NAMES = frozenset(
    """
    I He She It They We You The A An But And Then There This That These Those What Why How When Where
    Who Which Yes No Oh Ah Well Now So Not Here If Or Nor Yet Still Just Only All Some Any One Two
    Perhaps Indeed Alas Please Thank Thanks Come Go Let Do Don’t Don't Is Are Was Were My Your His
    Her Our Their Its Mr Mrs Ms Dr Miss Sir Madam Lady Lord Another Other Others Someone Somebody
    Everyone Everybody Nobody None Each Both Neither Either Many Several Everything Nothing Something
    In Into On Onto At By For From With Without After Before While As Of To Up Down Over Under Out
    Once Soon Later Again Presently Suddenly Meanwhile Afterwards Behind Beside Through Across Along
    Il Elle Ils Elles On Le La Les Un Une Et Mais Puis Él Ella El Los Las Er Sie Es Der Die Das
    """.split()
)
_TITLE = r"(?:(?:Mr|Mrs|Ms|Dr|Miss|Mme|Mlle|Captain|Capt|Uncle|Aunt|Lady|Lord|Sir|King|Queen|Father|Mother)\.?\s+)"
_WORD = r"[A-ZÀ-Ý][\w’'\-]*"
_NAME = rf"(?:(?:the|The)\s+)?{_TITLE}?{_WORD}(?:\s+{_WORD}){{0,2}}"
_VERB = r"[^\W\d_]+(?:\s+(?:on|in|out))?"
_ADVERB = r"(?:[^\W\d_]+ly\s+|hastily\s+|again\s+|at\s+last\s+)?"
_LEAD = r"^[\s,;:\u2014\u2013\-]*"

# After the quote: "said the Hatter", "asked Starbuck", "dijo Juan", "sagte Hans".
_VERB_NAME_AFTER = re.compile(rf"{_LEAD}({_VERB})\s+({_NAME})")
# After the quote: "Alice said", "the March Hare meekly replied", "Alice hastily replied".
_NAME_VERB_AFTER = re.compile(rf"{_LEAD}({_NAME})\s+{_ADVERB}({_VERB})\b")
# After the quote: "she remarked", "he said", "dit-il", "said he".
_PRONOUN_AFTER = re.compile(
    rf"{_LEAD}(?:([^\W\d_]+)\s+{_ADVERB}({_VERB})\b|({_VERB})\s+([^\W\d_]+)\b|([^\W\d_]+)-(?:t-)?([^\W\d_]+)\b)"
)
# Before the quote: "Alice said, ", "the Hatter said:", "said Alice: ", "Alice … and then said ".
_NAME_VERB_BEFORE = re.compile(rf"({_NAME})\s+{_ADVERB}({_VERB})\s*[,:]?\s*$")
_VERB_NAME_BEFORE = re.compile(rf"({_VERB})\s+({_NAME})\s*[,:]?\s*$")
_SENTENCE_START = re.compile(rf"(?:^|[.!?;:]\s+)({_NAME})\b")


@dataclass(frozen=True, slots=True)
class Attribution:
    """Who speaks one quote (None: unknown), how sure the guess is (0..1), on what evidence, and how."""

    speaker: str | None
    confidence: float
    evidence: str
    delivery: str | None = None  # how it is said ("whispered", …; omni_web.cast.delivery)

    @classmethod
    def unknown(cls) -> Attribution:
        """No guess."""
        return cls(None, 0.0, "none")


def canonical_name(raw: str) -> str | None:
    """A speaker's name as the cast lists it ("the March Hare" -> "March Hare"); None if not a name."""
    return _canonical(raw)


def _canonical(raw: str) -> str | None:
    """A speaker's name as the cast lists it ("the March Hare" -> "March Hare"); None if not a name."""
    name = re.sub(r"^(?:the|The)\s+", "", raw.strip()).strip(" ,.;:’'")
    words = name.split()
    if not words or words[0].rstrip(".") in _NOT_NAMES and len(words) == 1:
        return None
    if any(word.casefold() in SPEECH_VERBS for word in words):
        return None
    if name.endswith(("’s", "'s", "’", "'")):
        return None  # a possessive ("the Rabbit’s voice") names whose something, not a speaker
    return name


# What may follow a speaker's name in "said the Hatter …": punctuation, or one of these words. A
# lowercase noun there ("cried the Court pages") means the capital word was an adjective.
_AFTER_NAME_RE = re.compile(
    r"\s*(?:$|[^\w\s]|(?:and|in|with|as|to|at|who|whose|which|from|after|before|for|again|then|while|but|"
    r"when|once|still|now|quite|very|too|so|not|also|aloud|softly|slowly|sadly|gravely|angrily|at)\b|\w+ly\b)"
)


def _name_ends(text: str, end: int) -> bool:
    """Whether a name matched up to ``end`` is whole (not the first words of "the Court pages")."""
    return bool(_AFTER_NAME_RE.match(text, end))


def _is_verb(words: str) -> bool:
    """A speech verb, alone or as a phrase ("went on"); "said in (a low voice)" counts as "said"."""
    folded = words.casefold()
    return folded in _MULTIWORD_VERBS or folded.split()[0] in SPEECH_VERBS


def speaker_after(narration: str, resolve: Callable[[str], str | None] | None = None) -> Attribution | None:
    """Attribution from the narration right after a quote; ``resolve`` cleans a name (default
    :func:`canonical_name`)."""
    canonical_name = resolve or _canonical
    head = narration[:120]
    match = _VERB_NAME_AFTER.match(head)
    if match and _is_verb(match.group(1)) and _name_ends(head, match.end(2)):
        name = canonical_name(match.group(2))
        if name is not None:
            return Attribution(name, 0.9, f"“…” {match.group(1)} {match.group(2)}")
    match = _NAME_VERB_AFTER.match(head)
    if match and _is_verb(match.group(2)):
        name = canonical_name(match.group(1))
        if name is not None:
            return Attribution(name, 0.9, f"“…” {match.group(1)} {match.group(2)}")
    match = _PRONOUN_AFTER.match(head)
    if match:
        pronoun, verb = (match.group(1), match.group(2)) if match.group(1) else (
            (match.group(4), match.group(3)) if match.group(3) else (match.group(6), match.group(5))
        )
        if pronoun and verb and pronoun.casefold() in _PRONOUNS and _is_verb(verb):
            return Attribution(None, 0.0, "pronoun")
    return None


def _speaker_before(narration: str, canonical_name: Callable[[str], str | None]) -> Attribution | None:
    """Attribution from the narration right before a quote ("Alice said, “…”")."""
    tail = narration[-160:]
    match = _NAME_VERB_BEFORE.search(tail)
    if match and _is_verb(match.group(2)):
        name = canonical_name(match.group(1))
        if name is not None:
            return Attribution(name, 0.85, f"{match.group(1)} {match.group(2)} “…”")
    match = _VERB_NAME_BEFORE.search(tail)
    if match and _is_verb(match.group(1)):
        name = canonical_name(match.group(2))
        if name is not None:
            return Attribution(name, 0.85, f"{match.group(1)} {match.group(2)} “…”")
    # "Alice considered a little, and then said “The fourth.”": a named subject and a verb at the end.
    sentence = re.split(r"[.!?]\s+", tail)[-1]
    words = sentence.rstrip(" ,:").split()
    if words and _is_verb(words[-1]):
        subject = _SENTENCE_START.search(sentence)
        if subject is not None:
            name = canonical_name(subject.group(1))
            if name is not None:
                return Attribution(name, 0.8, f"{subject.group(1)} … {words[-1]} “…”")
    return None


def _named_subject(narration: str, known: set[str], canonical_name: Callable[[str], str | None]) -> str | None:
    """The first known speaker named as a sentence subject in ``narration``."""
    for match in _SENTENCE_START.finditer(narration):
        name = canonical_name(match.group(1))
        if name in known:
            return name
    return None


def _explicit(paragraph: ParagraphSpans, resolve: Callable[[str], str | None]) -> list[Attribution | None]:
    """Pass 1: speech-verb evidence next to each quote of one paragraph."""
    spans = paragraph.spans
    found: list[Attribution | None] = []
    for k, span in enumerate(spans):
        if not span.is_dialogue:
            found.append(None)
            continue
        after = spans[k + 1].text if k + 1 < len(spans) and not spans[k + 1].is_dialogue else ""
        before = spans[k - 1].text if k > 0 and not spans[k - 1].is_dialogue else ""
        guess = speaker_after(after, resolve) if after else None
        if guess is None or guess.speaker is None:
            earlier = _speaker_before(before, resolve) if before else None
            guess = earlier if earlier is not None else guess
        found.append(guess)
    return found


def attribute_speakers(
    paragraphs: Sequence[ParagraphSpans], *, roster: Roster | None = None
) -> list[list[Attribution | None]]:
    """Who speaks each quote of consecutive paragraphs (a chapter), aligned with their spans.

    Narration spans get None; every speech span gets an :class:`Attribution` (maybe unknown).
    ``roster``: the book's characters (names are then given in their one form).
    """
    resolve = roster.resolve if roster is not None else _canonical
    explicit = [_explicit(p, resolve) for p in paragraphs]
    known = {a.speaker for row in explicit for a in row if a is not None and a.speaker is not None}
    result: list[list[Attribution | None]] = []
    recent: list[str] = []  # speakers of the current exchange, latest last
    alternation_steps = 0
    previous: Attribution | None = None  # the last quote's attribution (for continued quotes)
    for paragraph, row in zip(paragraphs, explicit, strict=True):
        if not paragraph.has_dialogue:
            result.append([None] * len(paragraph.spans))
            recent, alternation_steps, previous = [], 0, None
            continue
        speaker = _paragraph_speaker(paragraph, row, known, previous, resolve)
        if speaker is None:
            speaker = _alternate(recent, alternation_steps)
            alternation_steps = alternation_steps + 1 if speaker.speaker else alternation_steps
        else:
            alternation_steps = 0
        if speaker.speaker is not None and (not recent or recent[-1] != speaker.speaker):
            recent.append(speaker.speaker)
        out: list[Attribution | None] = []
        for span, guess in zip(paragraph.spans, row, strict=True):
            if not span.is_dialogue:
                out.append(None)
            elif guess is not None and guess.speaker is not None:
                out.append(guess)
            else:
                out.append(speaker)
        result.append(out)
        previous = next((a for a in reversed(out) if a is not None), previous)
    return result


def _paragraph_speaker(
    paragraph: ParagraphSpans, row: list[Attribution | None], known: set[str], previous: Attribution | None,
    canonical_name: Callable[[str], str | None],
) -> Attribution | None:
    """One speaker for the paragraph's unattributed quotes, or None to try alternation."""
    spans: tuple[Span, ...] = paragraph.spans
    first_dialogue = next(span for span in spans if span.is_dialogue)
    if first_dialogue.continued and previous is not None and previous.speaker is not None:
        return Attribution(previous.speaker, previous.confidence, "continued quote")
    named = [a for a in row if a is not None and a.speaker is not None]
    if named:
        best = max(named, key=lambda a: a.confidence)
        return Attribution(best.speaker, round(best.confidence - 0.05, 2), f"same paragraph as {best.evidence}")
    narration = " ".join(span.text for span in spans if not span.is_dialogue)
    subject = _named_subject(narration, known, canonical_name)
    if subject is None:
        return None
    if any(a is not None and a.evidence == "pronoun" for a in row):
        return Attribution(subject, 0.7, f"{subject} … pronoun + speech verb")
    before = spans[: spans.index(first_dialogue)]
    if before:
        sentences = [s for s in re.split(r"(?<=[.!?])\s+", before[-1].text.strip()) if s]
        actor = _SENTENCE_START.match(sentences[-1]) if sentences else None
        if actor is not None and canonical_name(actor.group(1)) in known:
            # "Alice sighed wearily. “I think…”": the sentence right before the quote is hers.
            return Attribution(canonical_name(actor.group(1)), 0.65, f"{actor.group(1)} acts before the quote")
    return None


def _alternate(recent: list[str], steps: int) -> Attribution:
    """The speaker before the previous one in an exchange of bare quotes."""
    if len(recent) < 2:
        return Attribution.unknown()
    confidence = round(max(0.3, 0.6 - 0.05 * steps), 2)
    return Attribution(recent[-2], confidence, "alternation")
