"""Run one conversion on whatever serves it: the :class:`~omni_web.server.serving.Serving` handle.

The server layer decides everything about the server (one managed process, a group behind the
router, a foreign server; restarts, waits, capacity); this module only adds what the conversion
needs around it: reference clips fitted for a router (inline, under its 1 MiB body limit) and one
call of :func:`~omni_web.pipeline.convert.run_conversion` whatever the shape.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from omni_web.book import Book
from omni_web.catalog import CatalogEntry
from omni_web.client import VoiceChoice, VoiceKind
from omni_web.gpu import probe_gpus
from omni_web.paths import DataPaths
from omni_web.pipeline.convert import ConvertResult, ProgressCallback, run_conversion
from omni_web.pipeline.request import ConvertRequest
from omni_web.server import ServerManager
from omni_web.server.serving import Serving
from omni_web.settings import Settings
from omni_web.voices import fit_reference
from omni_web.voices.reference import reference_cache_dir

__all__ = [
    "GROUP_REFERENCE_LIMIT_BYTES",
    "ROUTER_METADATA_LIMIT_BYTES",
    "convert_served",
    "first_gpu_compute_capability",
    "fit_reference_for_router",
    "serving_for",
]

# The router parses speech bodies up to 1 MiB for routing; bigger ones go to the voice owner.
ROUTER_METADATA_LIMIT_BYTES = 1 << 20
# A clip of this many bytes is at most 4/3 as much base64; 16 KiB is left for the text and fields.
GROUP_REFERENCE_LIMIT_BYTES = (ROUTER_METADATA_LIMIT_BYTES - 16 * 1024) * 3 // 4


def first_gpu_compute_capability() -> tuple[int, int] | None:
    """Compute capability of GPU 0, or None without NVML (then the default config is used)."""
    return probe_gpus().compute_capability


def serving_for(
    manager: ServerManager,
    entry: CatalogEntry,
    *,
    api_url: str | None = None,
    on_log: Callable[[str], None] | None = None,
) -> Serving:
    """The handle a job renders on: ``api_url`` (a foreign server), else what the manager serves.

    Raises:
        ForeignServer, ServerNotRunning: the URL or a foreign server does not host the model.
        PortTaken, ServerStartError, BootTimeout, BackendError: the managed start failed.
    """
    return manager.ensure_serving(entry, api_url=api_url, on_log=on_log)


def fit_reference_for_router(voice: VoiceChoice, *, cache_dir: Path) -> VoiceChoice:
    """The voice with its clip re-encoded (if needed) so an inline request stays under 1 MiB."""
    if voice.kind is not VoiceKind.CLONE or voice.reference is None:
        return voice
    fitted = fit_reference(voice.reference, cache_dir=cache_dir, limit_bytes=GROUP_REFERENCE_LIMIT_BYTES)
    return replace(voice, reference=fitted)


def convert_served(
    request: ConvertRequest,
    serving: Serving,
    *,
    paths: DataPaths,
    settings: Settings,
    progress: ProgressCallback | None = None,
    cancelled: Callable[[], bool] = lambda: False,
    book: Book | None = None,
) -> ConvertResult:
    """Run one conversion on ``serving`` (restarts, waits and capacity are the handle's)."""
    if serving.inline_references:
        cache_dir = reference_cache_dir(paths)

        def fit(voice: VoiceChoice) -> VoiceChoice:
            return fit_reference_for_router(voice, cache_dir=cache_dir)

        # The narrator and every cast voice: each request body must stay under the router's 1 MiB.
        request = replace(request, voice=fit(request.voice),
                          cast=request.cast.map_voices(fit) if request.cast else None)
    with serving.open_client() as client:
        return run_conversion(request, paths=paths, settings=settings, client=client, serving=serving,
                              progress=progress, cancelled=cancelled, book=book)
