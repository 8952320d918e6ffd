"""Tiny wheels written by hand, for pip steps that run offline (``--no-index --find-links DIR``).

A wheel is a zip with the package, ``*.dist-info/METADATA``, ``WHEEL`` and a ``RECORD`` of
sha256 hashes; pip installs it like any other. ``make_wheel`` can add ``Requires-Dist`` lines (to
prove ``--no-deps`` skips them) and console scripts (the fake ``sgl-omni``).
"""

from __future__ import annotations

import base64
import hashlib
import re
import zipfile
from pathlib import Path

__all__ = ["make_wheel"]


def _record_hash(data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"sha256={digest}"


def make_wheel(
    folder: Path,
    name: str,
    version: str,
    *,
    requires: tuple[str, ...] = (),
    scripts: dict[str, str] | None = None,
    module_source: str | None = None,
) -> Path:
    """Write ``<name>-<version>-py3-none-any.whl`` into ``folder`` and return its path.

    Args:
        name: the distribution name (``sglang-omni``); the import package is its underscored form.
        requires: ``Requires-Dist`` lines.
        scripts: console scripts, name → ``module:function`` inside the package.
        module_source: the package's ``__init__.py`` (default: a ``main`` that prints name and version).
    """
    folder.mkdir(parents=True, exist_ok=True)
    dist = re.sub(r"[-_.]+", "_", name).lower()
    info = f"{dist}-{version}.dist-info"
    files: dict[str, bytes] = {
        f"{dist}/__init__.py": (
            module_source
            or f'__version__ = "{version}"\n\n\ndef main() -> None:\n    print("{name} {version}")\n'
        ).encode(),
        f"{info}/METADATA": (
            f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n"
            + "".join(f"Requires-Dist: {req}\n" for req in requires)
        ).encode(),
        f"{info}/WHEEL": b"Wheel-Version: 1.0\nGenerator: omni-web-tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
    }
    if scripts:
        lines = "".join(f"{script} = {dist}:{target}\n" for script, target in scripts.items())
        files[f"{info}/entry_points.txt"] = f"[console_scripts]\n{lines}".encode()
    record = "".join(f"{path},{_record_hash(data)},{len(data)}\n" for path, data in files.items())
    record += f"{info}/RECORD,,\n"
    files[f"{info}/RECORD"] = record.encode()
    target = folder / f"{dist}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(target, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for path, data in files.items():
            archive.writestr(path, data)
    return target
