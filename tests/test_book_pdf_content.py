"""The fast content-stream reader builds the objects pdfminer's own parser builds, on real pages."""

from __future__ import annotations

import pytest

from omni_web.book.pdfcontent import content_objects, has_inline_image
from tests.conftest import DATA_DIR

PDFS = DATA_DIR / "corpus" / "pdf"


def _pdfminer_objects(data: bytes) -> list[object]:
    from pdfminer.pdfinterp import PDFContentParser
    from pdfminer.pdftypes import PDFStream
    from pdfminer.psparser import PSEOF

    stream = PDFStream({}, data)
    stream.objid = 1
    parser = PDFContentParser([stream])
    out = []
    while True:
        try:
            out.append(parser.nextobject()[1])
        except PSEOF:
            return out


def _page_streams(name: str, pages: int) -> list[bytes]:
    from pdfminer.pdfdocument import PDFDocument
    from pdfminer.pdfpage import PDFPage
    from pdfminer.pdfparser import PDFParser
    from pdfminer.pdftypes import stream_value

    with (PDFS / name).open("rb") as handle:
        document = PDFDocument(PDFParser(handle))
        found = []
        for index, page in enumerate(PDFPage.create_pages(document)):
            if index >= pages:
                break
            found += [stream_value(s).get_data() for s in page.contents]
        return found


@pytest.mark.parametrize(
    "name",
    [
        "sample-files-geotopo-de.pdf",
        "pdfjs-tracemonkey.pdf",
        "pdfplumber-french-chapter.pdf",
        "pypdf-multilang.pdf",
        "sample-files-libreoffice-writer.pdf",
    ],
)
def test_real_pages_give_the_objects_pdfminer_gives(name: str) -> None:
    streams = [data for data in _page_streams(name, 3) if not has_inline_image(data)]
    assert streams
    for data in streams:
        assert list(content_objects(data)) == _pdfminer_objects(data)


def test_strings_names_and_nesting() -> None:
    data = (
        b"BT /F1#20a 12 Tf [(Caf\\351 \\(nested (paren)\\)) -250 <48656C6C6F> (a\\\nb)] TJ "
        b"<< /Type /X /N [1 -2.5 .5 +3] /B true >> BDC % a comment\n(line\\n) Tj ET"
    )
    assert list(content_objects(data)) == _pdfminer_objects(data)


def test_spaces_and_comments_around_the_tokens_are_read_past() -> None:
    # The reader takes spaces and comments with the token after them; a stream may end in either.
    data = b"  % opening comment\n\x00BT\r\n% between\n/F1 9 Tf (a) Tj ET \n% last line, no newline"
    assert list(content_objects(data)) == _pdfminer_objects(data)
    assert len(list(content_objects(data))) == 7
    assert list(content_objects(b" \n\t ")) == []


def test_inline_images_are_left_to_pdfminer() -> None:
    assert has_inline_image(b"q 10 0 0 10 0 0 cm BI /W 1 /H 1 ID \x00 EI Q")
    assert not has_inline_image(b"BT /BIG 12 Tf (ABIDE) Tj ET")  # a "(BI)" string would only cost speed
