"""Free disk space, and the warnings the backend and model installs print before they start.

The numbers are estimates: the backend venv alone is about 10 GB (torch, sglang,
flash-attn, flashinfer, CUDA-13 wheels), each model 1-18 GB of weights (``approx_download_gb`` in
the catalog). A check warns with both numbers; only a download whose exact size is known (from
the hub's file listing) is refused outright when it cannot fit.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "BACKEND_VENV_BYTES",
    "DiskCheck",
    "DiskSpace",
    "check_disk_space",
    "disk_space",
    "format_bytes",
]

# The sglang-omni 0.1.9 stack with its CUDA wheels (torch, flash-attn, flashinfer) takes about 10 GB.
BACKEND_VENV_BYTES = 10 * 1000**3

# Below this much left over after an install, the check warns even when the install fits.
_HEADROOM_BYTES = 2 * 1000**3


def format_bytes(num_bytes: int | float) -> str:
    """Render a byte count with decimal units, as disk vendors and the HF cache do ("9.8 GB")."""
    value = float(num_bytes)
    for unit in ("B", "kB", "MB", "GB", "TB"):
        if abs(value) < 1000 or unit == "TB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1000
    return f"{value:.1f} TB"  # unreachable; keeps type checkers calm


@dataclass(frozen=True, slots=True)
class DiskSpace:
    """Free and total space of the filesystem holding ``path``."""

    path: Path
    total_bytes: int
    free_bytes: int

    @property
    def free_str(self) -> str:
        """Free space, human readable."""
        return format_bytes(self.free_bytes)

    @property
    def total_str(self) -> str:
        """Filesystem size, human readable."""
        return format_bytes(self.total_bytes)


@dataclass(frozen=True, slots=True)
class DiskCheck:
    """Whether ``needed_bytes`` fit under ``path``; ``message`` is a full sentence with numbers."""

    path: Path
    free_bytes: int
    needed_bytes: int
    purpose: str

    @property
    def fits(self) -> bool:
        """True when the space is there at all."""
        return self.free_bytes >= self.needed_bytes

    @property
    def ok(self) -> bool:
        """True when it fits with some headroom left (no warning needed)."""
        return self.free_bytes - self.needed_bytes >= _HEADROOM_BYTES

    @property
    def free_str(self) -> str:
        """Free space, human readable."""
        return format_bytes(self.free_bytes)

    @property
    def needed_str(self) -> str:
        """Needed space, human readable."""
        return format_bytes(self.needed_bytes)

    @property
    def message(self) -> str:
        """One line for logs and the UI: the numbers, and what to do when they do not fit."""
        head = f"{self.purpose} needs about {self.needed_str}; {self.free_str} is free at {self.path}."
        if self.ok:
            return head
        if self.fits:
            return f"{head} That leaves less than {format_bytes(_HEADROOM_BYTES)}; free some space first."
        short = format_bytes(self.needed_bytes - self.free_bytes)
        return f"{head} It does not fit: free at least {short} more, or move the data root (OMNI_WEB_HOME)."


def _existing_ancestor(path: Path) -> Path:
    """The nearest folder that exists, so a check works before the target is created."""
    current = path.expanduser().absolute()
    while not current.exists() and current != current.parent:
        current = current.parent
    return current


def disk_space(path: Path) -> DiskSpace:
    """Space on the filesystem that holds (or will hold) ``path``."""
    target = _existing_ancestor(Path(path))
    usage = shutil.disk_usage(target)
    return DiskSpace(path=Path(path), total_bytes=usage.total, free_bytes=usage.free)


def check_disk_space(path: Path, needed_bytes: int, *, purpose: str) -> DiskCheck:
    """Compare the free space at ``path`` with ``needed_bytes``; never raises for lack of space."""
    space = disk_space(path)
    return DiskCheck(path=Path(path), free_bytes=space.free_bytes, needed_bytes=needed_bytes, purpose=purpose)
