"""The one atomic write and the one file hash every layer uses."""

from __future__ import annotations

import errno
import hashlib
import os
import re
import stat
import threading
from pathlib import Path

import pytest

from omni_web.errors import DiskFullError, VoiceError
from omni_web.files import atomic_path, file_sha256, is_disk_full, write_atomic, write_error


def test_write_atomic_replaces_the_file_and_leaves_no_staging_file(tmp_path: Path) -> None:
    target = tmp_path / "settings.yaml"
    target.write_text("old\n")
    write_atomic(target, "new\n")
    assert target.read_text() == "new\n"
    assert [p.name for p in tmp_path.iterdir()] == ["settings.yaml"]


def test_a_failed_write_keeps_the_old_file_and_removes_the_staging_file(tmp_path: Path) -> None:
    target = tmp_path / "chunk.wav"
    target.write_bytes(b"old")
    with pytest.raises(RuntimeError), atomic_path(target) as staged:
        staged.write_bytes(b"half")
        raise RuntimeError("killed mid-write")
    assert target.read_bytes() == b"old"
    assert [p.name for p in tmp_path.iterdir()] == ["chunk.wav"]


def test_secret_files_are_owner_only_from_the_first_byte(tmp_path: Path) -> None:
    target = tmp_path / "login.json"
    seen: list[int] = []
    original = Path.write_bytes

    def spy(self: Path, data: bytes) -> int:
        seen.append(stat.S_IMODE(self.stat().st_mode))  # the mode before any content lands
        return original(self, data)

    old_umask = os.umask(0)
    try:
        Path.write_bytes = spy  # type: ignore[method-assign]
        write_atomic(target, '{"password": "x"}', mode=0o600)
    finally:
        Path.write_bytes = original  # type: ignore[method-assign]
        os.umask(old_umask)
    assert seen == [0o600]
    assert stat.S_IMODE(target.stat().st_mode) == 0o600
    assert target.read_text() == '{"password": "x"}'


def test_concurrent_writers_never_share_a_staging_file(tmp_path: Path) -> None:
    target = tmp_path / "record.json"
    payloads = [f"writer {n} ".encode() * 5000 for n in range(8)]
    threads = [threading.Thread(target=write_atomic, args=(target, data)) for data in payloads]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert target.read_bytes() in payloads  # one whole payload, never a mix
    assert [p.name for p in tmp_path.iterdir()] == ["record.json"]


def test_a_staged_folder_lands_whole_or_not_at_all(tmp_path: Path) -> None:
    target = tmp_path / "Author" / "Title"
    target.parent.mkdir()
    with pytest.raises(RuntimeError), atomic_path(target) as staging:
        staging.mkdir()
        (staging / "book.m4b").write_bytes(b"half")
        raise RuntimeError("the copy failed")
    assert list(target.parent.iterdir()) == []  # no folder, no staging folder left
    with atomic_path(target) as staging:
        staging.mkdir()
        (staging / "book.m4b").write_bytes(b"whole")
    assert [p.name for p in target.parent.iterdir()] == ["Title"] and (
        target / "book.m4b"
    ).read_bytes() == b"whole"


def test_file_sha256_matches_hashlib_across_block_boundaries(tmp_path: Path) -> None:
    data = os.urandom(3 * 1024 + 17)
    path = tmp_path / "book.epub"
    path.write_bytes(data)
    assert file_sha256(path, block_bytes=1024) == hashlib.sha256(data).hexdigest()


def test_the_one_file_sha256_is_not_re_exported_by_other_layers() -> None:
    import omni_web.render
    import omni_web.render.keys

    assert "file_sha256" not in omni_web.render.__all__ and "file_sha256" not in omni_web.render.keys.__all__


@pytest.mark.parametrize("code", [errno.ENOSPC, errno.EDQUOT])
def test_a_full_disk_or_quota_becomes_disk_full_with_the_callers_words(code: int) -> None:
    exc = OSError(code, os.strerror(code))
    assert is_disk_full(exc)
    error = write_error(exc, full="The disk is full: free some space.", other=VoiceError)
    assert isinstance(error, DiskFullError) and str(error) == "The disk is full: free some space."


def test_any_other_write_error_gets_the_callers_error_with_the_system_reason() -> None:
    exc = PermissionError(errno.EACCES, "Permission denied")
    assert not is_disk_full(exc) and not is_disk_full(ValueError("no errno"))
    error = write_error(exc, full="unused", other=lambda why: VoiceError(f"Could not write the clip: {why}."))
    assert isinstance(error, VoiceError) and str(error) == "Could not write the clip: Permission denied."


def test_no_module_writes_through_a_fixed_staging_name_or_tests_errno_itself() -> None:
    # Two writers sharing "<name>.tmp" overwrite each other's half file; atomic_path names it uniquely.
    # Which errnos mean "disk full" is decided in files.py alone.
    package = Path(__file__).resolve().parent.parent / "omni_web"
    fixed_tmp = re.compile(r"""(with_name\(|/ |\+ )f?["'][^"']*\.(tmp|part|partial)["']\)?""")
    hand_hash = re.compile(r"iter\(lambda: \w+\.read\(")
    for path in package.rglob("*.py"):
        text = path.read_text()
        assert not fixed_tmp.search(text), f"{path} stages a write under a fixed name: use files.atomic_path"
        if path.name != "files.py":
            assert not hand_hash.search(text), f"{path} hashes a file by hand: use files.file_sha256"
        if path.name != "files.py":
            assert "errno.ENOSPC" not in text, (
                f"{path} maps ENOSPC itself: use files.is_disk_full / write_error"
            )
