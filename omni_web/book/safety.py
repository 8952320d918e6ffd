"""Checks a book must pass before anything parses it (EPUB archives first, other formats too).

Run on the open ZIP before ebooklib sees it, because ebooklib reads every manifest item into
memory: each member's declared size, the total and the compression ratio are checked against
limits first (Python's zipfile never inflates a member past its declared size, so the declared
sizes bound memory). Markup that declares XML entities is refused (billion laughs, external
entities); legitimate EPUBs never need them. Encrypted content is DRM, except the font
obfuscation the EPUB spec defines, which only mangles fonts.

The other formats get the same rules: DOCX and ODT are ZIP archives checked by
:func:`check_office_zip` (sizes, ratio, XML entities); single-file formats (PDF, TXT, Markdown,
HTML, FB2) are read through :func:`read_limited`, which refuses a file over its size limit before
reading it.
"""

from __future__ import annotations

import contextlib
import posixpath
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote

from lxml import etree

from omni_web.errors import DrmProtected, NotAnEpub, UnsafeBook

__all__ = [
    "DEFAULT_LIMITS",
    "FONT_OBFUSCATION_ALGORITHMS",
    "MAX_ARCHIVE_MEMBERS",
    "MAX_COMPRESSION_RATIO",
    "MAX_MARKUP_BYTES",
    "MAX_MEMBER_BYTES",
    "MAX_TOTAL_BYTES",
    "RATIO_CHECK_MIN_BYTES",
    "ArchiveCheck",
    "ArchiveLimits",
    "MAX_FILE_BYTES",
    "MAX_TEXT_FILE_BYTES",
    "check_archive",
    "check_office_zip",
    "office_archive",
    "has_entity_declaration",
    "parse_xml",
    "read_limited",
]

MAX_ARCHIVE_MEMBERS = 10_000
MAX_MEMBER_BYTES = 128 * 1024 * 1024  # one uncompressed member (large audio/video included)
MAX_TOTAL_BYTES = 512 * 1024 * 1024  # all members uncompressed
MAX_MARKUP_BYTES = 32 * 1024 * 1024  # one XHTML/XML document, which becomes an lxml tree
# Text compresses 3-10x and repetitive markup rarely past 50x; zip bombs reach ~1000x.
MAX_COMPRESSION_RATIO = 200.0
RATIO_CHECK_MIN_BYTES = 1024 * 1024  # small members may compress absurdly well; harmless
MAX_FILE_BYTES = 512 * 1024 * 1024  # one PDF (or any book file read whole)
MAX_TEXT_FILE_BYTES = 64 * 1024 * 1024  # one TXT/Markdown/HTML/FB2 file: ~10 million words of text

# Font mangling from the EPUB spec (IDPF) and Adobe: not DRM, the text stays readable.
FONT_OBFUSCATION_ALGORITHMS = frozenset(
    {"http://www.idpf.org/2008/embedding", "http://ns.adobe.com/pdf/enc#RC"}
)

CONTAINER_PATH = "META-INF/container.xml"
ENCRYPTION_PATH = "META-INF/encryption.xml"
_OPF_MEDIA_TYPE = "application/oebps-package+xml"
_NS = {
    "c": "urn:oasis:names:tc:opendocument:xmlns:container",
    "opf": "http://www.idpf.org/2007/opf",
    "enc": "http://www.w3.org/2001/04/xmlenc#",
}
_MARKUP_EXTENSIONS = (".xml", ".opf", ".ncx", ".xhtml", ".html", ".htm", ".xht", ".svg", ".smil")
_CONTENT_EXTENSIONS = (".xhtml", ".html", ".htm", ".xht", ".xml", ".opf", ".ncx", ".svg")
_ENTITY_MARKERS = tuple("<!ENTITY".encode(codec) for codec in ("utf-8", "utf-16-le", "utf-16-be"))
# Files that name the DRM scheme, for the message.
_DRM_SCHEMES = {
    "META-INF/rights.xml": "Adobe ADEPT",
    "META-INF/license.lcpl": "Readium LCP",
    "META-INF/sinf.xml": "Apple FairPlay",
}


@dataclass(frozen=True, slots=True)
class ArchiveLimits:
    """Size limits applied to every member before it is read (defaults: the module constants)."""

    max_members: int = MAX_ARCHIVE_MEMBERS
    max_member_bytes: int = MAX_MEMBER_BYTES
    max_total_bytes: int = MAX_TOTAL_BYTES
    max_markup_bytes: int = MAX_MARKUP_BYTES
    max_compression_ratio: float = MAX_COMPRESSION_RATIO
    ratio_check_min_bytes: int = RATIO_CHECK_MIN_BYTES
    max_file_bytes: int = MAX_FILE_BYTES
    max_text_file_bytes: int = MAX_TEXT_FILE_BYTES


DEFAULT_LIMITS = ArchiveLimits()


@dataclass(frozen=True, slots=True)
class ArchiveCheck:
    """What the checks learned: where the package document is and what is encrypted."""

    opf_path: str
    encrypted_paths: frozenset[str]  # non-content resources encrypted with a real cipher
    obfuscated_fonts: int
    total_bytes: int


def parse_xml(data: bytes, *, recover: bool = False) -> etree._Element:
    """Parse XML without resolving entities, loading DTDs, network access or huge-tree mode.

    Raises:
        etree.XMLSyntaxError: the document is not well-formed (with ``recover=False``) or empty.
    """
    parser = etree.XMLParser(
        resolve_entities=False,
        load_dtd=False,
        no_network=True,
        huge_tree=False,
        recover=recover,
        remove_comments=True,
        remove_pis=True,
    )
    root = etree.fromstring(data, parser)
    if root is None:
        raise etree.XMLSyntaxError("document is empty", None, 0, 0)
    return root


def has_entity_declaration(data: bytes) -> bool:
    """True when the markup declares an entity (in UTF-8 or UTF-16)."""
    return any(marker in data for marker in _ENTITY_MARKERS)


def check_archive(archive: zipfile.ZipFile, *, name: str,
                  limits: ArchiveLimits = DEFAULT_LIMITS) -> ArchiveCheck:
    """Check sizes, structure, markup and encryption of an open EPUB archive.

    Args:
        archive: the EPUB opened as a ZIP.
        name: the file name to use in messages.
        limits: size limits; tests pass small ones.

    Raises:
        UnsafeBook: a member or the total is too large, too compressed, or markup declares entities.
        NotAnEpub: no container.xml, no package document, or the package document is broken.
        DrmProtected: content documents are encrypted, or the ZIP is password-protected.
    """
    infos = _check_sizes(archive, name=name, limits=limits)
    opf_path = _find_opf(archive, infos, name=name)
    manifest_markup = _check_package(archive, opf_path, name=name)
    for info in infos.values():
        if info.filename.lower().endswith(_MARKUP_EXTENSIONS) or info.filename in manifest_markup:
            _check_markup(archive, info, name=name, limits=limits)
    encrypted, fonts = _check_encryption(archive, infos, name=name)
    return ArchiveCheck(
        opf_path=opf_path,
        encrypted_paths=encrypted,
        obfuscated_fonts=fonts,
        total_bytes=sum(info.file_size for info in infos.values()),
    )


def _check_sizes(archive: zipfile.ZipFile, *, name: str, limits: ArchiveLimits) -> dict[str, zipfile.ZipInfo]:
    """Member count, declared sizes, total and ratio; returns members by name."""
    infos = archive.infolist()
    if len(infos) > limits.max_members:
        raise UnsafeBook(
            f"'{name}' holds {len(infos)} files, more than the {limits.max_members} a book can "
            "reasonably have; it was not opened. Use another copy of the book."
        )
    total = 0
    for info in infos:
        if info.flag_bits & 0x1:
            raise DrmProtected(
                f"'{name}' is a password-protected ZIP ({info.filename} is encrypted). omni-web can "
                "only read DRM-free EPUBs; use an unprotected copy of the book."
            )
        total += info.file_size
        if info.file_size > limits.max_member_bytes:
            raise UnsafeBook(
                f"'{name}' contains {info.filename}, which unpacks to {_mib(info.file_size)}, over "
                f"the {_mib(limits.max_member_bytes)} limit for one file; it was not opened "
                "(it may be a decompression bomb). Use another copy of the book."
            )
        ratio = info.file_size / max(info.compress_size, 1)
        if info.file_size >= limits.ratio_check_min_bytes and ratio > limits.max_compression_ratio:
            raise UnsafeBook(
                f"'{name}' contains {info.filename}, compressed {ratio:.0f}:1 (limit "
                f"{limits.max_compression_ratio:.0f}:1), the mark of a decompression bomb; it was "
                "not opened. Use another copy of the book."
            )
    if total > limits.max_total_bytes:
        raise UnsafeBook(
            f"'{name}' unpacks to {_mib(total)}, over the {_mib(limits.max_total_bytes)} limit for "
            "a whole book; it was not opened. Use another copy of the book."
        )
    return {info.filename: info for info in infos}


def check_office_zip(archive: zipfile.ZipFile, *, name: str, limits: ArchiveLimits = DEFAULT_LIMITS) -> int:
    """The EPUB's size, ratio and entity rules for a DOCX or ODT archive; returns the unpacked size.

    Raises:
        UnsafeBook: a member or the total is too large or too compressed, or XML declares entities.
        DrmProtected: the ZIP is password-protected.
    """
    infos = _check_sizes(archive, name=name, limits=limits)
    for info in infos.values():
        if info.filename.lower().endswith((*_MARKUP_EXTENSIONS, ".rels")):
            _check_markup(archive, info, name=name, limits=limits)
    return sum(info.file_size for info in infos.values())


@contextlib.contextmanager
def office_archive(
    path: Path,
    *,
    kind: str,
    app: str,
    limits: ArchiveLimits = DEFAULT_LIMITS,
    unreadable: tuple[type[Exception], ...] = (),
) -> Iterator[zipfile.ZipFile]:
    """The DOCX or ODT archive at ``path``, checked by :func:`check_office_zip`, open for the block.

    A broken archive, or ``unreadable`` raised while the block reads it, is told as a document of
    ``kind`` to open and save again in ``app``.

    Raises:
        UnsafeBook, DrmProtected: as :func:`check_office_zip`.
        NotAnEpub: the archive or the document in it cannot be read.
    """
    try:
        with zipfile.ZipFile(path) as archive:
            check_office_zip(archive, name=path.name, limits=limits)
            yield archive
    except (zipfile.BadZipFile, KeyError, ValueError, *unreadable) as exc:
        raise NotAnEpub(
            f"'{path.name}' is not a readable {kind} ({exc}). Open and save it again in {app}."
        ) from exc


def read_limited(path: str | Path, *, name: str, limit: int) -> bytes:
    """The file's bytes, refused before reading when it is larger than ``limit``.

    Raises:
        UnsafeBook: the file is over the limit.
        OSError: it cannot be read.
    """
    size = Path(path).stat().st_size
    if size > limit:
        raise UnsafeBook(
            f"'{name}' is {_mib(size)}, over the {_mib(limit)} limit for a book file of its kind; it "
            "was not opened. Split it, or use another copy of the book."
        )
    with Path(path).open("rb") as handle:
        return handle.read(limit + 1)


def _find_opf(archive: zipfile.ZipFile, infos: dict[str, zipfile.ZipInfo], *, name: str) -> str:
    """The package document's path, from META-INF/container.xml."""
    if CONTAINER_PATH not in infos:
        raise NotAnEpub(
            f"'{name}' is a ZIP file but not an EPUB: it has no {CONTAINER_PATH}. Choose an .epub "
            "file (convert other formats to EPUB with Calibre first)."
        )
    data = archive.read(CONTAINER_PATH)
    if has_entity_declaration(data):
        raise _entities(name, CONTAINER_PATH)
    try:
        root = parse_xml(data, recover=True)
    except etree.XMLSyntaxError as exc:
        raise NotAnEpub(f"'{name}' is damaged: {CONTAINER_PATH} cannot be read ({exc}).") from exc
    paths = [
        node.get("full-path", "")
        for node in root.iterfind(".//c:rootfile", _NS)
        if node.get("media-type", _OPF_MEDIA_TYPE) == _OPF_MEDIA_TYPE
    ]
    paths = [path for path in paths if path]
    if not paths:
        raise NotAnEpub(
            f"'{name}' is damaged: {CONTAINER_PATH} names no package document (.opf). Use another "
            "copy of the book."
        )
    opf_path = posixpath.normpath(unquote(paths[0]))
    if opf_path not in infos:
        raise NotAnEpub(
            f"'{name}' is damaged: its package document {opf_path} is missing from the archive. "
            "Use another copy of the book."
        )
    return opf_path


def _check_package(archive: zipfile.ZipFile, opf_path: str, *, name: str) -> frozenset[str]:
    """Parse the OPF; returns the archive paths of manifest items that are markup."""
    data = archive.read(opf_path)
    if has_entity_declaration(data):
        raise _entities(name, opf_path)
    try:
        root = parse_xml(data)
    except etree.XMLSyntaxError as exc:
        try:  # ebooklib parses in recover mode; accept what it can use, name what is broken
            root = parse_xml(data, recover=True)
        except etree.XMLSyntaxError:
            root = None
        if root is None or root.find("opf:manifest", _NS) is None or root.find("opf:spine", _NS) is None:
            raise NotAnEpub(
                f"'{name}' is damaged: its package document {opf_path} is not well-formed XML "
                f"({exc}). Use another copy of the book, or repair it with Calibre or Sigil."
            ) from exc
    if root.find("opf:manifest", _NS) is None or root.find("opf:spine", _NS) is None:
        raise NotAnEpub(
            f"'{name}' is damaged: its package document {opf_path} has no manifest or no spine. "
            "Use another copy of the book, or repair it with Calibre or Sigil."
        )
    base = posixpath.dirname(opf_path)
    markup = set()
    for item in root.iterfind("opf:manifest/opf:item", _NS):
        media_type = item.get("media-type", "")
        href = item.get("href", "")
        if href and ("xml" in media_type or "html" in media_type):
            markup.add(posixpath.normpath(posixpath.join(base, unquote(href))))
    return frozenset(markup)


def _check_markup(
    archive: zipfile.ZipFile, info: zipfile.ZipInfo, *, name: str, limits: ArchiveLimits
) -> None:
    """Size and entity check of one XML/XHTML member."""
    if info.file_size > limits.max_markup_bytes:
        raise UnsafeBook(
            f"'{name}' contains the document {info.filename} of {_mib(info.file_size)}, over the "
            f"{_mib(limits.max_markup_bytes)} limit for one page of markup; it was not opened. "
            "Use another copy of the book."
        )
    if has_entity_declaration(archive.read(info)):
        raise _entities(name, info.filename)


def _check_encryption(
    archive: zipfile.ZipFile, infos: dict[str, zipfile.ZipInfo], *, name: str
) -> tuple[frozenset[str], int]:
    """Refuse DRM; returns (other encrypted resources, number of obfuscated fonts)."""
    if ENCRYPTION_PATH not in infos:
        return frozenset(), 0
    scheme = next((label for path, label in _DRM_SCHEMES.items() if path in infos), "")
    try:
        root = parse_xml(archive.read(ENCRYPTION_PATH), recover=True)
    except etree.XMLSyntaxError as exc:
        raise DrmProtected(
            f"'{name}' declares encryption ({ENCRYPTION_PATH}) that cannot be read, so it is "
            "probably protected by DRM. omni-web can only read DRM-free books; use a DRM-free copy."
        ) from exc
    content, other, fonts = [], set(), 0
    for data in root.iterfind(".//enc:EncryptedData", _NS):
        method = data.find("enc:EncryptionMethod", _NS)
        algorithm = method.get("Algorithm", "") if method is not None else ""
        reference = data.find("enc:CipherData/enc:CipherReference", _NS)
        uri = posixpath.normpath(unquote(reference.get("URI", ""))) if reference is not None else ""
        if algorithm in FONT_OBFUSCATION_ALGORITHMS:
            fonts += 1
        elif uri.lower().endswith(_CONTENT_EXTENSIONS):
            content.append(uri)
        elif uri:
            other.add(uri)
    if content:
        label = f"{scheme}; " if scheme else ""
        files = "file" if len(content) == 1 else "files"
        raise DrmProtected(
            f"This EPUB is protected by DRM ({label}{ENCRYPTION_PATH} encrypts {len(content)} "
            f"content {files}). omni-web can only read DRM-free books; use a DRM-free edition of "
            "the book (many shops and publishers sell them)."
        )
    return frozenset(other), fonts


def _entities(name: str, member: str) -> UnsafeBook:
    return UnsafeBook(
        f"'{name}' was not opened: {member} declares XML entities, which EPUBs do not need and "
        'which can be used to exhaust memory ("billion laughs"). Use another copy of the book.'
    )


def _mib(size: int) -> str:
    return f"{size / (1024 * 1024):.1f} MiB"
