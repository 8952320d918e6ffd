"""Covers with transparency: an RGBA PNG (black text on transparent) is laid on white, both in the
m4b's embedded picture and in the page's preview; opaque covers keep their colours."""

from __future__ import annotations

import io
import subprocess
from pathlib import Path

import pytest
from PIL import Image, ImageDraw

from omni_web.assemble import AudiobookTags
from omni_web.assemble.cover import flattened_cover_image, prepare_cover
from tests.book_audio import m4b_book, make_tone

pytestmark = pytest.mark.slow  # subprocesses, real ffmpeg


def rgba_cover(path: Path | None = None) -> bytes:
    """400x600, transparent everywhere except a black title bar at the top (y 40..120)."""
    image = Image.new("RGBA", (400, 600), (0, 0, 0, 0))
    ImageDraw.Draw(image).rectangle((40, 40, 360, 120), fill=(0, 0, 0, 255))
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    if path is not None:
        path.write_bytes(buffer.getvalue())
    return buffer.getvalue()


def _is_white(pixel) -> bool:
    return all(channel >= 240 for channel in pixel[:3])


def _is_black(pixel) -> bool:
    return all(channel <= 20 for channel in pixel[:3])


def test_prepared_cover_lays_transparency_on_white(tmp_path: Path) -> None:
    source = tmp_path / "cover.png"
    rgba_cover(source)
    jpeg = Image.open(prepare_cover(source, tmp_path / "cover.jpg"))
    assert jpeg.format == "JPEG" and jpeg.size == (400, 600)
    assert _is_white(jpeg.getpixel((200, 400))) and _is_white(jpeg.getpixel((5, 5)))
    assert _is_black(jpeg.getpixel((200, 80)))  # the text stays black


def test_opaque_cover_keeps_its_colours(tmp_path: Path) -> None:
    source = tmp_path / "red.png"
    Image.new("RGB", (300, 200), (200, 30, 30)).save(source)
    pixel = Image.open(prepare_cover(source, tmp_path / "red.jpg")).getpixel((150, 100))
    assert abs(pixel[0] - 200) < 20 and pixel[1] < 60 and pixel[2] < 60


def test_m4b_embeds_the_flattened_cover(tmp_path: Path) -> None:
    tone = make_tone(tmp_path / "a.wav", rate=24000, channels=1, seconds=0.5)
    source = tmp_path / "cover.png"
    rgba_cover(source)
    m4b = m4b_book([("One", tone)], tmp_path / "Book.m4b", tags=AudiobookTags("Book"), cover=source)
    extracted = tmp_path / "embedded.png"
    subprocess.run(  # noqa: S603 - fixed argv
        ["ffmpeg", "-v", "error", "-y", "-i", str(m4b), "-map", "0:v:0", "-frames:v", "1", str(extracted)],
        check=True,
    )
    embedded = Image.open(extracted).convert("RGB")
    assert _is_white(embedded.getpixel((200, 400)))
    assert _is_black(embedded.getpixel((200, 80)))


def test_preview_image_is_flattened_and_bad_data_gives_none() -> None:
    preview = flattened_cover_image(rgba_cover())
    assert preview is not None and preview.mode == "RGB"
    assert _is_white(preview.getpixel((200, 400))) and _is_black(preview.getpixel((200, 80)))
    assert flattened_cover_image(b"<svg xmlns='http://www.w3.org/2000/svg'/>") is None
    assert flattened_cover_image(b"not an image") is None
