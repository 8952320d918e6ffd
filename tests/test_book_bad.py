"""Bad books give a clear BookError naming the problem, never a traceback or unbounded memory."""

from __future__ import annotations

import resource
from pathlib import Path

import pytest

from omni_web.book import load_book
from omni_web.book.safety import ArchiveLimits
from omni_web.errors import BookNotFound, DrmProtected, EmptyBook, NotAnEpub, UnsafeBook
from tests.epub_builder import make_epub, nav_xhtml, xhtml

_AES = "http://www.w3.org/2001/04/xmlenc#aes128-cbc"
_IDPF_FONT = "http://www.idpf.org/2008/embedding"
_ADOBE_FONT = "http://ns.adobe.com/pdf/enc#RC"


def _encryption_xml(entries: list[tuple[str, str]]) -> str:
    data = "".join(
        f'<enc:EncryptedData><enc:EncryptionMethod Algorithm="{algorithm}"/>'
        f'<enc:CipherData><enc:CipherReference URI="{uri}"/></enc:CipherData></enc:EncryptedData>'
        for uri, algorithm in entries
    )
    return (
        '<?xml version="1.0"?><encryption xmlns="urn:oasis:names:tc:opendocument:xmlns:container" '
        f'xmlns:enc="http://www.w3.org/2001/04/xmlenc#">{data}</encryption>'
    )


def _three_chapters() -> list[tuple[str, str]]:
    return [(f"c{i}.xhtml", xhtml(f"<h1>Part {i}</h1><p>Some words in part {i}.</p>")) for i in range(3)]


def test_not_a_zip(tmp_path: Path) -> None:
    path = tmp_path / "notes.epub"
    path.write_text("just some text, not a book")
    with pytest.raises(NotAnEpub, match="not an EPUB: it is not a ZIP archive") as info:
        load_book(path)
    assert "Calibre" in str(info.value)


def test_pdf_renamed_to_epub_is_read_as_a_pdf(tmp_path: Path) -> None:
    # The content decides the reader: this one is a (truncated) PDF, whatever its name says.
    path = tmp_path / "paper.epub"
    path.write_bytes(b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj\n")
    with pytest.raises(NotAnEpub, match="is a damaged PDF"):
        load_book(path)


def test_empty_file(tmp_path: Path) -> None:
    path = tmp_path / "empty.epub"
    path.write_bytes(b"")
    with pytest.raises(NotAnEpub, match="an empty file"):
        load_book(path)


def test_missing_file_and_folder(tmp_path: Path) -> None:
    with pytest.raises(BookNotFound, match="does not exist"):
        load_book(tmp_path / "nowhere.epub")
    with pytest.raises(NotAnEpub, match="is a folder"):
        load_book(tmp_path)


def test_zip_without_container(tmp_path: Path) -> None:
    path = make_epub(tmp_path / "plain.epub", container=None)
    with pytest.raises(NotAnEpub, match="no META-INF/container.xml"):
        load_book(path)


def test_container_names_missing_opf(tmp_path: Path) -> None:
    container = (
        '<?xml version="1.0"?><container version="1.0" '
        'xmlns="urn:oasis:names:tc:opendocument:xmlns:container"><rootfiles>'
        '<rootfile full-path="OPS/book.opf" media-type="application/oebps-package+xml"/>'
        "</rootfiles></container>"
    )
    path = make_epub(tmp_path / "lost.epub", container=container)
    with pytest.raises(NotAnEpub, match="package document OPS/book.opf is missing"):
        load_book(path)


def test_container_without_rootfile(tmp_path: Path) -> None:
    container = '<container xmlns="urn:oasis:names:tc:opendocument:xmlns:container"><rootfiles/></container>'
    path = make_epub(tmp_path / "norootfile.epub", container=container)
    with pytest.raises(NotAnEpub, match="names no package document"):
        load_book(path)


def test_broken_opf_xml(tmp_path: Path) -> None:
    path = make_epub(tmp_path / "broken.epub", opf='<?xml version="1.0"?><package><metadata><dc:title>Oops')
    with pytest.raises(NotAnEpub, match="is not well-formed XML") as info:
        load_book(path)
    assert "OEBPS/content.opf" in str(info.value)


def test_drm_encrypted_content(tmp_path: Path) -> None:
    chapters = _three_chapters()
    encryption = _encryption_xml([(f"OEBPS/{name}", _AES) for name, _ in chapters])
    path = make_epub(
        tmp_path / "drm.epub",
        chapters,
        extra_files={"META-INF/encryption.xml": encryption, "META-INF/rights.xml": "<rights/>"},
    )
    with pytest.raises(DrmProtected) as info:
        load_book(path)
    message = str(info.value)
    assert message.startswith(
        "This EPUB is protected by DRM (Adobe ADEPT; META-INF/encryption.xml encrypts 3 content files)"
    )
    assert "DRM-free" in message


def test_font_obfuscation_is_not_drm(tmp_path: Path) -> None:
    fonts = {"OEBPS/fonts/a.otf": b"\x00" * 64, "OEBPS/fonts/b.ttf": b"\x01" * 64}
    encryption = _encryption_xml([("OEBPS/fonts/a.otf", _IDPF_FONT), ("OEBPS/fonts/b.ttf", _ADOBE_FONT)])
    manifest = (
        '<item id="f1" href="fonts/a.otf" media-type="font/otf"/>'
        '<item id="f2" href="fonts/b.ttf" media-type="font/ttf"/>'
    )
    path = make_epub(
        tmp_path / "fonts.epub",
        extra_files={**fonts, "META-INF/encryption.xml": encryption},
        extra_manifest=manifest,
    )
    book = load_book(path)
    assert book.chapters[0].blocks[1].text == "Hello there."


def test_password_protected_zip(tmp_path: Path) -> None:
    path = make_epub(tmp_path / "locked.epub", extra_files={"OEBPS/secret.xhtml": "x"})
    data = bytearray(path.read_bytes())
    name = b"OEBPS/secret.xhtml"
    # Set the ZIP "encrypted" flag in the member's local and central headers (zipfile cannot).
    for signature, flag_at, name_at in ((b"PK\x03\x04", 6, 30), (b"PK\x01\x02", 8, 46)):
        start = 0
        while (start := data.find(signature, start)) != -1:
            if data[start + name_at : start + name_at + len(name)] == name:
                data[start + flag_at] |= 0x1
            start += 4
    path.write_bytes(bytes(data))
    with pytest.raises(DrmProtected, match="password-protected ZIP"):
        load_book(path)


@pytest.mark.parametrize("member", ["OEBPS/ch1.xhtml", "OEBPS/content.opf"])
def test_billion_laughs_is_refused_before_parsing(tmp_path: Path, member: str) -> None:
    lol = (
        '<?xml version="1.0"?><!DOCTYPE html [<!ENTITY lol "lol">'
        + "".join(
            f'<!ENTITY lol{i} "{("&lol" + (str(i - 1) if i > 1 else "") + ";") * 10}">' for i in range(1, 10)
        )
        + ']><html xmlns="http://www.w3.org/1999/xhtml"><body><p>&lol9;</p></body></html>'
    )
    if member.endswith(".opf"):
        path = make_epub(tmp_path / "lol.epub", opf=lol)
    else:
        path = make_epub(tmp_path / "lol.epub", [("ch1.xhtml", lol)])
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    with pytest.raises(UnsafeBook, match="declares XML entities") as info:
        load_book(path)
    assert member in str(info.value)
    growth_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
    assert growth_kib < 200_000  # a billion "lol"s would need gigabytes


def test_external_entity_is_refused(tmp_path: Path) -> None:
    xxe = (
        '<?xml version="1.0"?><!DOCTYPE html [<!ENTITY x SYSTEM "file:///etc/passwd">]>'
        '<html xmlns="http://www.w3.org/1999/xhtml"><body><p>&x;</p></body></html>'
    )
    path = make_epub(tmp_path / "xxe.epub", [("ch1.xhtml", xxe)])
    with pytest.raises(UnsafeBook, match="entities"):
        load_book(path)


def test_decompression_bomb_ratio(tmp_path: Path) -> None:
    path = make_epub(tmp_path / "bomb.epub", extra_files={"OEBPS/zeros.bin": b"\0" * (4 * 1024 * 1024)})
    with pytest.raises(UnsafeBook, match=r"zeros.bin, compressed \d+:1 .*decompression bomb"):
        load_book(path)


def test_member_size_limit(tmp_path: Path) -> None:
    path = make_epub(tmp_path / "big.epub", extra_files={"OEBPS/big.bin": bytes(range(256)) * 64})
    with pytest.raises(UnsafeBook, match="big.bin, which unpacks to .* over the .* limit for one file"):
        load_book(path, limits=ArchiveLimits(max_member_bytes=10_000))


def test_total_size_limit(tmp_path: Path) -> None:
    files = {f"OEBPS/f{i}.bin": bytes(range(256)) * 16 for i in range(10)}
    path = make_epub(tmp_path / "many.epub", extra_files=files)
    with pytest.raises(UnsafeBook, match="unpacks to .* limit for a whole book"):
        load_book(path, limits=ArchiveLimits(max_total_bytes=30_000))


def test_member_count_limit(tmp_path: Path) -> None:
    files = {f"OEBPS/x{i}.txt": "x" for i in range(30)}
    path = make_epub(tmp_path / "crowded.epub", extra_files=files)
    with pytest.raises(UnsafeBook, match="holds 3\\d files"):
        load_book(path, limits=ArchiveLimits(max_members=20))


def test_markup_size_limit(tmp_path: Path) -> None:
    body = "<p>" + "word " * 5000 + "</p>"
    path = make_epub(tmp_path / "longpage.epub", [("ch1.xhtml", xhtml(body))])
    with pytest.raises(UnsafeBook, match="the document OEBPS/ch1.xhtml"):
        load_book(path, limits=ArchiveLimits(max_markup_bytes=10_000))


def test_image_only_book_is_empty(tmp_path: Path) -> None:
    pages = [(f"p{i}.xhtml", xhtml(f'<img src="img{i}.jpg" alt="page {i}"/>')) for i in range(3)]
    path = make_epub(tmp_path / "scans.epub", pages)
    with pytest.raises(EmptyBook, match="no text to read aloud: its 3 pages hold only pictures"):
        load_book(path)


def test_book_without_text_is_empty(tmp_path: Path) -> None:
    path = make_epub(
        tmp_path / "blank.epub", [("p.xhtml", xhtml("<div>   </div><script>var a = 1;</script>"))]
    )
    with pytest.raises(EmptyBook, match="pages are empty"):
        load_book(path)


def test_missing_manifest_file_does_not_break_the_book(tmp_path: Path) -> None:
    manifest = '<item id="font" href="fonts/missing.otf" media-type="font/otf"/>'
    path = make_epub(tmp_path / "gap.epub", extra_manifest=manifest)
    assert load_book(path).chapters[0].word_count == 3


def test_unparseable_page_is_skipped_not_fatal(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    docs = [("a.xhtml", xhtml("<h1>Fine</h1><p>Readable text here.</p>")), ("b.xhtml", "")]
    path = make_epub(tmp_path / "halfbroken.epub", docs, nav=nav_xhtml([("a.xhtml", "A"), ("b.xhtml", "B")]))
    book = load_book(path)
    assert [c.title for c in book.chapters] == ["A", "B"]
    assert book.chapters[1].word_count == 0 and book.chapters[1].matter_reason == "empty page"
    assert any("b.xhtml cannot be parsed" in record.getMessage() for record in caplog.records)  # not silent
