"""System tool checks: who needs what, and the install line per package manager."""

from __future__ import annotations

from omni_web.catalog import CATALOG, get_entry
from omni_web.systools import check_system_tools, detect_package_manager, install_lines


def _which(present: set[str]):
    return lambda name: f"/usr/bin/{name}" if name in present else None


def test_app_tools_are_always_checked_and_models_add_theirs() -> None:
    tools = {t.name: t for t in check_system_tools([get_entry("qwen3_tts_0_6b_base"), get_entry("zonos2")],
                                                     which=_which({"ffmpeg", "ffprobe"}))}
    assert list(tools) == ["ffmpeg", "ffprobe", "sox"]
    assert tools["ffmpeg"].found and tools["ffmpeg"].path == "/usr/bin/ffmpeg"
    assert tools["ffmpeg"].required_by == ("omni-web", "zonos2")
    assert not tools["sox"].found and tools["sox"].required_by == ("qwen3_tts_0_6b_base",)
    assert tools["sox"].install_line("apt") == "sudo apt install sox"
    assert tools["sox"].install_line("pacman") == "sudo pacman -S sox"
    assert tools["sox"].install_line("dnf") == "sudo dnf install sox"


def test_install_lines_use_each_distributions_package_name() -> None:
    lines = dict(install_lines("ffprobe"))
    assert lines == {
        "apt": "sudo apt install ffmpeg",
        "pacman": "sudo pacman -S ffmpeg",
        "dnf": "sudo dnf install ffmpeg-free",
    }


def test_package_manager_detection() -> None:
    assert detect_package_manager(_which({"pacman"})) == "pacman"
    assert detect_package_manager(_which({"apt-get", "dnf"})) == "apt"
    assert detect_package_manager(_which(set())) is None


def test_this_machine_has_the_tools_installed_system_wide() -> None:
    tools = check_system_tools(CATALOG)
    assert {t.name for t in tools} == {"ffmpeg", "ffprobe", "sox"}
    assert all(t.found for t in tools), [t.name for t in tools if not t.found]


def test_calibre_for_kindle_books_is_reported_with_its_install_line() -> None:
    from omni_web.systools import check_book_tools

    (missing,) = check_book_tools(which=_which(set()))
    assert missing.name == "ebook-convert" and not missing.found and "MOBI" in missing.required_by_str
    assert missing.install_line("apt") == "sudo apt install calibre"
    (found,) = check_book_tools(which=_which({"ebook-convert"}))
    assert found.found
