"""Who says each quote: speaker attribution from the narration around it, with a confidence.

A chapter is read in order, keeping the scene: the characters mentioned last, the two who are
talking, and whom the last speaker spoke to. Evidence, strongest first (each rule's confidence is
the share it got right on the tuning novels of ``bench/bench_cast_accuracy.py``, so the cast's floor
of 0.6 keeps only guesses that are right at least that often):

- a tag with a name next to the quote ("said Ahab", "the March Hare meekly replied", "Alice
  said, “…”"), or "I said" in a first-person book (the narrator);
- a pronoun or noun tag ("she remarked", "cried his wife") resolved to the character of that
  gender mentioned last, not the one who spoke just before (a new paragraph is a new speaker);
- every quote of a paragraph is one speaker's, and a quote continued from the previous paragraph
  keeps its speaker; a character who acts in the paragraph right before the quote ("Alice
  sighed. “I think…”") says it;
- in an exchange, the one spoken to answers: a name called in the previous quote ("Mr. Bennet,
  have you heard…?") or "turning to X" next to it; else the two speakers take turns, across
  short narration too, until a long stretch of narration ends the scene.

Quotes below the cast's ``min_confidence`` fall back to the dialogue voice.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from omni_web.cast.letters import signed_speeches
from omni_web.cast.names import Gender, name_words, title_key, title_of
from omni_web.cast.roles import RANK_NOUNS
from omni_web.cast.roster import Roster
from omni_web.cast.scene import PRONOUN_CONFIDENCE, Scene
from omni_web.cast.spans import ParagraphSpans
from omni_web.cast.tags import (
    SPEECH_VERBS,
    Tag,
    TagKind,
    last_sentence_subject,
    lead_in,
    sentence_subjects,
    tag_after,
    tag_before,
)

__all__ = [
    "CONFIDENCE",
    "Attribution",
    "SPEECH_VERBS",
    "attribute_speakers",
    "canonical_name",
    "speaker_after",
]

# How often each rule names the right speaker (tuning novels; see the module's docstring).
CONFIDENCE = {
    "tag": 0.95,  # "said Ahab": 96 % right
    "narrator": 0.95,  # "I said" in a first-person book: 99 %
    "narrator-turn": 0.65,  # the narrator's turn in an exchange, by position alone: 66 %
    "tag-before": 0.8,  # "Alice said, “…”": 80 %
    "actor": 0.7,  # "Alice sighed. “…”": 71 %
    "continued": 0.7,  # a quote going on from the paragraph before: 68 %
    "addressee": 0.65,  # a name called in the previous quote, "turning to X": 66 %
    "pronoun": 0.6,  # "she said": 60 % overall; each tag gets PRONOUN_CONFIDENCE's, by its referent
    "lead-in": 0.65,  # "Mr. Darcy replied with great intrepidity, “…”": 66 %
    "lead-in-pronoun": 0.62,  # "he turned to her again, and said, “…”": 62 % (69 % tuning, 54 % held out)
    "paragraph": 0.55,  # an untagged quote beside a tagged one: 54 %
    "after-tag": 0.68,  # one after "“…,” said Ahab," in his paragraph ("“…”" goes on): 68 %
    "noun": 0.45,  # "cried the old man": 45 %
    "relative": 0.75,  # "cried his wife" when "his" is Mr. Bennet (Mrs. Bennet): 74 %
    "titled": 0.75,  # "said the doctor" when one character is "Doctor X" or "Dr. X"
    "signed": 0.8,  # a speech over paragraphs, signed or named by its teller ("MINA HARKER.")
}
# Turn-taking by how the exchange stands: right after a tagged line (61 %), one line on (79 %),
# further on (two speakers 60 %, more 50 %), or across narration (30 %).
_TURN_FRESH, _TURN_SETTLED, _TURN_LATER, _TURN_CROWDED, _TURN_AFTER_NARRATION = 0.6, 0.78, 0.6, 0.5, 0.3
# In a first-person book, the narrator's partner speaking again after a beat of narration (52 %).
_TURN_AFTER_BEAT = 0.5
_ADDRESS_RE = r"(?:turning|turned|said|says|replied|answered|cried|called|whispered|spoke)\s+to\s+"
_NOT_NAMES_ALONE = frozenset(
    """I He She It They We You The A An But And Then There This That These Those What Why How When Where
    Who Which Yes No Oh Ah Well Now So Not Here If Or Nor Yet Still Just Only All Some Any One Two
    Perhaps Indeed Alas Please Thank Thanks Come Go Let Do Is Are Was Were My Your His Her Our Their Its Mr
    Mrs Ms Dr Miss Sir Madam Lady Lord Another Other In On At By For From With After Before While As Of To""".split()
)


@dataclass(frozen=True, slots=True)
class Attribution:
    """Who speaks one quote (None: unknown), how sure the guess is (0..1), on what evidence, how it is
    said, and by which rule (a key of :data:`CONFIDENCE`)."""

    speaker: str | None
    confidence: float
    evidence: str
    delivery: str | None = None  # how it is said ("whispered", …; omni_web.cast.delivery)
    rule: str = ""

    @classmethod
    def unknown(cls) -> Attribution:
        """No guess."""
        return cls(None, 0.0, "none")


def canonical_name(raw: str) -> str | None:
    """A speaker's name as the cast lists it ("the March Hare" -> "March Hare"); None if not a name."""
    name = re.sub(r"^(?:the|The)\s+", "", raw.strip()).strip(" ,.;:’'")
    words = name.split()
    if not words or words[0].rstrip(".") in _NOT_NAMES_ALONE and len(words) == 1:
        return None
    if any(word.casefold() in SPEECH_VERBS for word in words):
        return None
    if name.endswith(("’s", "'s", "’", "'")):
        return None  # a possessive ("the Rabbit’s voice") names whose something, not a speaker
    return name


def speaker_after(narration: str, resolve: Callable[[str], str | None] | None = None) -> Attribution | None:
    """Attribution from a tag right after a quote: a name, or ``Attribution(None, 0, "pronoun")``."""
    tag = tag_after(narration, resolve or canonical_name)
    if tag is None:
        return None
    if tag.kind is TagKind.NAME:
        return Attribution(tag.name, CONFIDENCE["tag"], f"“…” {tag.verb} {tag.words}", rule="tag")
    return Attribution(None, 0.0, "pronoun")


def _tag_attribution(
    tag: Tag, scene: Scene, local: list[str], *, rule: str = "", quote: str = ""
) -> Attribution | None:
    quoted = scene.mentions(quote) if quote else []
    if tag.kind is TagKind.NAME:
        rule = rule or ("tag-before" if tag.before else "tag")
        return Attribution(tag.name, CONFIDENCE[rule], f"{tag.verb} {tag.words}", rule=rule)
    if tag.kind is TagKind.FIRST_PERSON:
        roster = scene.roster
        if roster is None or not roster.first_person:
            return None
        return Attribution(
            roster.narrator, CONFIDENCE["narrator"], f"{tag.words} {tag.verb}", rule="narrator"
        )
    if tag.kind is TagKind.NOUN:
        relative = _relative(tag, scene, local + quoted)
        if relative is not None:
            return Attribution(
                relative, CONFIDENCE["relative"], f"{tag.verb} {tag.words} -> {relative}", rule="relative"
            )
        titled = _titled(tag, scene)
        if titled is not None:
            return Attribution(
                titled, CONFIDENCE["titled"], f"{tag.verb} the {tag.words} -> {titled}", rule="titled"
            )
    rule = rule + "-pronoun" if rule else ("pronoun" if tag.kind is TagKind.PRONOUN else "noun")
    called = frozenset(n for n in quoted if _called(quote, n, scene))
    referent = scene.pronoun(tag.gender, local, called, again=tag.kind is TagKind.PRONOUN)
    if referent is None:
        return None
    if rule == "pronoun":
        confidence = PRONOUN_CONFIDENCE[(referent.source, min(referent.among, 3))]
    else:
        confidence = CONFIDENCE[rule]
    evidence = f"{tag.words} {tag.verb} -> {referent.name} ({referent.source}, of {referent.among})"
    return Attribution(referent.name, confidence, evidence, rule=rule)


# "his wife" is Mrs. Bennet when "his" is Mr. Bennet: the role, the title it goes with, its gender.
_RELATIVES = {
    "wife": ("mrs", Gender.FEMALE),
    "lady": ("mrs", Gender.FEMALE),
    "husband": ("mr", Gender.MALE),
    "mother": ("mrs", Gender.FEMALE),
    "father": ("mr", Gender.MALE),
    "aunt": ("mrs", Gender.FEMALE),
    "uncle": ("mr", Gender.MALE),
}


def _relative(tag: Tag, scene: Scene, around: list[str]) -> str | None:
    """The character a possessive noun tag names ("cried his wife" -> Mrs. Bennet): the wife,
    husband, mother or father who shares a surname with the last character "his"/"her" can mean."""
    owner_word, _, noun = tag.words.rpartition(" ")
    if owner_word not in ("his", "her") or noun not in _RELATIVES or scene.roster is None:
        return None
    title, gender = _RELATIVES[noun]
    owner_gender = Gender.MALE if owner_word == "his" else Gender.FEMALE
    owners = [n for n in reversed(around) if scene.gender(n) is owner_gender]
    referent = scene.pronoun(owner_gender, [])
    owner = owners[0] if owners else referent.name if referent is not None else None
    if owner is None:
        return None
    surnames = {
        words[-1]
        for form in (owner, *scene.roster.aliases(owner))
        if len(words := name_words(form)) >= 1 and (len(words) > 1 or title_of(form.split()[0]) is not None)
    }
    found = {
        scene.roster.canonical[form]
        for form in scene.roster.canonical
        if name_words(form)[-1:] and name_words(form)[-1] in surnames and title_of(form.split()[0]) == title
    } - {owner}
    found = {n for n in found if scene.gender(n) in (gender, Gender.UNKNOWN)}
    return found.pop() if len(found) == 1 else None


def _titled(tag: Tag, scene: Scene) -> str | None:
    """The one character the book gives the tag's noun as a title ("said the count" -> Count
    Mippipopolous; "the doctor" -> Dr. Losberne)."""
    if " " in tag.words or tag.words.casefold() not in RANK_NOUNS or scene.roster is None:
        return None
    title = title_key(tag.words.title())
    found = {
        character
        for form, character in scene.roster.canonical.items()
        if title_key(form)[:1] == title
    }
    return found.pop() if len(found) == 1 else None


def _quote_tags(paragraph: ParagraphSpans, scene: Scene) -> list[Attribution | None]:
    """Each quote's attribution from its own tag (None where it has none that resolves)."""
    spans = paragraph.spans
    found: list[Attribution | None] = []
    local: list[str] = []
    for k, span in enumerate(spans):
        if not span.is_dialogue:
            local.extend(scene.mentions(span.text))
            found.append(None)
            continue
        after = spans[k + 1].text if k + 1 < len(spans) and not spans[k + 1].is_dialogue else ""
        before = spans[k - 1].text if k > 0 and not spans[k - 1].is_dialogue else ""
        if k == 0 and not before:
            before = scene.lead
        guess = None
        tag = tag_after(after, scene.resolve) if after else None
        if tag is not None:
            guess = _tag_attribution(tag, scene, local, quote=span.text)
        if guess is None and before:
            tag = tag_before(before, scene.resolve)
            guess = _tag_attribution(tag, scene, local, quote=span.text) if tag is not None else None
            if guess is None:
                tag = lead_in(before, scene.resolve)
                guess = (
                    _tag_attribution(tag, scene, local, rule="lead-in", quote=span.text)
                    if tag is not None
                    else None
                )
        found.append(guess)
    return found


def _paragraph_speaker(paragraph: ParagraphSpans, row: list[Attribution | None], scene: Scene) -> Attribution:
    """One speaker for the paragraph's quotes that have no tag of their own."""
    spans = paragraph.spans
    first = next(span for span in spans if span.is_dialogue)
    previous = scene.previous
    named = [a for a in row if a is not None and a.speaker is not None]
    if named:
        best = named[0]  # the quotes before the first tag are the first tagged speaker's
        return Attribution(
            best.speaker,
            min(best.confidence, CONFIDENCE["paragraph"]),
            f"same paragraph as {best.evidence}",
            rule="paragraph",
        )
    if first.continued:
        # A speech going on is its first paragraph's speaker's, unknown where that is unknown: not
        # the one a name in it seems to call ("Compeyson, he looks at me", Magwitch's story).
        if previous is None:
            return Attribution.unknown()
        return Attribution(
            previous[0],
            min(previous[1], CONFIDENCE["continued"]),
            "continued quote",
            rule="continued",
        )
    lead = spans[: spans.index(first)]
    actor = last_sentence_subject(lead[-1].text, scene.resolve) if lead else None
    if actor is not None and (scene.roster is None or actor in scene.roster.names or actor in scene.known):
        return Attribution(actor, CONFIDENCE["actor"], f"{actor} acts before the quote", rule="actor")
    if scene.roster is None:
        narration = " ".join(span.text for span in spans if not span.is_dialogue)
        subjects = [s for s in sentence_subjects(narration, scene.resolve) if s in scene.known]
        if subjects:
            return Attribution(subjects[0], 0.7, f"{subjects[0]} in the paragraph", rule="actor")
    return _turn(scene)


def _turn(scene: Scene) -> Attribution:
    """The one spoken to, else the speaker before the last one of a two-person exchange (in a
    first-person book, after a beat of the narration, the narrator's partner again)."""
    last = scene.last_speaker
    if scene.addressee is not None and scene.addressee != last:
        return Attribution(
            scene.addressee, CONFIDENCE["addressee"], f"spoken to: {scene.addressee}", rule="addressee"
        )
    if len(scene.exchange) < 2:
        return Attribution.unknown()
    if scene.narration_words:
        confidence = _TURN_AFTER_NARRATION
    elif scene.turns == 0:
        confidence = _TURN_FRESH
    elif scene.turns == 1:
        confidence = _TURN_SETTLED
    else:
        confidence = _TURN_LATER if len(scene.exchange) == 2 and scene.turns <= 3 else _TURN_CROWDED
    other = scene.exchange[-2]
    if scene.roster is not None and scene.roster.first_person and other == scene.roster.narrator:
        if scene.narration_words and last is not None:
            # After a beat of the narration the narrator's partner goes on more often than the
            # narrator speaks ("“…” / I lit the cigarette. / “…”": 52 % against 33 %).
            return Attribution(last, _TURN_AFTER_BEAT, f"turn-taking: {last} again", rule="turn")
        # The narrator's turn, by position alone.
        return Attribution(other, CONFIDENCE["narrator-turn"], "turn-taking", rule="narrator-turn")
    return Attribution(other, confidence, "turn-taking", rule="turn")


def _addressee(paragraph: ParagraphSpans, speaker: str | None, scene: Scene) -> str | None:
    """Whom the paragraph's speaker speaks to: "turning to X", or a name called in the quote."""
    for span in paragraph.spans:
        if span.is_dialogue:
            continue
        cue = re.search(_ADDRESS_RE + r"(.{1,40})", span.text)
        if cue:
            names = scene.mentions(cue.group(1))
            if names and names[0] != speaker:
                return names[0]
    for span in reversed(paragraph.spans):
        if span.is_dialogue:
            for name in scene.mentions(span.text):
                if name != speaker and _called(span.text, name, scene):
                    return name
    return None


def _called(quote: str, name: str, scene: Scene) -> bool:
    """Whether ``name`` is called out in the quote ("Lizzy, come here", "…, my dear Jane!")."""
    for match in scene.forms_re.finditer(quote) if scene.forms_re is not None else ():
        if scene.resolve(match.group(1)) != name:
            continue
        before = quote[: match.start()].rstrip(" ")
        after = quote[match.end() :]
        if re.match(r"\s*[,!?.;—\-_]", after) and (
            before == "" or before[-1] in ",“\"‘'(—-_" or re.search(r"\b(?:dear|my|oh|O)\s*$", before, re.I)
        ):
            return True
    return False


def _fill(
    paragraph: ParagraphSpans, row: list[Attribution | None], speaker: Attribution
) -> list[Attribution | None]:
    """Each quote's attribution: its own tag's, else the nearest tagged quote's before it in the
    paragraph (a speaker goes on until another is named), else the paragraph's speaker."""
    out: list[Attribution | None] = []
    current: Attribution | None = None
    for span, guess in zip(paragraph.spans, row, strict=True):
        if not span.is_dialogue:
            out.append(None)
        elif guess is not None and guess.speaker is not None:
            current = guess
            out.append(guess)
        elif current is not None:
            carried = min(current.confidence, CONFIDENCE["paragraph"])
            out.append(
                Attribution(
                    current.speaker,
                    CONFIDENCE["after-tag"] if current.rule == "tag" else carried,
                    f"same paragraph as {current.evidence}",
                    rule="paragraph",
                )
            )
        else:
            out.append(speaker)
    return out


def attribute_speakers(
    paragraphs: Sequence[ParagraphSpans], *, roster: Roster | None = None
) -> list[list[Attribution | None]]:
    """Who speaks each quote of consecutive paragraphs (a chapter), aligned with their spans.

    Narration spans get None; every speech span gets an :class:`Attribution` (maybe unknown).
    ``roster``: the book's characters (:func:`~omni_web.cast.characters.book_roster`): names are
    given in their one form, and pronouns resolve by the characters' genders.
    """
    scene = Scene(roster, set(), canonical_name)
    explicit = [_quote_tags(p, scene) for p in paragraphs]
    speakers = {a.speaker for row in explicit for a in row if a is not None and a.speaker}
    scene = Scene(roster, speakers, canonical_name)
    known = set(roster.canonical.values()) if roster is not None else speakers
    writers = signed_speeches(paragraphs, scene.resolve, known)
    result: list[list[Attribution | None]] = []
    for k, paragraph in enumerate(paragraphs):
        if not paragraph.has_dialogue:
            result.append([None] * len(paragraph.spans))
            scene.narrated("".join(span.text for span in paragraph.spans))
            continue
        row = _quote_tags(paragraph, scene)
        speaker = _paragraph_speaker(paragraph, row, scene)
        if k in writers and speaker.rule != "paragraph":
            # A letter's signature, or a teller's own name, over the whole of their speech.
            writer = writers[k]
            speaker = Attribution(writer, CONFIDENCE["signed"], f"written or told by {writer}", rule="signed")
        out = _fill(paragraph, row, speaker)
        for span in paragraph.spans:
            if not span.is_dialogue:
                scene.remember(scene.mentions(span.text))
        result.append(out)
        last = next((a for a in reversed(out) if a is not None), None)
        scene.previous = (last.speaker, last.confidence) if last is not None and last.speaker else None
        who = last.speaker if last is not None else None
        tagged = any(a is not None and a.rule in ("tag", "tag-before", "narrator") for a in out)
        scene.spoke(who, _addressee(paragraph, who, scene), tagged=tagged)
    return result
