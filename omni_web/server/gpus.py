"""Which GPUs a start uses: ``all`` (the default), explicit ids such as ``0,2``, or ``none`` (a
machine without a GPU that serves through its farm's boxes).

``all`` means every GPU NVML lists that has room for the model, where "room" is the catalog's
``min_vram_gb`` against the card's total memory (the same rule as the fit hints). Explicit ids are
honoured even when NVML cannot see the cards (some containers hide NVML but pass the devices),
with a warning. One selected GPU means one plain server, as before; two or more mean a group
behind the router (:mod:`omni_web.server.group`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from omni_web.catalog import CatalogEntry
from omni_web.errors import SettingsError
from omni_web.gpu import GpuProbe

__all__ = ["GpuSelection", "parse_gpu_spec", "select_gpus"]

_FIT_TOLERANCE_GB = 0.5  # a "16 GB" card reports a little less (as in omni_web.gpu)
_IDS_RE = re.compile(r"^\s*\d+(\s*,\s*\d+)*\s*$")


def parse_gpu_spec(spec: str | None) -> tuple[int, ...] | None:
    """``""``/``"all"`` → None (let NVML decide); ``"0,2"`` → ``(0, 2)``; ``"none"`` → ``()``;
    anything else is refused."""
    text = (spec or "").strip().lower()
    if text in ("", "all"):
        return None
    if text == "none":
        return ()
    if not _IDS_RE.match(text):
        raise SettingsError(
            f"GPU selection '{spec}' is not understood: write all, GPU ids like 0,2, or none (serve only "
            "through the farm's boxes)."
        )
    ids = tuple(dict.fromkeys(int(part) for part in text.split(",")))
    return ids


@dataclass(frozen=True, slots=True)
class GpuSelection:
    """The GPUs one start uses (CUDA ids), and what the user should know about the choice."""

    ids: tuple[int, ...]
    warnings: tuple[str, ...] = ()
    explicit: bool = False

    @property
    def is_group(self) -> bool:
        """True when more than one GPU is used (then the router fronts one worker per GPU)."""
        return len(self.ids) > 1


def _has_room(entry: CatalogEntry, total_gib: float) -> bool:
    return not entry.min_vram_gb or total_gib + _FIT_TOLERANCE_GB >= entry.min_vram_gb


def select_gpus(spec: str | None, entry: CatalogEntry, probe: GpuProbe) -> GpuSelection:
    """The GPUs to start ``entry`` on.

    ``all``: every NVML GPU with room for the model (none with room: GPU 0 alone, as a single
    server always did, with a warning). Explicit ids: used as given; ids NVML does not list, or
    without room, get a warning but are still used.

    Raises:
        SettingsError: the spec is not ``all`` or a list of ids.
    """
    wanted = parse_gpu_spec(spec)
    known = {gpu.index: gpu for gpu in probe.gpus}
    if wanted is None:
        fitting = tuple(gpu.index for gpu in probe.gpus if _has_room(entry, gpu.total_memory_gib))
        if fitting:
            skipped = [
                f"GPU {gpu.index} ({gpu.total_memory_str}) has no room for {entry.label} (about "
                f"{entry.min_vram_gb:g} GB): not used."
                for gpu in probe.gpus
                if gpu.index not in fitting
            ]
            return GpuSelection(ids=fitting, warnings=tuple(skipped))
        if probe.gpus:
            return GpuSelection(
                ids=(probe.gpus[0].index,),
                warnings=(
                    f"No GPU has the {entry.min_vram_gb:g} GB {entry.label} needs; trying GPU 0 alone.",
                ),
            )
        return GpuSelection(ids=(0,), warnings=(probe.warning,) if probe.warning else ())
    if not wanted:
        return GpuSelection(ids=(), explicit=True)
    warnings = []
    if not probe.gpus:
        warnings.append(
            f"NVML lists no GPU, so GPU ids {','.join(map(str, wanted))} are used as given "
            "(CUDA_VISIBLE_DEVICES); a wrong id fails that worker's boot."
        )
    for index in wanted:
        gpu = known.get(index)
        if probe.gpus and gpu is None:
            warnings.append(
                f"NVML does not list GPU {index}; using it as given (CUDA_VISIBLE_DEVICES={index})."
            )
        elif gpu is not None and not _has_room(entry, gpu.total_memory_gib):
            warnings.append(
                f"GPU {index} has {gpu.total_memory_str}; {entry.label} needs about {entry.min_vram_gb:g} GB."
            )
    return GpuSelection(ids=wanted, warnings=tuple(warnings), explicit=True)
