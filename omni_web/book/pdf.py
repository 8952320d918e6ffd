"""PDF (text layer) to a Book, with pdfminer.six: chapters from the outline, else from heading sizes.

The layout analysis gives positioned lines per page; :mod:`omni_web.book.pdflayout` turns them
into paragraphs (running heads, page numbers and footnotes dropped, hyphenation joined, columns
in order). Chapters start at the outline's entries (the bookmarks) where the PDF has them, else at
the largest heading size used more than once. Refused before any reading: a PDF that needs a
password or forbids text extraction (protected), and one whose first pages are pictures with no
text (scanned: it needs OCR first). Size, page count and time are bounded like the EPUB reader's.
"""

from __future__ import annotations

import dataclasses
import re
from collections import Counter
from pathlib import Path
from typing import Any

from omni_web.book.headings import is_chapter_heading
from omni_web.book.matter import MatterSignals, classify_matter
from omni_web.book.model import Book, BookMetadata, TextBlock
from omni_web.book.options import DEFAULT_OPTIONS, ReadOptions
from omni_web.book.parts import Part, book_from_parts, heading, paragraph
from omni_web.book.pdflayout import PageLines, TextPara, body_size, heading_sizes, paragraphs
from omni_web.book.pdfpages import MAX_PDF_PAGES, MAX_PDF_SECONDS, PdfPages, read_pdf_pages
from omni_web.book.safety import DEFAULT_LIMITS, ArchiveLimits
from omni_web.book.text import text_key
from omni_web.errors import BookError, DrmProtected, NotAnEpub, ScannedBook, UnsafeBook

__all__ = ["MAX_PDF_PAGES", "MAX_PDF_SECONDS", "load_pdf", "read_pdf_pages"]

_STYLE_HEADING_WORDS = 15
_TITLE_PAGE_WORDS = 60  # a headed part on page one shorter than this, before the chapters: the title page
_LEADERS_RE = re.compile(
    r"(?:\.\s?){4,}\s*(?:\d+|[ivxlc]+)\b", re.IGNORECASE
)  # dots leading to a page number
_SCANNED_SHARE = 0.8  # this share of pages pictures with a few stray words: a scan
_UNMAPPED_SHARE = 0.5  # more letters than this share unreadable: the text layer is no use


def load_pdf(
    path: Path,
    *,
    limits: ArchiveLimits = DEFAULT_LIMITS,
    options: ReadOptions = DEFAULT_OPTIONS,
    max_seconds: float = MAX_PDF_SECONDS,
) -> Book:
    """Read a text PDF.

    Raises:
        DrmProtected: a password is needed, or the PDF forbids text extraction.
        ScannedBook: the pages are pictures without a text layer.
        UnsafeBook: over the size, page or time limit.
        NotAnEpub: the file is a damaged PDF (the class every unreadable book file raises).
    """
    from pdfminer.pdfdocument import PDFDocument
    from pdfminer.pdfparser import PDFParser

    name = path.name
    size = path.stat().st_size
    if size > limits.max_file_bytes:
        raise UnsafeBook(
            f"'{name}' is {size / 2**20:.1f} MiB, over the {limits.max_file_bytes / 2**20:.0f} MiB "
            "limit for one book file; it was not opened."
        )
    with path.open("rb") as handle:
        try:
            document = PDFDocument(PDFParser(handle), password="")
        except Exception as exc:  # pdfminer raises many unrelated types for one cause: not readable
            raise _open_error(path, exc) from exc
        if not document.is_extractable:
            raise DrmProtected(
                f"'{name}' is a protected PDF: its owner does not allow its text to be copied, so it "
                "cannot be read aloud. Use an unprotected copy of the book."
            )
        read = read_pdf_pages(document, name=name, max_seconds=max_seconds)
        metadata = _metadata(document, fallback_title=path.stem)
        outline = _outline(document)
    refusal = _refusal(path, read)
    if refusal is not None:
        raise refusal
    parts = _parts(list(read.pages), outline, read.page_of, notes=options.notes_at_paragraph_end)
    book = book_from_parts(
        parts,
        path=path,
        metadata=metadata,
        cover=read.cover,
        source_format="pdf",
        empty_hint="its pages hold no readable text",
    )
    return dataclasses.replace(book, warnings=_warnings(read)) if read.dropped_glyphs else book


def _refusal(path: Path, read: PdfPages) -> BookError | None:
    """Why the pages cannot be read aloud: no text, a scan with a few stray words, unmapped fonts."""
    name, count = path.name, len(read.pages)
    if not any(page.lines for page in read.pages):
        if _cut_short(path):
            return NotAnEpub(
                f"'{name}' is a damaged PDF: the file is cut short (an interrupted download or copy) "
                "and no page text could be read from what is there. Download or copy it again."
            )
        return _no_text(name, read.images, count)
    if read.scanned_pages and read.scanned_pages >= count * _SCANNED_SHARE:
        return ScannedBook(
            f"'{name}' is a scanned PDF: "
            + (
                f"{read.scanned_pages} of its {count} pages are pictures"
                if count > 1
                else "its page is a picture"
            )
            + " with only a few stray words of text (a watermark or a label), so it needs OCR first "
            "(e.g. ocrmypdf), then upload the OCR'd PDF."
        )
    if read.dropped_glyphs > read.glyphs * _UNMAPPED_SHARE:
        return ScannedBook(
            f"'{name}' has a text layer that cannot be read: {read.dropped_glyphs:,} of its {read.glyphs:,} "
            "letters "
            "are in fonts that carry no map to real letters. Run OCR on it first (e.g. ocrmypdf "
            "--force-ocr), "
            "or use another copy of the book."
        )
    return None


def _warnings(read: PdfPages) -> tuple[str, ...]:
    return (
        f"{read.dropped_glyphs:,} letters or symbols in fonts without a map to real letters were left out "
        "(the book may read with gaps where they stood, most often in formulas).",
    )


def _cut_short(path: Path) -> bool:
    """Whether the file ends before a PDF's closing ``%%EOF`` (a truncated download)."""
    with path.open("rb") as handle:
        handle.seek(max(0, path.stat().st_size - 2048))
        return b"%%EOF" not in handle.read()


def _open_error(path: Path, exc: Exception) -> BookError:
    name, kind = path.name, type(exc).__name__
    if kind in ("PDFPasswordIncorrect", "PDFEncryptionError", "PDFEncryptionWarning"):
        return DrmProtected(
            f"'{name}' is a password-protected (encrypted) PDF; omni-web does not ask for passwords. "
            "Remove the protection with the program that made it, or use an unprotected copy."
        )
    if _cut_short(path):
        return NotAnEpub(
            f"'{name}' is a damaged PDF: the file is cut short (an interrupted download or copy), so "
            "its pages cannot be found. Download or copy it again."
        )
    return NotAnEpub(f"'{name}' is a damaged PDF and cannot be read ({kind}). Use another copy of the book.")


def _no_text(name: str, images: int, page_count: int) -> BookError:
    if images:
        return ScannedBook(
            f"'{name}' is a scanned PDF: its {page_count} page{'s' if page_count != 1 else ''} are pictures "
            "with no text layer, so it needs OCR first (e.g. ocrmypdf), then upload the OCR'd PDF."
        )
    return ScannedBook(
        f"'{name}' has no text layer at all (empty or drawn pages); it needs OCR first if it "
        "shows text, or use another copy of the book."
    )


def _decode(value: Any) -> str:
    from pdfminer.pdftypes import resolve1
    from pdfminer.utils import decode_text

    value = resolve1(value)
    if isinstance(value, bytes):
        return " ".join(decode_text(value).replace("\x00", "").split())
    if isinstance(value, str):
        return " ".join(value.split())
    return ""


def _metadata(document: Any, *, fallback_title: str) -> BookMetadata:
    info = document.info[0] if document.info else {}
    title = _decode(info.get("Title"))
    author = _decode(info.get("Author"))
    date = _decode(info.get("CreationDate"))
    match = re.match(r"D?:?(\d{4})(\d{2})?(\d{2})?", date)
    day = "-".join(part for part in match.groups() if part) if match else ""
    language = ""
    try:
        from pdfminer.pdftypes import resolve1

        language = _decode(resolve1(document.catalog.get("Lang")))
    except Exception:  # noqa: BLE001 - a broken catalog entry only costs the language
        language = ""
    return BookMetadata(
        title=title or fallback_title,
        authors=tuple(a.strip() for a in re.split(r";|\s+and\s+|&", author) if a.strip()),
        language=language,
        description=_decode(info.get("Subject")),
        subjects=tuple(k.strip() for k in re.split(r"[;,]", _decode(info.get("Keywords"))) if k.strip())[:20],
        date=day,
        publisher="",
        identifier="",
    )


def _outline(document: Any) -> list[tuple[int, str, Any]]:
    """(level, title, destination page object) of each outline entry; [] without an outline."""
    from pdfminer.pdfdocument import PDFNoOutlines
    from pdfminer.pdftypes import resolve1

    entries = []
    try:
        for level, title, dest, action, _se in document.get_outlines():
            target = dest
            if target is None and action is not None:
                action = resolve1(action)
                if isinstance(action, dict) and str(getattr(action.get("S"), "name", "")) == "GoTo":
                    target = action.get("D")
            target = resolve1(target)
            if isinstance(target, bytes | str) or type(target).__name__ == "PSLiteral":
                name = target.name if type(target).__name__ == "PSLiteral" else target
                try:
                    target = resolve1(document.get_dest(name))
                except Exception:  # noqa: BLE001 - an unknown named destination: skip the entry
                    continue
            if isinstance(target, dict):
                target = resolve1(target.get("D"))
            if isinstance(target, list) and target:
                entries.append(
                    (level, _decode(title) if not isinstance(title, str) else " ".join(title.split()), target)
                )
    except PDFNoOutlines:
        return []
    except Exception:  # noqa: BLE001 - a broken outline costs the outline, not the book
        return []
    return entries


def _parts(
    pages: list[PageLines],
    outline: list[tuple[int, str, Any]],
    page_of: dict[int, int],
    *,
    notes: bool = False,
) -> list[Part]:
    body = body_size(pages)
    paras = paragraphs(pages, body=body, min_heading=_chapter_heading_min(pages, body), notes=notes)
    starts = _outline_starts(outline, paras, page_of)
    if starts:
        return _cut_at(paras, starts)
    return _cut_at_headings(paras)


def _chapter_heading_min(pages: list[PageLines], body: float) -> float:
    sizes = heading_sizes(pages, body)
    return sizes[-1] - 0.3 if sizes else body * 1.18  # sizes are rounded to 0.5 pt


def _outline_starts(
    outline: list[tuple[int, str, Any]], paras: list[TextPara], page_of: dict[int, int]
) -> list[tuple[int, str]]:
    """(paragraph index, title) where each chapter of the outline starts."""
    if not outline:
        return []
    levels = sorted({level for level, _, _ in outline})
    top = [e for e in outline if e[0] == levels[0]]
    if len(top) == 1 and len(levels) > 1:  # one entry for the whole book: its children are the chapters
        top = [e for e in outline if e[0] == levels[1]]
    starts, agreed = [], 0
    for _, title, target in top:
        page = page_of.get(getattr(target[0], "objid", None))
        if page is None or not title:
            continue
        # /XYZ left top zoom: the height the viewer jumps to
        top_y = target[3] if len(target) > 3 and str(getattr(target[1], "name", "")) == "XYZ" else None
        # Entries come in reading order: two "Foo" sections on one page are two headings.
        after = starts[-1][0] if starts else -1
        found = _title_on_page(paras, page, title, after=after)
        agreed += found is not None
        start = (
            found
            if found is not None
            else _find_start(paras, page, top_y if isinstance(top_y, int | float) else None)
        )
        starts.append((start, title))
    # An outline whose titles are not the headings its entries point at (a generator's "First",
    # "Second", or links named for their targets) is not the book's table of contents.
    if agreed * 2 < len(starts):
        return []
    return sorted(set(starts))


def _title_on_page(paras: list[TextPara], page: int, title: str, *, after: int = -1) -> int | None:
    """The paragraph on ``page`` that sets the outline entry's title (a heading first, after the
    paragraph ``after`` if it can), if any."""
    key = text_key(title)
    on_page = sorted(
        ((i, p) for i, p in enumerate(paras) if p.page == page), key=lambda item: item[0] <= after
    )
    for prefer_headings in (True, False):
        for index, para in on_page:
            para_key = text_key(para.text)
            if prefer_headings and not para.is_heading:
                continue
            if (
                para_key
                and key
                and (para_key.startswith(key) or key.startswith(para_key) or key in para_key[: len(key) + 4])
            ):
                return index
    return None


def _find_start(paras: list[TextPara], page: int, top: float | None) -> int:
    """Where a chapter whose title is not on its page starts: the first paragraph at or under the
    destination's height, else the page's first paragraph."""
    on_page = [(i, p) for i, p in enumerate(paras) if p.page == page]
    if top is not None:
        for index, para in on_page:
            if para.top <= top + 2:
                return index
    if on_page:
        return on_page[0][0]
    return next((i for i, p in enumerate(paras) if p.page >= page), len(paras))


def _cut_at(paras: list[TextPara], starts: list[tuple[int, str]]) -> list[Part]:
    parts = []
    first = starts[0][0]
    contents = next(
        (i for i in range(first) if paras[i].is_heading and _is_contents_title(paras[i].text)), first
    )
    if contents > 0:
        parts.append(Part(title="", blocks=_blocks(paras[:contents])))
    if (
        contents < first
    ):  # the contents page before the first chapter: a chapter of its own, not read by default
        parts.append(Part(title=paras[contents].text, blocks=_blocks(paras[contents:first])))
    for n, (start, title) in enumerate(starts):
        end = starts[n + 1][0] if n + 1 < len(starts) else len(paras)
        blocks = _blocks(paras[start:end])
        if blocks and text_key(blocks[0].text) == text_key(title):
            blocks = (heading(title), *blocks[1:])  # the title set as body text: said once, as the heading
        elif not blocks or not blocks[0].is_heading:
            blocks = (heading(title), *blocks)
        parts.append(Part(title=title, blocks=blocks))
    return parts


def _cut_at_headings(paras: list[TextPara]) -> list[Part]:
    """Without an outline: chapters at the largest heading size used at least twice."""
    counts: dict[float, int] = {}
    for para in paras:
        if para.is_heading:
            counts[round(para.size * 2) / 2] = counts.get(round(para.size * 2) / 2, 0) + 1
    repeated = sorted((s for s, c in counts.items() if c >= 2), reverse=True)
    if not repeated:
        paras, style_starts = _style_headings(paras)
        if style_starts:
            return _cut_at(paras, style_starts)
    starts = []
    for index, para in enumerate(paras):
        if para.is_heading and repeated and round(para.size * 2) / 2 == repeated[0]:
            starts.append((index, para.text))
        elif not para.is_heading and is_chapter_heading(para.text) and not repeated:
            starts.append((index, para.text))
    if not starts:
        return [Part(title="", blocks=_blocks(paras))]
    return _cut_at(paras, _title_page_first(paras, starts))


def _title_page_first(paras: list[TextPara], starts: list[tuple[int, str]]) -> list[tuple[int, str]]:
    """Short headed parts on the first page before the first real chapter (a paper's title, then its
    authors set as large as a section) are its title page, not chapters."""
    starts = list(starts)
    while len(starts) > 2 and paras[starts[0][0]].page == 0 and not _is_contents_title(starts[0][1]):
        words = sum(len(p.text.split()) for p in paras[starts[0][0] : starts[1][0]])
        if words >= _TITLE_PAGE_WORDS:
            break
        starts.pop(0)
    return starts


def _style_headings(paras: list[TextPara]) -> tuple[list[TextPara], list[tuple[int, str]]]:
    """Headings by style where none is set larger: a bold line alone, followed by body text.

    Such lines become headings; chapters start at the most prominent style (capitals, upright,
    size) used at least twice: the book's top level (a report's "INTRODUCTION" and "TITLE I: ..."
    set in small bold capitals above its larger mixed-case section titles).
    """

    def alone(para: TextPara) -> bool:
        return (
            para.bold
            and not para.is_heading
            and para.lines <= 2
            and len(para.text.split()) <= _STYLE_HEADING_WORDS
            and not para.text.endswith((".", ",", ";"))
            and any(ch.isalpha() for ch in para.text)
        )

    def body(i: int) -> bool:
        return i < len(paras) and not paras[i].bold and not paras[i].is_heading

    # Followed by body text, or by a subheading that is (a part title, then its first section's).
    found = [
        i
        for i, para in enumerate(paras)
        if alone(para) and (body(i + 1) or (i + 1 < len(paras) and alone(paras[i + 1]) and body(i + 2)))
    ]
    if not found:
        return paras, []

    def style(para: TextPara) -> tuple[float, bool, bool]:
        return round(para.size * 2) / 2, para.text.isupper(), para.italic

    counts = Counter(style(paras[i]) for i in found)
    # The most prominent style used twice: capitals before mixed case, upright before italic,
    # then the larger size (a title set small in capitals outranks a larger mixed-case section).
    top = max(
        (key for key, n in counts.items() if n >= 2), key=lambda k: (k[1], not k[2], k[0]), default=None
    )
    if top is None:
        return paras, []
    marked = list(paras)
    for i in found:
        marked[i] = dataclasses.replace(paras[i], is_heading=True)
    return marked, [(i, paras[i].text) for i in found if style(paras[i]) == top]


def _is_contents_title(text: str) -> bool:
    return classify_matter(MatterSignals(title=text, blocks=(), word_count=1)) == "table of contents"


def _blocks(paras: list[TextPara]) -> tuple[TextBlock, ...]:
    """The paragraphs as blocks, without lines of a table of contents ("1.2 Räume . . . . . 6")."""
    return tuple(
        heading(p.text) if p.is_heading else paragraph(_without_citations(p.text))
        for p in paras
        if not (leaders := len(_LEADERS_RE.findall(p.text))) or (leaders < 2 and len(p.text.split()) > 15)
    )


# A reference mark set against a word: "Firefox[4]", "XFA[23][24]", "[citation needed]" (a printed
# web page, a paper): the listener hears the sentence, not the note numbers.
_CITATION_RE = re.compile(r"(?<=[^\s\[])\[(?:\d{1,3}(?:\s*[,–-]\s*\d{1,3})*|citation needed)\]")


def _without_citations(text: str) -> str:
    return _CITATION_RE.sub("", text)
