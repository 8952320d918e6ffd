"""Short books in DOCX, ODT, HTML, Markdown, FB2 and text with the traps of each format (tests only).

Each has the same three chapters (:data:`CHAPTER_TITLES`) and one sentence per chapter that must
be read (:data:`SPOKEN`), plus text that must never be: a running header and footer with a page
number (DOCX), footnotes and comments (DOCX, ODT, HTML, FB2), a Gutenberg licence (text).
"""

from __future__ import annotations

import base64
from pathlib import Path

__all__ = ["CHAPTER_TITLES", "NEVER_READ", "SPOKEN", "docx_book", "fb2_book", "html_book", "odt_book",
           "text_book"]

CHAPTER_TITLES = ("Chapter One: The Storm", "Chapter Two: The Letter", "Chapter Three: The Harbour")
SPOKEN = (
    "The wind rose before dusk and the keeper climbed the stairs to trim the wick.",
    "A letter came with the supply boat on the first calm morning of the year.",
    "The harbour was full of boats when he came down from the rock at last.",
)
NEVER_READ = (
    "THE LIGHTHOUSE KEEPER",
    "Page 7",
    "A footnote nobody should hear.",
    "A comment nobody should hear.",
    "Project Gutenberg License",
)
_MORE = "He thought of his daughter in the town, and of the long winter ahead of them both."
_PIXEL_PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
)


def docx_book(path: Path) -> Path:
    """Heading 1 chapters, a running header and a page-numbered footer, a comment on a paragraph."""
    import docx

    document = docx.Document()
    document.core_properties.title = "The Lighthouse Keeper"
    document.core_properties.author = "Ada Lovelace-Byron"
    section = document.sections[0]
    section.header.paragraphs[0].text = NEVER_READ[0]
    section.footer.paragraphs[0].text = NEVER_READ[1]
    document.add_paragraph("The Lighthouse Keeper", style="Title")
    for title, sentence in zip(CHAPTER_TITLES, SPOKEN, strict=True):
        document.add_heading(title, level=1)
        para = document.add_paragraph(sentence)
        document.add_paragraph(_MORE)
    document.add_comment(para.runs, text=NEVER_READ[3], author="Editor")
    document.save(str(path))
    return path


def odt_book(path: Path) -> Path:
    """Level-1 headings, a footnote inside a sentence, a comment (annotation) and a picture before the text."""
    from odf import dc, draw, office, text
    from odf.opendocument import OpenDocumentText

    document = OpenDocumentText()
    document.meta.addElement(dc.Title(text="The Lighthouse Keeper"))
    document.meta.addElement(dc.Creator(text="Ada Lovelace-Byron"))
    picture = document.addPicture("Pictures/cover.png", mediatype="image/png", content=_PIXEL_PNG)
    frame = draw.Frame(width="2cm", height="2cm", anchortype="paragraph")
    frame.addElement(draw.Image(href=picture))
    cover = text.P()
    cover.addElement(frame)
    document.text.addElement(cover)
    for number, (title, sentence) in enumerate(zip(CHAPTER_TITLES, SPOKEN, strict=True), start=1):
        document.text.addElement(text.H(outlinelevel=1, text=title))
        para = text.P(text=sentence[:-1])
        note = text.Note(id=f"ftn{number}", noteclass="footnote")
        note.addElement(text.NoteCitation(text=str(number)))
        body = text.NoteBody()
        body.addElement(text.P(text=NEVER_READ[2]))
        note.addElement(body)
        para.addElement(note)
        para.addText(".")
        annotation = office.Annotation()
        annotation.addElement(text.P(text=NEVER_READ[3]))
        para.addElement(annotation)
        document.text.addElement(para)
        document.text.addElement(text.P(text=_MORE))
    document.save(str(path))
    return path


def html_book(path: Path) -> Path:
    """``<h2>`` chapters under one ``<h1>``, a footnote reference and an aside of notes."""
    chapters = "".join(
        f'<h2>{title}</h2><p>{sentence[:-1]}<a href="#n{n}" epub:type="noteref">{n}</a>.</p><p>{_MORE}</p>'
        for n, (title, sentence) in enumerate(zip(CHAPTER_TITLES, SPOKEN, strict=True), start=1)
    )
    notes = "".join(
        f'<aside id="n{n}" epub:type="footnote"><p>{NEVER_READ[2]}</p></aside>' for n in (1, 2, 3)
    )
    path.write_text(
        '<!DOCTYPE html>\n<html lang="en" xmlns:epub="http://www.idpf.org/2007/ops"><head><meta '
        'charset="utf-8">'
        '<title>The Lighthouse Keeper</title><meta name="author" content="Ada Lovelace-Byron"></head>'
        f"<body><h1>The Lighthouse Keeper</h1>{chapters}{notes}<script>var x = 'never "
        "read';</script></body></html>",
        encoding="utf-8",
    )
    return path


def fb2_book(path: Path) -> Path:
    """Sections with two-line titles, a note link, a notes body, a series and a cover picture."""
    sections = "".join(
        f"<section><title><p>{title.split(': ')[0]}</p><p>{title.split(': ')[1]}</p></title>"
        f'<p>{sentence[:-1]}<a l:href="#n{n}" type="note">[{n}]</a>.</p><p>{_MORE}</p></section>'
        for n, (title, sentence) in enumerate(zip(CHAPTER_TITLES, SPOKEN, strict=True), start=1)
    )
    path.write_text(
        '<?xml version="1.0" encoding="utf-8"?>\n'
        '<FictionBook xmlns="http://www.gribuser.ru/xml/fictionbook/2.0" xmlns:l="http://www.w3.org/1999/xlink">'
        "<description><title-info><genre>sea_stories</genre><author><first-name>Ada</first-name>"
        "<last-name>Lovelace-Byron</last-name></author><book-title>The Lighthouse Keeper</book-title>"
        '<annotation><p>A short test novel.</p></annotation><lang>en</lang><sequence name="Coast Tales" '
        'number="2"/>'
        '<coverpage><image l:href="#cover.png"/></coverpage></title-info>'
        "<publish-info><isbn>978-0-306-40615-7</isbn></publish-info></description>"
        f"<body><title><p>The Lighthouse Keeper</p></title>{sections}</body>"
        f'<body name="notes"><section id="n1"><p>{NEVER_READ[2]}</p></section></body>'
        f'<binary id="cover.png" content-type="image/png">{base64.b64encode(_PIXEL_PNG).decode()}</binary>'
        "</FictionBook>",
        encoding="utf-8",
    )
    return path


def text_book(path: Path, *, encoding: str = "utf-8") -> Path:
    """Gutenberg-style plain text: header, "CHAPTER I." headings with subtitles, licence footer."""
    body = "\n\n\n".join(
        f"CHAPTER {roman}.\n{title.split(': ')[1]}\n\n{sentence}\n\n{_MORE}"
        for roman, title, sentence in zip(("I", "II", "III"), CHAPTER_TITLES, SPOKEN, strict=True)
    )
    path.write_text(
        "The Project Gutenberg eBook of The Lighthouse Keeper\n\nTitle: The Lighthouse Keeper\n\n"
        "Author: Ada Lovelace-Byron\n\nLanguage: English\n\n"
        "*** START OF THE PROJECT GUTENBERG EBOOK THE LIGHTHOUSE KEEPER ***\n\n\n"
        f"{body}\n\n\n*** END OF THE PROJECT GUTENBERG EBOOK THE LIGHTHOUSE KEEPER ***\n\n"
        "Updated editions will replace the previous one. Read the full Project Gutenberg License.\n",
        encoding=encoding,
    )
    return path
