"""A fast reader of PDF content streams (the operators that draw a page) for pdfminer's interpreter.

pdfminer tokenizes content streams a byte class at a time in Python; on a typeset book that is
half the time of reading it (every number of every glyph position and drawn line). This module
cuts a stream into tokens with one regular expression and builds the same objects pdfminer's
parser builds (numbers, names as ``PSLiteral``, strings as bytes, arrays, dictionaries, operators
as ``PSKeyword``), so the interpreter runs unchanged on them. Streams with inline images (``BI``
... ``ID`` binary data ``EI``) are left to pdfminer's own parser, which knows where their data ends.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

__all__ = ["content_objects", "has_inline_image", "page_interpreter"]

_DELIMITERS = rb"\s\[\]()<>{}/%"
# Spaces and comments before a token are taken with it: one match per token, not two.
_TOKEN_RE = re.compile(
    rb"(?:[\s\x00]+|%[^\r\n]*)*+"
    rb"(?:(?P<number>[+-]?(?:\d+\.?\d*|\.\d+))(?![^" + _DELIMITERS + rb"])"
    rb"|(?P<name>/[^" + _DELIMITERS + rb"]*)"
    rb"|(?P<dictopen><<)|(?P<dictclose>>>)"
    rb"|(?P<hex><[0-9A-Fa-f\s]*>)"
    rb"|(?P<open>[\[{])|(?P<close>[\]}])"
    rb"|(?P<string>\()"
    rb"|(?P<keyword>[^" + _DELIMITERS + rb"]+))"
)
_TRAILING_RE = re.compile(rb"(?:[\s\x00]+|%[^\r\n]*)*+\Z")
_INLINE_IMAGE_RE = re.compile(rb"(?:^|[" + _DELIMITERS + rb"])BI(?:$|[" + _DELIMITERS + rb"])")
_NAME_ESCAPE_RE = re.compile(rb"#([0-9A-Fa-f]{2})")
_ESCAPES = {ord("n"): b"\n", ord("r"): b"\r", ord("t"): b"\t", ord("b"): b"\b", ord("f"): b"\f",
            ord("("): b"(", ord(")"): b")", ord("\\"): b"\\"}


def has_inline_image(data: bytes) -> bool:
    """Whether the stream draws an inline image (left to pdfminer's parser)."""
    return b"BI" in data and _INLINE_IMAGE_RE.search(data) is not None


def content_objects(data: bytes) -> Iterator[Any]:
    """The objects of a content stream in order, as pdfminer's content parser gives them.

    Raises:
        ValueError: the stream is malformed in a way this reader does not follow (the caller
            falls back to pdfminer's parser).
    """
    from pdfminer.psparser import KWD, LIT

    stack: list[tuple[str, list[Any]]] = []  # open arrays and dictionaries
    pos, end = 0, len(data)
    while pos < end:
        match = _TOKEN_RE.match(data, pos)
        if match is None:
            if _TRAILING_RE.match(data, pos):
                break  # spaces or a comment after the last token
            raise ValueError(f"unexpected byte at {pos}")
        kind = match.lastgroup
        token = match.group(kind)
        pos = match.end()
        if kind == "string":
            value, pos = _literal_string(data, pos)
        elif kind == "number":
            value = float(token) if b"." in token else int(token)
        elif kind == "name":
            value = LIT(_name(token[1:]))
        elif kind == "hex":
            digits = re.sub(rb"\s", b"", token[1:-1])
            value = bytes.fromhex((digits + b"0" * (len(digits) % 2)).decode())
        elif kind in ("open", "dictopen"):
            stack.append(("d" if kind == "dictopen" else "a", []))
            continue
        elif kind in ("close", "dictclose"):
            if not stack:
                continue  # a stray closer: pdfminer drops it too
            opened, items = stack.pop()
            value = _dictionary(items) if opened == "d" else items
        else:
            value = True if token == b"true" else False if token == b"false" else KWD(token)
        if stack:
            stack[-1][1].append(value)
        else:
            yield value


def _name(raw: bytes) -> str | bytes:
    raw = _NAME_ESCAPE_RE.sub(lambda m: bytes((int(m.group(1), 16),)), raw)
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return raw


def _dictionary(items: list[Any]) -> dict[str, Any]:
    from pdfminer.psparser import literal_name

    if len(items) % 2:
        raise ValueError("a dictionary with an odd number of items")
    return {literal_name(k): v for k, v in zip(items[::2], items[1::2], strict=True) if v is not None}


def _literal_string(data: bytes, pos: int) -> tuple[bytes, int]:
    """A ``( ... )`` string from after its opening parenthesis: (its bytes, the position after it)."""
    out = bytearray()
    depth = 1
    end = len(data)
    while pos < end:
        ch = data[pos]
        pos += 1
        if ch == 0x5C:  # backslash
            if pos >= end:
                break
            nxt = data[pos]
            pos += 1
            if nxt in _ESCAPES:
                out += _ESCAPES[nxt]
            elif 0x30 <= nxt <= 0x37:  # up to three octal digits
                digits = bytes((nxt,))
                while len(digits) < 3 and pos < end and 0x30 <= data[pos] <= 0x37:
                    digits += data[pos:pos + 1]
                    pos += 1
                out.append(int(digits, 8) & 0xFF)
            elif nxt == 0x0D:  # a line continued: backslash, CR, optional LF
                if pos < end and data[pos] == 0x0A:
                    pos += 1
            elif nxt != 0x0A:
                out.append(nxt)
            continue
        if ch == 0x28:
            depth += 1
        elif ch == 0x29:
            depth -= 1
            if depth == 0:
                return bytes(out), pos
        out.append(ch)
    return bytes(out), pos


def page_interpreter(manager: Any, device: Any) -> Any:
    """pdfminer's page interpreter for ``device``, reading content streams with :func:`content_objects`.

    The class is made here so that pdfminer is imported only when a PDF is read.
    """
    from pdfminer.pdfinterp import PDFPageInterpreter
    from pdfminer.pdftypes import stream_value
    from pdfminer.psparser import PSKeyword, keyword_name

    operators: dict[str, tuple[str, int] | None] = {}  # operator -> (method name, argument count)

    class FastInterpreter(PDFPageInterpreter):
        def execute(self, streams: Any) -> None:
            objects = self._objects(streams)
            if objects is None:
                super().execute(streams)  # inline images, old pdfminer, or a stream we do not follow
                return
            for obj in objects:
                if not isinstance(obj, PSKeyword):
                    self.push(obj)
                    continue
                name = keyword_name(obj)
                if name not in operators:
                    method = "do_" + name.replace("*", "_a").replace('"', "_w").replace("'", "_q")
                    func = getattr(self, method, None)
                    operators[name] = (method, func.__code__.co_argcount - 1) if func is not None else None
                known = operators[name]
                if known is None:
                    continue  # an operator pdfminer does not know: it skips it too (outside strict mode)
                method, count = known
                if count:
                    args = self.pop(count)
                    if len(args) == count:
                        getattr(self, method)(*args)
                else:
                    getattr(self, method)()

        def _objects(self, streams: Any) -> list[Any] | None:
            if not hasattr(self, "stream_ids"):
                return None
            valid = [stream_value(obj) for obj in streams]
            if any(s.objid is None or s.objid in self.parent_stream_ids for s in valid):
                return None
            data = b"\n".join(s.get_data() or b"" for s in valid)
            if has_inline_image(data):
                return None
            try:
                objects = list(content_objects(data))
            except ValueError:
                return None
            self.stream_ids.clear()
            self.stream_ids.update(s.objid for s in valid)
            return objects

    return FastInterpreter(manager, device)
