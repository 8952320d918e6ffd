"""Speech tags: the words beside a quote that say who speaks it.

A tag right after a quote ("…,” said Ahab; “…,” the March Hare meekly replied; “…,” she said;
“…,” cried his wife; “…,” said I) or right before it (Alice said, “…”; Stubb said: “…”) is read
into a :class:`Tag`: a name, a pronoun or a noun with the gender it shows, or the first person.
Resolving a pronoun or a noun to a character is the attribution's work (:mod:`.attribution`),
which knows who was mentioned last.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Callable
from dataclasses import dataclass

from omni_web.cast.names import NAME_PARTICLES, NOT_A_SENTENCE_END, Gender, sentence_break

__all__ = [
    "SPEECH_VERBS",
    "Tag",
    "TagKind",
    "is_speech_verb",
    "last_sentence_subject",
    "lead_in",
    "sentence_subjects",
    "tag_after",
    "tag_before",
]

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
    wondered told warned ordered called resumed persisted pursued assented acknowledged
    ejaculated faltered concluded corrected interposed observed retorted rejoined cried exclaimed
    laughed smiled nodded asserted quavered entreated bawled exploded promised blustered supplied confided
    assured stated admonished
    groaned breathed ventured offered mumbled stuttered spluttered sputtered wailed whimpered
    snorted sniffed panted mused scoffed jeered drawled croaked squeaked piped chirped grunted
    barked thundered conceded confessed announced proclaimed commented cautioned objected queried
    blurted reflected reasoned volunteered echoed hazarded lisped whined fumed raged teased coaxed
    questioned interjected remonstrated expostulated speculated acquiesced reassured argued quoted
    pronounced complained begged reported appealed implored uttered reiterated proposed commanded
    screeched demurred vociferated
    dit répondit demanda reprit ajouta fit cria murmura souffla lança répliqua continua poursuivit
    expliqua interrogea hurla chuchota observa déclara rétorqua soupira pensa
    dijo respondió preguntó contestó exclamó gritó murmuró añadió replicó susurró repuso
    sagte fragte antwortete rief flüsterte meinte erwiderte murmelte entgegnete
    disse chiese rispose gridò
    """.split()
)
_MULTIWORD_VERBS = tuple("went on|put in|broke in|cut in|called out|cried out|broke out|burst out".split("|"))
_PRONOUN_GENDER = {
    "he": Gender.MALE,
    "she": Gender.FEMALE,
    "il": Gender.MALE,
    "elle": Gender.FEMALE,
    "él": Gender.MALE,
    "ella": Gender.FEMALE,
    "er": Gender.MALE,
    "lui": Gender.MALE,
    "lei": Gender.FEMALE,
}
_OTHER_PRONOUNS = frozenset("they it ils elles on sie es we".split())
_FIRST_PERSON = frozenset("i je yo ich io".split())
# Nouns a tag names someone by ("his wife cried", "said the old man"), with the gender they show.
_FEMALE_NOUNS = frozenset(
    """wife mother sister aunt daughter niece girl woman lady mistress widow bride maid maiden hostess
    queen princess duchess countess governess nurse grandmother cousin-german lass dame""".split()
)
_MALE_NOUNS = frozenset(
    """husband father brother uncle son nephew boy man gentleman master host king prince duke count
    lord grandfather lad fellow youth squire captain colonel doctor clergyman vicar rector professor
    inspector major general judge sergeant lieutenant admiral baron marquis""".split()
)


class TagKind(enum.StrEnum):
    """What a tag names the speaker by."""

    NAME = "name"
    PRONOUN = "pronoun"
    NOUN = "noun"
    FIRST_PERSON = "first-person"


@dataclass(frozen=True, slots=True)
class Tag:
    """A speech tag: the speaker's name, or the gender a pronoun or noun shows; its words and verb."""

    kind: TagKind
    words: str  # as written ("the March Hare", "she", "his wife", "I")
    verb: str
    name: str | None = None  # a NAME tag's character
    gender: Gender = Gender.UNKNOWN
    before: bool = False  # the tag leads into the quote ("Alice said, “…”")


_TITLE = r"(?:(?:Mr|Mrs|Ms|Dr|Miss|Mme|Mlle|Captain|Capt|Colonel|Uncle|Aunt|Lady|Lord|Sir|King|Queen|Father|Mother)\.?\s+)"
_WORD = r"[A-ZÀ-Ý][\w’'\-]*"
_NAME = rf"(?:(?:the|The)\s+)?{_TITLE}?(?:{NAME_PARTICLES})?{_WORD}(?:\s+(?:{NAME_PARTICLES})?{_WORD}){{0,2}}"
_VERB = r"[^\W\d_]+(?:\s+(?:on|in|out))?"
# One adverb, or an auxiliary with one ("Winsett had once said").
_ADVERB = (
    r"(?:(?:had|has|would)\s+(?:once\s+|[^\W\d_]+ly\s+)?|[^\W\d_]+ly\s+|hastily\s+|again\s+|at\s+last\s+"
    r"|then\s+|now\s+)?"
)
_LEAD = r"^[\s,;:_\u2014\u2013\-]*"
_NOUN = r"(?:(?:his|her|their|my|our|the|a|an|its)\s+(?:[a-z][\w\-]*\s+){0,2}?([a-z][\w\-]*))"
_OWNER = re.compile(r"\b(his|her)\s+(?:[a-z][\w\-]*\s+){0,2}?([a-z][\w\-]*)\b")

_VERB_NAME_AFTER = re.compile(rf"{_LEAD}({_VERB})\s+({_NAME})")
# "said wise Lucy", "responded the ingenious Giovanelli": a describing word before the name.
_VERB_DESCRIBED_NAME_AFTER = re.compile(
    rf"{_LEAD}({_VERB})\s+(?:(?:the|poor|old|little)\s+)?([a-z][\w\-]*)\s+"
    rf"({_TITLE}?{_WORD}(?:\s+{_WORD}){{0,2}})"
)
_NOT_DESCRIBING = frozenset(
    """to at in on with for from of by and but or as that this not so then now again once only also quite
    very up down out over into upon after before when while if he she it they i we you his her their
    its my our your a an the no yes""".split()
)
_NAME_VERB_AFTER = re.compile(rf"{_LEAD}({_NAME})\s+{_ADVERB}({_VERB})\b")
_PRONOUN_AFTER = re.compile(
    rf"{_LEAD}(?:([^\W\d_]+)\s+{_ADVERB}({_VERB})\b|({_VERB})\s+([^\W\d_]+)\b|([^\W\d_]+)-(?:t-)?([^\W\d_]+)\b)"
)
# "“…” was Edmund’s only reply", "“…” was her answer": the one whose reply it is speaks.
_REPLY_AFTER = re.compile(
    rf"{_LEAD}(?:was|came)\s+(?:({_NAME})[’']s|(his|her|my))\s+(?:[a-z]+\s+){{0,2}}?"
    r"(?:reply|answer|response|rejoinder|retort|remark|comment|exclamation|cry|observation|greeting)\b"
)
_VERB_PRONOUN_AFTER = re.compile(rf"{_LEAD}({_VERB})\s+([^\W\d_]+)\b")
_VERB_NOUN_PHRASE_AFTER = re.compile(
    rf"{_LEAD}({_VERB})\s+(?:his|her|their|my|our|the|a|an|its)\s+((?:[a-z][\w\-]*\s+){{0,2}}[a-z][\w\-]*)"
)
_NOUN_AFTER = re.compile(rf"{_LEAD}(?:({_VERB})\s+{_NOUN}|{_NOUN}\s+{_ADVERB}({_VERB})\b)")
_NAME_VERB_BEFORE = re.compile(rf"({_NAME})\s+{_ADVERB}({_VERB})\s*[,:]?\s*_?$")
_VERB_NAME_BEFORE = re.compile(rf"({_VERB})\s+({_NAME})\s*[,:]?\s*_?$")
_PRONOUN_BEFORE = re.compile(rf"(?:^|[.!?;]\s+|,\s+)([A-Za-z]+)\s+{_ADVERB}({_VERB})\s*[,:]?\s*_?$")
_NAME_WORD_VERB = re.compile(
    rf"\b({_NAME})\s+(?:(?:still|then|now|again|also|once|[a-z]+ly)\s+)?[a-z]+\s*[,:]?\s*_?$"
)
_SENTENCE_START = re.compile(rf"(?:^|[.!?;:]{NOT_A_SENTENCE_END}\s+)({_NAME})\b")
_BREAK = sentence_break(".!?")
_BREAK_OR_SEMICOLON = sentence_break(".!?;")
# What may follow a speaker's name in "said the Hatter …": punctuation, or one of these words. A
# lowercase noun there ("cried the Court pages") means the capital word was an adjective.
_AFTER_NAME_RE = re.compile(
    r"\s*(?:$|[^\w\s]|(?:and|in|with|as|to|at|who|whose|which|from|after|before|for|again|then|while|but|"
    r"when|once|still|now|quite|very|too|so|not|also|aloud|softly|slowly|sadly|gravely|angrily|at|"
    r"presently|instantly|eagerly|coldly|warmly|gaily|quickly|quietly|laughing|smiling|turning|looking|"
    r"the|a|his|her|their|on|over|upon|into|through|without|under|across|by)\b|\w+ly\b)"
)

Resolve = Callable[[str], "str | None"]


def is_speech_verb(words: str) -> bool:
    """A speech verb, alone or as a phrase ("went on"); "said in (a low voice)" counts as "said"."""
    folded = words.casefold()
    return folded in _MULTIWORD_VERBS or folded.split()[0] in SPEECH_VERBS


def _speaks_to_name(verb: str) -> bool:
    """A verb a speaker's name may follow ("said", "broke in"); "said in English" names a language,
    and "cried out to Bill" whom they speak to."""
    folded = verb.casefold()
    return is_speech_verb(verb) and (" " not in folded or folded in _MULTIWORD_VERBS)


def _name_ends(text: str, end: int) -> bool:
    return bool(_AFTER_NAME_RE.match(text, end))


def _pronoun_tag(word: str, verb: str, *, before: bool = False) -> Tag | None:
    folded = word.casefold()
    if not is_speech_verb(verb):
        return None
    if folded in _FIRST_PERSON:
        return Tag(TagKind.FIRST_PERSON, word, verb, before=before)
    if folded in _PRONOUN_GENDER:
        return Tag(TagKind.PRONOUN, word, verb, gender=_PRONOUN_GENDER[folded], before=before)
    if folded in _OTHER_PRONOUNS:
        return Tag(TagKind.PRONOUN, word, verb, before=before)
    return None


def _noun_gender(noun: str) -> Gender:
    folded = noun.casefold()
    if folded in _FEMALE_NOUNS:
        return Gender.FEMALE
    return Gender.MALE if folded in _MALE_NOUNS else Gender.UNKNOWN


def tag_after(narration: str, resolve: Resolve) -> Tag | None:
    """The tag that opens the narration right after a quote, if any."""
    head = narration[:120]
    match = _VERB_NAME_AFTER.match(head)
    if match and _speaks_to_name(match.group(1)) and _name_ends(head, match.end(2)):
        name = resolve(match.group(2))
        if name is not None:
            return Tag(TagKind.NAME, match.group(2), match.group(1), name=name)
    match = _VERB_DESCRIBED_NAME_AFTER.match(head)
    if (
        match
        and _speaks_to_name(match.group(1))
        and match.group(2) not in _NOT_DESCRIBING
        and _name_ends(head, match.end(3))
    ):
        name = resolve(match.group(3))
        if name is not None:
            return Tag(TagKind.NAME, match.group(3), match.group(1), name=name)
    match = _NAME_VERB_AFTER.match(head)
    if match and is_speech_verb(match.group(2)):
        name = resolve(match.group(1))
        if name is not None:
            return Tag(TagKind.NAME, match.group(1), match.group(2), name=name)
    match = _PRONOUN_AFTER.match(head)
    if match:
        word, verb = (
            (match.group(1), match.group(2))
            if match.group(1)
            else ((match.group(4), match.group(3)) if match.group(3) else (match.group(6), match.group(5)))
        )
        found = _pronoun_tag(word, verb) if word and verb else None
        if found is None and match.group(1):
            # "said he": the first alternative read "said" as the subject and "he" as the verb.
            inverted = _VERB_PRONOUN_AFTER.match(head)
            found = _pronoun_tag(inverted.group(2), inverted.group(1)) if inverted else None
        if found is not None:
            return found
    match = _REPLY_AFTER.match(head)
    replier = resolve(match.group(1)) if match and match.group(1) else None
    if replier is not None:
        return Tag(TagKind.NAME, match.group(1), "reply", name=replier)
    if match and match.group(2):
        return _pronoun_tag({"his": "he", "her": "she", "my": "I"}[match.group(2)], "said")
    phrase = _verb_noun_phrase(head)
    match = _NOUN_AFTER.match(head)
    if phrase is not None:
        verb, noun = phrase
    elif match:
        verb, noun = (match.group(1), match.group(2)) if match.group(1) else (match.group(4), match.group(3))
    else:
        verb = noun = ""
    if match or phrase:
        if verb and noun and is_speech_verb(verb) and _noun_gender(noun) is not Gender.UNKNOWN:
            owner = _OWNER.search(match.group(0))
            words = f"{owner.group(1)} {noun}" if owner and owner.group(2) == noun else noun
            return Tag(TagKind.NOUN, words, verb, gender=_noun_gender(noun))
    return None


def _verb_noun_phrase(head: str) -> tuple[str, str] | None:
    """The verb and the noun of "said the old man, …": the last noun of a sex in the phrase that a
    pause or a word that may follow a speaker ends ("the old man in a low voice": man, not old)."""
    match = _VERB_NOUN_PHRASE_AFTER.match(head)
    if match is None:
        return None
    words = list(re.finditer(r"[a-z][\w\-]*", match.group(2)))
    for word in reversed(words):
        gendered = _noun_gender(word.group(0)) is not Gender.UNKNOWN
        if gendered and _name_ends(head, match.start(2) + word.end()):
            return match.group(1), word.group(0)
    return None


def tag_before(narration: str, resolve: Resolve) -> Tag | None:
    """The tag that ends the narration right before a quote ("Alice said, “…”"), if any."""
    tail = narration[-160:]
    match = _NAME_VERB_BEFORE.search(tail)
    if match and is_speech_verb(match.group(2)):
        name = resolve(match.group(1))
        if name is not None:
            return Tag(TagKind.NAME, match.group(1), match.group(2), name=name, before=True)
    match = _VERB_NAME_BEFORE.search(tail)
    if match and _speaks_to_name(match.group(1)):
        name = resolve(match.group(2))
        if name is not None:
            return Tag(TagKind.NAME, match.group(2), match.group(1), name=name, before=True)
    match = _PRONOUN_BEFORE.search(tail)
    if match:
        found = _pronoun_tag(match.group(1), match.group(2), before=True)
        if found is None:  # "… said he:" read the other way round
            found = _pronoun_tag(match.group(2), match.group(1), before=True)
        if found is not None:
            return found
    # "Alice considered a little, and then said “The fourth.”": a named subject and a verb at the end.
    sentence = _BREAK.split(tail)[-1]
    words = sentence.rstrip(" ,:_").split()
    if words and is_speech_verb(words[-1]):
        # A name just before the verb is its subject, not the sentence's first ("Mr. Sparsit, deceased,
        # ... had been what Mrs. Sparsit still called “a Powler.”").
        for subject in (_NAME_WORD_VERB.search(sentence), _SENTENCE_START.search(sentence)):
            name = resolve(subject.group(1)) if subject is not None else None
            if subject is not None and name is not None:
                return Tag(TagKind.NAME, subject.group(1), words[-1], name=name, before=True)
    return None


_LEAD_IN_END = re.compile(r"[,:\u2014\u2013\-]\s*_?\s*$")
_BY_NAME = re.compile(rf"\b(?:by|from)\s+({_NAME})\s*[,:\u2014\-]?\s*_?\s*$")
_SUBJECT = re.compile(
    rf"^\W*(?:(?:and|but|then|so|when|while|as|at\s+last|at\s+length)\s+)?({_NAME}|[A-Za-z]+)\b"
)
_SPEECH_WORD = re.compile(r"\b([a-z]+)\b")


def _speaks(sentence: str) -> bool:
    """A sentence that leads into speech names a speech verb ("and said in the gentlest of accents")."""
    for match in _SPEECH_WORD.finditer(sentence):
        word = match.group(1)
        stem = word[:-3] if word.endswith("ing") else ""
        if word in SPEECH_VERBS or (stem and any(stem + e in SPEECH_VERBS for e in ("", "e", "ed", "s"))):
            return True
    return False


def lead_in(narration: str, resolve: Resolve) -> Tag | None:
    """The speaker of a sentence that leads into the quote ("Mr. Darcy replied with great
    intrepidity, “…”"; "he turned to her again, and said, “…”"; "thus accosted by Miss Bingley, “…”")."""
    tail = narration[-300:]
    if not _LEAD_IN_END.search(tail):
        return None
    sentence = _BREAK_OR_SEMICOLON.split(tail.strip())[-1]
    if not _speaks(sentence) and not re.search(r"\b(?:by|from)\s+\S+\s*[,:]?\s*_?$", sentence):
        return None
    by = _BY_NAME.search(sentence)
    if by is not None and resolve(by.group(1)) is not None:
        return Tag(TagKind.NAME, by.group(1), "by", name=resolve(by.group(1)), before=True)
    subject = _SUBJECT.match(sentence)
    if subject is None:
        return None
    word = subject.group(1)
    pronoun = _pronoun_tag(word, "said", before=True)
    if pronoun is not None:
        return pronoun
    name = resolve(word) if word[:1].isupper() else None
    return Tag(TagKind.NAME, word, "lead-in", name=name, before=True) if name is not None else None


def sentence_subjects(narration: str, resolve: Resolve) -> list[str]:
    """The characters that open a sentence of ``narration``, in order."""
    found = []
    for match in _SENTENCE_START.finditer(narration):
        name = resolve(match.group(1))
        if name is not None:
            found.append(name)
    return found


def last_sentence_subject(narration: str, resolve: Resolve) -> str | None:
    """The character the narration's last sentence opens with ("Alice sighed wearily.")."""
    sentences = [s for s in _BREAK.split(narration.strip()) if s]
    if not sentences:
        return None
    match = _SENTENCE_START.match(sentences[-1])
    return resolve(match.group(1)) if match else None
