"""Cover art: any image ffmpeg reads becomes a baseline JPEG of at most ``max_px`` per side.

Transparent pixels are laid on white first (both for the embedded cover and for the page's
preview): JPEG has no alpha, and dropping it shows whatever colour the transparent pixels carry,
which for the usual "black text on transparent" PNG is a solid black box.
"""

from __future__ import annotations

import logging
from pathlib import Path

from omni_web.assemble.ffmpeg import path_arg, run_ffmpeg
from omni_web.assemble.workspace import publish, work_dir
from omni_web.errors import DiskFullError, FfmpegError

__all__ = [
    "COVER_BACKGROUND",
    "COVER_MAX_PX",
    "flattened_cover_image",
    "prepare_cover",
    "prepare_cover_or_none",
]

# Players show covers at a few hundred pixels; 1000 px keeps them sharp on retina screens while a
# 4000 px EPUB cover (several MB) would bloat every MP3 file that embeds it.
COVER_MAX_PX = 1000
# What shows through transparent pixels: an ebook reader's page is white.
COVER_BACKGROUND = "white"

log = logging.getLogger(__name__)


def prepare_cover(source: Path, out_path: Path, *, max_px: int = COVER_MAX_PX) -> Path:
    """Write ``source`` as a JPEG at ``out_path``, scaled down (never up) to fit ``max_px``.

    Re-encoding always (also for small JPEGs) gives one codec every player and muxer accepts
    (PNG with alpha, WebP, GIF and SVG covers occur in EPUBs).

    Raises:
        FfmpegError: the image is missing or unreadable (the message names it).
        DiskFullError, OutputNotWritable: the folder cannot take the file.
    """
    source, out_path = Path(source), Path(out_path)
    if not source.is_file():
        raise FfmpegError(f"Cannot use the cover {source}: the file does not exist.")
    # A white canvas the size of the image under it (scale2ref), so alpha becomes white; then
    # even dimensions: 4:2:0 chroma needs them for some decoders.
    graph = (
        f"color=c={COVER_BACKGROUND}:s=16x16[bg];[bg][0:v:0]scale2ref[bg][img];"
        "[bg][img]overlay=shortest=1,"
        f"scale='min({max_px},iw)':'min({max_px},ih)':force_original_aspect_ratio=decrease"
        ":force_divisible_by=2,format=yuvj420p[cover]"
    )
    with work_dir(out_path) as scratch:
        tmp = scratch / "cover.jpg"
        run_ffmpeg(
            [
                "-i",
                path_arg(source),
                "-filter_complex",
                graph,
                "-map",
                "[cover]",
                "-frames:v",
                "1",
                "-c:v",
                "mjpeg",
                "-q:v",
                "3",
                "-map_metadata",
                "-1",
                "-f",
                "image2",
                path_arg(tmp),
            ],
            action=f"Preparing the cover image {source}",
            output_dir=out_path.parent,
        )
        return publish(tmp, out_path)


def prepare_cover_or_none(cover: Path | None, target: Path, *, purpose: str) -> Path | None:
    """:func:`prepare_cover`, except that a broken cover only costs the cover.

    A finished book must not be lost to a bad image: the error is logged (naming ``purpose``) and
    None returned. A full disk still raises.
    """
    if cover is None:
        return None
    try:
        return prepare_cover(Path(cover), target)
    except DiskFullError:
        raise
    except FfmpegError as exc:
        log.warning("%s without a cover: %s", purpose, exc)
        return None


def flattened_cover_image(data: bytes):
    """The cover as an RGB Pillow image with transparency laid on white, or None if unreadable.

    For showing the cover on a page (the Generate tab); SVG and broken images give None.
    """
    import io

    from PIL import Image, UnidentifiedImageError

    try:
        image = Image.open(io.BytesIO(data))
        image.load()
    except (UnidentifiedImageError, OSError, ValueError):
        return None
    if image.mode in ("RGBA", "LA", "PA") or (image.mode == "P" and "transparency" in image.info):
        rgba = image.convert("RGBA")
        canvas = Image.new("RGBA", rgba.size, COVER_BACKGROUND)
        return Image.alpha_composite(canvas, rgba).convert("RGB")
    return image.convert("RGB")
