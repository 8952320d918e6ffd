"""Cover art: any image ffmpeg reads becomes a baseline JPEG of at most ``max_px`` per side."""

from __future__ import annotations

import logging
from pathlib import Path

from omni_web.assemble.ffmpeg import path_arg, run_ffmpeg
from omni_web.assemble.workspace import publish, work_dir
from omni_web.errors import DiskFullError, FfmpegError

__all__ = ["COVER_MAX_PX", "prepare_cover", "prepare_cover_or_none"]

# Players show covers at a few hundred pixels; 1000 px keeps them sharp on retina screens while a
# 4000 px EPUB cover (several MB) would bloat every MP3 file that embeds it.
COVER_MAX_PX = 1000

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
    # Even dimensions: 4:2:0 chroma needs them for some decoders.
    scale = (
        f"scale='min({max_px},iw)':'min({max_px},ih)':force_original_aspect_ratio=decrease"
        ":force_divisible_by=2,format=yuvj420p"
    )
    with work_dir(out_path) as scratch:
        tmp = scratch / "cover.jpg"
        run_ffmpeg(
            [
                "-i",
                path_arg(source),
                "-map",
                "0:v:0",
                "-frames:v",
                "1",
                "-vf",
                scale,
                "-c:v",
                "mjpeg",
                "-q:v",
                "3",
                "-map_metadata",
                "-1",
                "-f",
                "image2",
                path_arg(tmp),
            ],  # fmt: skip
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
