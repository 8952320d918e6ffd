"""Turn-taking read both ways: an untagged line of a conversation from the tagged lines around it.

Reading forward only, a line without a tag gets the speaker before the last one, and the first
lines of an exchange get nobody (two speakers must be known first). A reader also looks ahead: in
a run of speaking paragraphs two people take turns, so a tagged line further on names the lines
between by their parity ("“…” / “…” / “…,” said Darcy": the first is Darcy's too). A line the
forward reader placed by position alone is given the speaker its parity picks from the nearest
tagged lines: its own turn is that speaker's, the other turns are the other speaker's (the one
named nearest by any rule). How sure that is depends most on whether the forward reader picked
the same speaker: where the two readings agree the parity is right 73-96 % of the time, where they
differ 11-45 % (:data:`TURN_CONFIDENCE`). Where the tagged lines on both sides do not fit two
people taking turns, or the pick is called by name in the line itself, the forward guess stays,
with the confidence the tuning novels gave such unconfirmed turns (42 %), below the cast's floor.
A run with no tagged line at all takes its parity from the lines a pronoun tag or an actor placed
("“…,” she said / “…” / “…” / “…,” he said"), a little less surely (:data:`SOFT_TURN_CONFIDENCE`);
so does a line between tagged lines that do not fit, where someone spoke twice, by whether the
forward reader agrees (:data:`SOFT_AMONG_FIRM_CONFIDENCE`).

A line another rule placed (a pronoun tag, a name called in the line before, a character acting
before it) is checked against its turn: where both pick the same speaker the guess is surer, where
they differ it is less sure (measured on the tuning novels, :data:`CHECKED_CONFIDENCE`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from omni_web.cast.attribution import Attribution
from omni_web.cast.roster import Roster
from omni_web.cast.spans import ParagraphSpans

__all__ = ["TURN_CONFIDENCE", "resolve_turns"]

# Rules firm enough to anchor the turns around them (their share right on the tuning novels).
_ANCHOR_RULES = frozenset({"tag", "tag-before", "narrator", "relative", "signed"})
# Rules a parity guess may replace: the forward reader's guesses from position alone.
_WEAK_RULES = frozenset({"turn", "narrator-turn", ""})
# A forward turn the tagged lines around it do not confirm (three speakers, or none tagged near).
_UNCONFIRMED_TURN = 0.42  # 41.5 %
# How often a parity guess was right on the tuning novels: by the sides with a firm line, whether
# the line is that firm speaker's own turn (even) or the other's, whether the firm line is far, and
# whether the forward reader (the speaker before the last one) picked the same speaker, another
# one, or nobody. Where the two readings differ, the parity is wrong far more often than not.
TURN_CONFIDENCE = {
    ("both", True, False, "agree"): 0.88,  # 88 % (746 lines)
    ("both", True, False, "differ"): 0.33,  # 32 % (40)
    ("both", True, False, "none"): 0.95,  # 100 % (43)
    ("both", True, True, "agree"): 0.95,  # 96 % (70)
    ("both", True, True, "differ"): 0.27,  # 27 % (33)
    ("both", True, True, "none"): 0.95,  # 100 % (44, near or far)
    ("both", False, False, "agree"): 0.84,  # 84 % (842)
    ("both", False, False, "differ"): 0.37,  # 37 % (263)
    ("both", False, False, "none"): 0.61,  # 61 % (74)
    ("both", False, True, "agree"): 0.93,  # 93 % (58)
    ("both", False, True, "differ"): 0.24,  # 24 % (66)
    ("both", False, True, "none"): 0.58,  # 58 % (78, near or far)
    ("before", True, False, "agree"): 0.84,  # 84 % (633)
    ("before", True, False, "differ"): 0.21,  # 21 % (42, near or far)
    ("before", True, False, "none"): 0.8,  # 80 % (80)
    ("before", True, True, "agree"): 0.74,  # 74 % (219)
    ("before", True, True, "differ"): 0.15,  # 15 % (27)
    ("before", True, True, "none"): 0.77,  # 77 % (100, near or far)
    ("before", False, False, "agree"): 0.73,  # 73 % (670)
    ("before", False, False, "differ"): 0.19,  # 19 % (107)
    ("before", False, False, "none"): 0.45,  # 45 % (20, near or far)
    ("before", False, True, "agree"): 0.64,  # 64 % (233)
    ("before", False, True, "differ"): 0.11,  # 11 % (55)
    ("before", False, True, "none"): 0.45,  # 45 % (20, near or far)
    ("after", True, False, "agree"): 0.83,  # 83 % (174)
    ("after", True, False, "differ"): 0.57,  # 60 % (239); 54 % on the held-out novels
    ("after", True, False, "none"): 0.72,  # 72 % (145)
    ("after", True, True, "agree"): 0.84,  # 84 % (57)
    ("after", True, True, "differ"): 0.65,  # 65 % (92)
    ("after", True, True, "none"): 0.75,  # 75 % (60)
    ("after", False, False, "agree"): 0.75,  # 75 % (248)
    ("after", False, False, "differ"): 0.42,  # 42 % (281)
    ("after", False, False, "none"): 0.56,  # 56 % (172)
    ("after", False, True, "agree"): 0.77,  # 77 % (96)
    ("after", False, True, "differ"): 0.45,  # 45 % (67)
    ("after", False, True, "none"): 0.48,  # 48 % (58)
    # A line another rule placed: the forward reader had no turn of its own for it.
    ("both", True, False, "unread"): 0.78,  # 84 %
    ("both", False, False, "unread"): 0.66,  # 66 %
    ("before", True, False, "unread"): 0.76,  # 77 %
    ("before", False, False, "unread"): 0.6,  # 60 %
    ("after", True, False, "unread"): 0.66,  # 66 %
    ("after", False, False, "unread"): 0.5,  # 50 %
    ("both", True, True, "unread"): 0.72,  # 73 %
    ("both", False, True, "unread"): 0.44,  # 44 %
    ("before", True, True, "unread"): 0.62,  # 62 %
    ("before", False, True, "unread"): 0.52,  # 52 %
    ("after", True, True, "unread"): 0.66,  # 68 %
    ("after", False, True, "unread"): 0.5,  # 50 %
}
# A run with no firm line: parity from the lines another rule placed (a pronoun tag, an actor).
SOFT_TURN_CONFIDENCE = {
    "both": 0.68,  # 68 %
    "before": 0.63,  # 63 %
    "after": 0.64,  # 64 %
    ("before", False, False): 0.59,  # 59 %
    ("before", False, True): 0.42,  # 42 %
}
# The same where the run's firm lines do not fit two people taking turns, by whether the forward
# reader picked the same speaker.
SOFT_AMONG_FIRM_CONFIDENCE = {
    True: 0.68,  # 68 % (178 lines; 67 % on the held-out novels)
    False: 0.44,  # 45 % (58 lines; 31 % held out)
}
# A guess by another rule checked against its turn: by the rule (a pronoun tag and a name called in
# the line before are measured apart; the other firmer rules, an actor or a lead-in, are right
# 64-74 % alone), whether the turn agrees, and whether the turn's own confidence reaches the floor
# (share right on the tuning novels).
_FIRMER_RULES = frozenset({"pronoun", "addressee", "actor", "lead-in"})
CHECKED_CONFIDENCE = {
    ("pronoun", True, True): 0.87,  # 87 % (436 lines)
    ("pronoun", True, False): 0.86,  # 86 % (190)
    ("pronoun", False, True): 0.66,  # 67 % (254)
    ("pronoun", False, False): 0.52,  # 52 % (159)
    ("addressee", True, True): 0.92,  # 92 % (274)
    ("addressee", True, False): 0.88,  # 88 % (69)
    ("addressee", False, True): 0.55,  # 55 % (205)
    ("addressee", False, False): 0.55,  # 58 % (83)
    ("firmer", True, True): 0.83,  # 83 %
    ("firmer", True, False): 0.73,  # 73 %
    ("firmer", False, True): 0.53,  # 53 %
    ("firmer", False, False): 0.29,  # 29 %
    ("other", True, True): 0.64,  # 64 %
    ("other", True, False): 0.55,  # 55 %
    ("other", False, True): 0.41,  # 41 %
    ("other", False, False): 0.07,  # 7 %
}
_KEPT_WHEN_DIFFERENT = frozenset({"actor", "lead-in"})  # right 64-70 % even against their turn
# A first-person narrator's turn: their conversations are mostly theirs (forward's narrator-turn).
_NARRATOR_TURN = 0.65
_FAR_TURNS = 5  # a firm line this many turns away says less


@dataclass(frozen=True, slots=True)
class _Line:
    """A speaking paragraph of a run: its index, its turn number, its firm speaker if any, and the
    speaker any rule but position named (a pronoun tag, an actor)."""

    index: int
    turn: int
    anchor: str | None
    known: str | None


def _speaker(row: Sequence[Attribution | None], rules: Callable[[str], bool]) -> str | None:
    speakers = {a.speaker for a in row if a is not None and a.speaker and rules(a.rule)}
    return speakers.pop() if len(speakers) == 1 else None


Rows = Sequence[Sequence[Attribution | None]]


def _runs(paragraphs: Sequence[ParagraphSpans], rows: Rows) -> list[list[_Line]]:
    """The chapter's conversations: speaking paragraphs in a row, numbered by turn (a continued
    quote keeps its turn); a paragraph of narration alone ends one (measured: runs kept across
    narration were right less often)."""
    runs: list[list[_Line]] = []
    current: list[_Line] = []
    turn = 0
    for index, (paragraph, row) in enumerate(zip(paragraphs, rows, strict=True)):
        if not paragraph.has_dialogue:
            if current:
                runs.append(current)
                current = []
            continue
        first = next(span for span in paragraph.spans if span.is_dialogue)
        if current and not first.continued:
            turn += 1
        anchor = _speaker(row, _ANCHOR_RULES.__contains__)
        current.append(_Line(index, turn, anchor, _speaker(row, lambda rule: rule not in _WEAK_RULES)))
    if current:
        runs.append(current)
    return runs


def _other(run: list[_Line], at: int, speaker: str | None) -> str | None:
    """The speaker named nearest to line ``at`` of the run (not by that line) who is not ``speaker``."""
    for line in sorted(run, key=lambda x: abs(x.index - run[at].index)):
        if line is not run[at] and line.known is not None and line.known != speaker:
            return line.known
    return None


def _guess(
    run: list[_Line],
    at: int,
    narrator: str | None,
    *,
    read: bool = True,
    forward: str | None = None,
    soft: bool = False,
) -> Attribution | None:
    """The speaker the line's parity picks between the firm lines nearest it on each side;
    ``forward`` is the forward reader's turn for the line (``read``: whether it had one to give)."""
    line = run[at]
    firm = any(x.anchor for x in run)
    if soft:
        run = [replace(x, anchor=x.known) for x in run]
    before = [x for x in reversed(run[:at]) if x.anchor is not None]
    after = [x for x in run[at + 1 :] if x.anchor is not None]
    if before and after:
        a, b = before[0], after[0]
        if (a.anchor != b.anchor) != ((b.turn - a.turn) % 2 == 1):
            return None  # the firm lines do not fit two people taking turns
        side, near = "both", a
        other = b.anchor if a.anchor != b.anchor else _other(run, at, a.anchor)
    elif before:
        side, near = "before", before[0]
        other = _other(run, at, near.anchor)
    elif after:
        side, near = "after", after[0]
        other = _other(run, at, near.anchor)
    else:
        return None
    own_turn = (line.turn - near.turn) % 2 == 0
    if narrator is not None and other is None and near.anchor != narrator:
        other = narrator  # no one else is named: in a first-person book "I" is the other one
    speaker = near.anchor if own_turn else other
    if speaker is None:
        return None
    far = min(abs(line.turn - x.turn) for x in (*before[:1], *after[:1])) >= _FAR_TURNS
    evidence = f"turn-taking: {'its own' if own_turn else 'the other'} turn of {near.anchor}"
    if soft and firm:
        confidence = SOFT_AMONG_FIRM_CONFIDENCE[forward == speaker]
        return Attribution(
            speaker, confidence, f"{evidence} (by {near.anchor}'s untagged line)", rule="turns-soft"
        )
    if soft:
        confidence = SOFT_TURN_CONFIDENCE.get((side, own_turn, far), SOFT_TURN_CONFIDENCE[side])
        return Attribution(
            speaker, confidence, f"{evidence} (by {near.anchor}'s untagged line)", rule="turns-soft"
        )
    agreement = (
        "unread" if not read else "none" if forward is None else "agree" if forward == speaker else "differ"
    )
    confidence = TURN_CONFIDENCE[(side, own_turn, far, agreement)]
    if speaker == narrator and own_turn:
        confidence = max(confidence, _NARRATOR_TURN)
    return Attribution(speaker, confidence, evidence, rule=f"turns-{side}")


def _calls(paragraph: ParagraphSpans, names: Sequence[str]) -> bool:
    """Whether the paragraph's speech says one of ``names`` ("Don't keep coughing so, Kitty")."""
    alternatives = "|".join(re.escape(name) for name in names)
    pattern = re.compile(rf"(?<![\w’'])(?:{alternatives})(?![\w’'])")
    return any(span.is_dialogue and pattern.search(span.text) for span in paragraph.spans)


def _unconfirmed(attribution: Attribution | None, *, called: bool) -> Attribution | None:
    if attribution is None or attribution.rule not in ("turn", "narrator-turn"):
        return attribution
    if attribution.rule == "narrator-turn" and not called:
        return attribution  # no firm line near: the narrator is still one of the two talking
    return replace(attribution, confidence=min(attribution.confidence, _UNCONFIRMED_TURN))


def _checked(attribution: Attribution | None, turn: Attribution) -> Attribution | None:
    """``attribution`` (another rule's guess) with the confidence its agreeing with ``turn`` gives."""
    if attribution is None or attribution.rule in _WEAK_RULES or attribution.rule in _ANCHOR_RULES:
        return attribution
    agrees = attribution.speaker == turn.speaker
    if not agrees and attribution.rule in _KEPT_WHEN_DIFFERENT:
        return attribution
    rule = attribution.rule
    kind = rule if rule in ("pronoun", "addressee") else "firmer" if rule in _FIRMER_RULES else "other"
    key = (kind, agrees, turn.confidence >= 0.6)
    note = "its turn agrees" if agrees else f"its turn says {turn.speaker}"
    evidence = f"{attribution.evidence}; {note}"
    return replace(attribution, confidence=CHECKED_CONFIDENCE[key], evidence=evidence)


def resolve_turns(
    paragraphs: Sequence[ParagraphSpans],
    rows: list[list[Attribution | None]],
    *,
    roster: Roster | None = None,
) -> list[list[Attribution | None]]:
    """``rows`` (the forward reader's attributions, one row per paragraph) with each untagged
    line of a two-person run given the speaker its turn picks."""
    out = [list(row) for row in rows]
    narrator = roster.narrator if roster is not None and roster.first_person else None
    forms: dict[str, list[str]] = {}
    for form, name in roster.canonical.items() if roster is not None else ():
        forms.setdefault(name, [name]).append(form)
    for run in _runs(paragraphs, rows):
        for at, line in enumerate(run):
            if line.anchor is not None:
                continue
            forward = next(
                (a.speaker for a in out[line.index] if a is not None and a.speaker and a.rule in _WEAK_RULES),
                None,
            )
            guess = _guess(run, at, narrator, read=line.known is None, forward=forward)
            if guess is None and line.known is None:
                # No firm line, or firm lines that do not fit two people taking turns (someone
                # spoke twice between them): the lines other rules placed stand in for them.
                guess = _guess(run, at, narrator, soft=True, forward=forward)
            if line.known is not None:
                if guess is not None:
                    out[line.index] = [_checked(a, guess) for a in out[line.index]]
                continue
            # Nobody calls themselves by name: the one called is the one spoken to.
            speaker = guess.speaker or "" if guess is not None else ""
            if guess is None or _calls(paragraphs[line.index], forms.get(speaker, [speaker])):
                called = guess is not None
                out[line.index] = [_unconfirmed(a, called=called) for a in out[line.index]]
                continue
            out[line.index] = [
                replace(guess, delivery=a.delivery) if a is not None and a.rule in _WEAK_RULES else a
                for a in out[line.index]
            ]
    return out
