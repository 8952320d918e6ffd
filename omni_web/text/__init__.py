"""Text for speech: normalisation per language and the user's pronunciation lexicon.

Sits between the book layer and the pipeline: :func:`spoken_form` gives a job's text -> spoken
text function (lexicon first, then the language's number, abbreviation and roman-numeral rules);
:class:`LexiconStore` keeps the global and per-book lexicons in the data root;
:func:`find_candidates` lists words a model may misread.
"""

from omni_web.languages import language_code
from omni_web.text.candidates import Candidate, CandidateKind, find_candidates
from omni_web.text.impact import ChunkText, EditImpact, edit_impact, spoken_chunks
from omni_web.text.lexicon import CaseRule, Lexicon, LexiconEntry, Pronouncer
from omni_web.text.normalize import RULES_BY_LANGUAGE, normalize_for_speech, rules_for, supported_languages
from omni_web.text.rules import LanguageRules
from omni_web.text.speech import SpokenForm, normalization_applies, spoken_form
from omni_web.text.store import (
    BookIdentity,
    LexiconStore,
    book_identity,
    read_lexicon_file,
    write_lexicon_file,
)

__all__ = [
    "RULES_BY_LANGUAGE",
    "BookIdentity",
    "Candidate",
    "CandidateKind",
    "CaseRule",
    "ChunkText",
    "EditImpact",
    "LanguageRules",
    "Lexicon",
    "LexiconEntry",
    "LexiconStore",
    "Pronouncer",
    "SpokenForm",
    "book_identity",
    "edit_impact",
    "find_candidates",
    "language_code",
    "normalization_applies",
    "normalize_for_speech",
    "read_lexicon_file",
    "rules_for",
    "spoken_chunks",
    "spoken_form",
    "supported_languages",
    "write_lexicon_file",
]
