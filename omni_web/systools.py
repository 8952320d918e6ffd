"""System programs the app and some models need, and the line that installs a missing one.

``ffmpeg`` and ``ffprobe`` are the app's own prerequisites (assembly, audio probing); models add
theirs through ``CatalogEntry.system_binaries`` (Qwen3-TTS needs the ``sox`` binary, S2-Pro and
ZONOS2 ``ffmpeg`` on the server's PATH). A missing tool never blocks a download: the report
shows the install line and the model installs anyway.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from omni_web.catalog import CatalogEntry
from omni_web.errors import FfmpegError

__all__ = [
    "APP_TOOLS",
    "BOOK_TOOLS",
    "INSTALL_HINT",
    "PACKAGE_MANAGERS",
    "ToolStatus",
    "check_book_tools",
    "check_system_tools",
    "detect_package_manager",
    "find_tool",
    "install_lines",
]

APP_TOOLS = ("ffmpeg", "ffprobe")
# Optional programs some book formats need (omni_web/book/mobi.py), and what they are for.
BOOK_TOOLS = {"ebook-convert": "MOBI/AZW3/AZW books (optional)"}
INSTALL_HINT = "Install it: sudo apt install ffmpeg | sudo pacman -S ffmpeg | sudo dnf install ffmpeg"
APP_NAME = "omni-web"

# Install command prefix per package manager, in the order the report lists them.
PACKAGE_MANAGERS: dict[str, str] = {
    "apt": "sudo apt install",
    "pacman": "sudo pacman -S",
    "dnf": "sudo dnf install",
}
# The executable that identifies each package manager on PATH.
_MANAGER_BINARIES = {"apt": "apt-get", "pacman": "pacman", "dnf": "dnf"}
# Binary -> package name where it differs per manager. Fedora ships ffmpeg as ffmpeg-free
# (the full build is in RPM Fusion); ffprobe comes with the ffmpeg package everywhere.
_PACKAGES: dict[str, dict[str, str]] = {
    "ffmpeg": {"apt": "ffmpeg", "pacman": "ffmpeg", "dnf": "ffmpeg-free"},
    "ffprobe": {"apt": "ffmpeg", "pacman": "ffmpeg", "dnf": "ffmpeg-free"},
    "sox": {"apt": "sox", "pacman": "sox", "dnf": "sox"},
    "ebook-convert": {"apt": "calibre", "pacman": "calibre", "dnf": "calibre"},
}


@dataclass(frozen=True, slots=True)
class ToolStatus:
    """One system program: where it is (or None), who needs it, how to install it."""

    name: str
    path: str | None
    required_by: tuple[str, ...]
    install: tuple[tuple[str, str], ...]  # (manager, command) in PACKAGE_MANAGERS order

    @property
    def found(self) -> bool:
        """True when the program is on PATH."""
        return self.path is not None

    @property
    def required_by_str(self) -> str:
        """``omni-web, qwen3_tts_0_6b_base``."""
        return ", ".join(self.required_by)

    def install_line(self, manager: str) -> str:
        """The install command for one manager (``apt``, ``pacman``, ``dnf``)."""
        return dict(self.install)[manager]


def install_lines(binary: str) -> tuple[tuple[str, str], ...]:
    """``(("apt", "sudo apt install sox"), ("pacman", ...), ("dnf", ...))`` for a program."""
    names = _PACKAGES.get(binary, {})
    return tuple(
        (manager, f"{prefix} {names.get(manager, binary)}") for manager, prefix in PACKAGE_MANAGERS.items()
    )


def detect_package_manager(which: Callable[[str], str | None] = shutil.which) -> str | None:
    """The first of apt, pacman, dnf present on this machine, or None."""
    for manager, binary in _MANAGER_BINARIES.items():
        if which(binary):
            return manager
    return None


def check_system_tools(
    entries: Iterable[CatalogEntry], *, which: Callable[[str], str | None] = shutil.which
) -> list[ToolStatus]:
    """The app's tools plus every ``system_binaries`` of ``entries``, each with its status.

    Args:
        entries: catalog entries whose binaries matter (e.g. the models being installed).
        which: the PATH lookup (tests inject one).
    """
    needed: dict[str, list[str]] = {tool: [APP_NAME] for tool in APP_TOOLS}
    for entry in entries:
        for binary in entry.system_binaries:
            users = needed.setdefault(binary, [])
            if entry.key not in users:
                users.append(entry.key)
    return [
        ToolStatus(name=name, path=which(name), required_by=tuple(users), install=install_lines(name))
        for name, users in needed.items()
    ]


def check_book_tools(*, which: Callable[[str], str | None] = shutil.which) -> list[ToolStatus]:
    """The optional programs of :data:`BOOK_TOOLS` (calibre's ``ebook-convert``), each with its status."""
    return [
        ToolStatus(name=name, path=which(name), required_by=(purpose,), install=install_lines(name))
        for name, purpose in BOOK_TOOLS.items()
    ]


def find_tool(name: str) -> str:
    """The absolute path of ``ffmpeg`` or ``ffprobe`` on PATH: the one place the app looks for them.

    Raises:
        FfmpegError: the binary is not installed, with the install command for each distro.
    """
    path = shutil.which(name)
    if path is None:
        raise FfmpegError(f"{name} is not installed. {INSTALL_HINT}")
    return path
