"""Front and back matter: which chapters are not preselected for reading, and why.

Signals, strongest first: ``epub:type``/``role`` semantics and landmarks, the chapter's title
(in a few languages), then its content (links-only pages, © lines, Project Gutenberg licence
density). A chapter no rule matches is a real chapter (reason ""). The user can still select
anything; this only sets the default.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from omni_web.book.model import TextBlock
from omni_web.book.text import count_words, text_key

__all__ = [
    "MatterSignals",
    "classify_matter",
]

# reason -> epub:type / DPUB-ARIA role tokens (and landmark kinds) that mean it.
_TYPE_REASONS: tuple[tuple[str, frozenset[str]], ...] = (
    ("cover", frozenset({"cover", "doc-cover"})),
    ("table of contents", frozenset({"toc", "doc-toc"})),
    ("title page", frozenset({"titlepage", "halftitlepage", "title-page", "fulltitle"})),
    ("copyright page", frozenset({"copyright-page", "copyright"})),
    ("index", frozenset({"index", "doc-index"})),
    ("bibliography", frozenset({"bibliography", "doc-bibliography"})),
    ("notes", frozenset({"endnotes", "rearnotes", "footnotes", "doc-endnotes"})),
    ("colophon", frozenset({"colophon", "doc-colophon"})),
    ("list of illustrations", frozenset({"loi", "lot"})),
)

# reason -> title keys (letters/digits only, casefolded) that mean it, in several languages.
_TITLE_REASONS: tuple[tuple[str, frozenset[str]], ...] = (
    (
        "cover",
        frozenset({"cover", "coverpage", "couverture", "umschlag", "portada", "copertina", "capa", "غلاف"}),
    ),
    (
        "table of contents",
        frozenset(
            {
                "contents",
                "tableofcontents",
                "toc",
                "thecontents",
                "sommaire",
                "tabledesmatières",
                "inhalt",
                "inhaltsverzeichnis",
                "índice",
                "indice",
                "contenido",
                "contenidos",
                "sumário",
                "目次",
                "目录",
                "المحتويات",
                "inhoud",
                "inhoudsopgave",
                "فهرسالمحتويات",
            }
        ),
    ),
    ("title page", frozenset({"titlepage", "halftitle", "halftitlepage", "pagedetitre", "titelseite"})),
    (
        "copyright page",
        frozenset({"copyright", "copyrightpage", "rights", "legalnotice", "impressum", "mentionslégales"}),
    ),
    ("index", frozenset({"index", "generalindex", "subjectindex", "register", "stichwortverzeichnis"})),
    (
        "bibliography",
        frozenset({"bibliography", "references", "workscited", "bibliographie", "literaturverzeichnis"}),
    ),
    ("notes", frozenset({"notes", "endnotes", "footnotes", "anmerkungen", "remarques"})),
    ("colophon", frozenset({"colophon"})),
    (
        "list of illustrations",
        frozenset({"listofillustrations", "illustrations", "listoffigures", "listoftables"}),
    ),
)
_TITLE_PREFIXES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("notes", ("noteson", "notesto", "endnotes")),
    ("other books by the author", ("alsoby", "otherbooksby", "bythesameauthor", "otherworksby")),
    ("errata", ("errata", "erratum", "corrigenda", "druckfehler")),
    # A later editor's or translator's preface is about the edition, not the book.
    (
        "editor's preface",
        (
            "editorspreface",
            "editorsnote",
            "translatorspreface",
            "translatorsnote",
            "préfacedeléditeur",
            "prefacedelediteur",
            "avertissementdeléditeur",
            "notedeléditeur",
            "préfacedutraducteur",
        ),
    ),
    (
        "transcriber's notes",
        (
            "transcribersnote",
            "transcribernote",
            "notedutranscripteur",
            "notesdutranscripteur",
            "anmerkungdestranskribierers",
            "anmerkungendestranskribierers",
        ),
    ),
)
_PG_PER_1000_WORDS = 5.0  # "Gutenberg" this often is boilerplate, not a book that mentions it
_COPYRIGHT_MAX_WORDS = 400
_COPYRIGHT_RE = re.compile(r"©|\(c\)\s*\d{4}|all rights reserved|\bisbn\b", re.IGNORECASE)
_TITLE_PAGE_MAX_PARAGRAPH_WORDS = 20
# A byline set as a heading ("By Joseph Conrad", Gutenberg's HTML title pages): a name, not a chapter.
_BYLINE_RE = re.compile(r"(?i)by\s+[^\W\d_][\w.'’-]*(?:\s+[^\W\d_][\w.'’-]*){0,4}\s*$")
_TOC_LINK_SHARE = 0.6
_TOC_MIN_WORDS = 10


@dataclass(frozen=True, slots=True)
class MatterSignals:
    """What the classifier looks at for one chapter."""

    title: str
    blocks: tuple[TextBlock, ...]
    word_count: int
    image_count: int = 0
    link_words: int = 0
    types: frozenset[str] = frozenset()  # epub:type/role tokens and landmark kinds
    is_nav: bool = False
    book_title: str = ""


def classify_matter(signals: MatterSignals) -> str:
    """Why a chapter should not be read by default ("" for a real chapter).

    Returns one of: "cover", "table of contents", "title page", "copyright page", "index",
    "bibliography", "notes", "colophon", "list of illustrations", "other books by the author", "errata", "transcriber's notes",
    "Project Gutenberg header", "Project Gutenberg licence", "image-only page", "empty page",
    or "".
    """
    if signals.is_nav:
        return "table of contents"
    for reason, tokens in _TYPE_REASONS:
        if signals.types & tokens:
            return reason
    reason = _reason_from_title(signals)
    if reason:
        return reason
    if signals.word_count == 0:
        return "image-only page" if signals.image_count else "empty page"
    return _reason_from_content(signals)


def _reason_from_title(signals: MatterSignals) -> str:
    key = text_key(signals.title)
    if not key:
        return ""
    for reason, keys in _TITLE_REASONS:
        if key in keys:
            # A long chapter called "Notes" or "Index" is still matter; a long "Cover" story is not.
            if reason == "cover" and signals.word_count > 50:
                continue
            return reason
    for reason, prefixes in _TITLE_PREFIXES:
        if key.startswith(prefixes):
            return reason
    if "gutenberg" in key and ("licen" in key or "project" in key):
        return _gutenberg_reason(" ".join(block.text for block in signals.blocks).casefold())
    short = _paragraph_words(signals.blocks) < _TITLE_PAGE_MAX_PARAGRAPH_WORDS
    # The book's title, or its half title ("The Little Colonel's Hero, by Annie Fellows Johnston").
    titles = {text_key(signals.book_title), text_key(re.sub(r"(?i),?\s+by\s+.*$", "", signals.book_title))}
    if short and (key in titles or _BYLINE_RE.match(signals.title.strip())):
        return "title page"
    return ""


def _reason_from_content(signals: MatterSignals) -> str:
    words = signals.word_count
    text = " ".join(block.text for block in signals.blocks)
    folded = text.casefold()
    if folded.count("gutenberg") * 1000 / words >= _PG_PER_1000_WORDS:
        return _gutenberg_reason(folded)
    if words >= _TOC_MIN_WORDS and signals.link_words >= _TOC_LINK_SHARE * words:
        return "table of contents"
    if words <= _COPYRIGHT_MAX_WORDS and _COPYRIGHT_RE.search(text):
        return "copyright page"
    return ""


def _gutenberg_reason(folded_text: str) -> str:
    """The header (before the book) or the licence (after it)."""
    header = (
        "start of the project gutenberg" in folded_text or "start of this project gutenberg" in folded_text
    )
    footer = "end of the project gutenberg" in folded_text or "full project gutenberg license" in folded_text
    return "Project Gutenberg header" if header and not footer else "Project Gutenberg licence"


def _paragraph_words(blocks: tuple[TextBlock, ...]) -> int:
    return sum(count_words(block.text) for block in blocks if not block.is_heading)
