"""Build (once) the contract venv: the published sglang-omni 0.1.9 wheel with CPU torch.

Usage (the contract tests call `ensure_contract_venv()` themselves; this is for a manual run):

    .venv/bin/python tests/contract/setup_env.py            # build if needed, print the path
    .venv/bin/python tests/contract/setup_env.py --rebuild  # throw the cached venv away first

What it installs, into `<cache>/omni-web/contract-venv-<key>` (`<cache>` is `$XDG_CACHE_HOME` or
`~/.cache`; `OMNI_WEB_CONTRACT_VENV` names another folder):
1. `torch==2.13.0`: the CPU build (pip takes it from the machine's wheel folder; the CUDA build of
   the wheel's own pin, torch 2.14.1, would be several GB and nothing here uses a GPU).
2. `requirements.txt` beside this file: the light packages the HTTP layer imports.
3. `sglang-omni==0.1.9` from PyPI with `--no-deps` (its own pins are a CUDA 13 stack).
`<key>` hashes all three plus the Python version, so a rerun with the same inputs skips
installation entirely (a marker file records a finished build); a change rebuilds, and venvs of
other keys are removed to keep one copy on disk. Nothing is stubbed here: the import stubs in
`stubs/` and the harness in `harness/` go on PYTHONPATH only when a contract run starts
(`harness_env`).

Standard library only: it runs under any Python 3.11/3.12.
"""

from __future__ import annotations

import argparse
import fcntl
import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "HARNESS_DIR",
    "STUBS_DIR",
    "ContractVenv",
    "ContractVenvError",
    "ensure_contract_venv",
    "harness_env",
    "venv_dir",
    "venv_key",
]

CONTRACT_DIR = Path(__file__).resolve().parent
REQUIREMENTS = CONTRACT_DIR / "requirements.txt"
STUBS_DIR = CONTRACT_DIR / "stubs"
HARNESS_DIR = CONTRACT_DIR / "harness"
WHEEL_SPEC = "sglang-omni==0.1.9"
TORCH_SPEC = "torch==2.13.0"
MARKER_NAME = "omni-web-contract.json"
# Modules whose import proves the venv can run both harnesses (with the stubs on the path).
SMOKE_IMPORTS = (
    "import sglang_omni.cli.serve, sglang_omni.serve.openai_api, sglang_omni_router.python.serve, torch"
)
PIP = ["-m", "pip", "install", "--disable-pip-version-check", "--no-input", "-q"]


class ContractVenvError(RuntimeError):
    """The contract venv could not be built; the message names the step and the log file."""


@dataclass(frozen=True, slots=True)
class ContractVenv:
    """A ready contract venv: its folder, its interpreter, and whether this call built it."""

    path: Path
    python: Path
    built: bool
    build_s: float

    @property
    def size_bytes(self) -> int:
        """Disk use of the venv folder."""
        return sum(p.stat().st_size for p in self.path.rglob("*") if p.is_file() and not p.is_symlink())


def venv_key(python: str | None = None) -> str:
    """Hash of everything that decides the venv's contents."""
    interpreter = python or sys.executable
    version = subprocess.run(  # noqa: S603 - argv list, our own interpreter
        [interpreter, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    digest = hashlib.sha256()
    for part in (REQUIREMENTS.read_text(encoding="utf-8"), WHEEL_SPEC, TORCH_SPEC, version):
        digest.update(part.encode("utf-8") + b"\0")
    return digest.hexdigest()[:12]


def _cache_root() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "omni-web"


def venv_dir(key: str) -> Path:
    """Where the venv for `key` lives (`OMNI_WEB_CONTRACT_VENV` overrides)."""
    override = os.environ.get("OMNI_WEB_CONTRACT_VENV")
    return Path(override) if override else _cache_root() / f"contract-venv-{key}"


def harness_env(base: dict[str, str] | None = None) -> dict[str, str]:
    """Environment for the contract venv's Python: stubs and harness first on its path."""
    env = dict(os.environ if base is None else base)
    for name in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV"):
        env.pop(name, None)
    env["PYTHONPATH"] = os.pathsep.join([str(STUBS_DIR), str(HARNESS_DIR)])
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


def _run_step(argv: list[str], log_path: Path, step: str) -> None:
    with log_path.open("a", encoding="utf-8") as log:
        log.write(f"\n$ {' '.join(argv)}\n")
        log.flush()
        result = subprocess.run(argv, stdout=log, stderr=subprocess.STDOUT, check=False)  # noqa: S603
    if result.returncode != 0:
        tail = "".join(log_path.read_text(encoding="utf-8", errors="replace").splitlines(keepends=True)[-25:])
        raise ContractVenvError(
            f"Building the contract venv failed at step '{step}' (exit {result.returncode}). "
            f"Full log: {log_path}. Last lines:\n{tail}\n"
            "It needs PyPI (pip) to be reachable. Set OMNI_WEB_SKIP_CONTRACT=1 to skip the contract tier."
        )


def _build(path: Path, python: str, log_path: Path) -> None:
    shutil.rmtree(path, ignore_errors=True)
    log_path.write_text(f"contract venv build {time.strftime('%Y-%m-%d %H:%M:%S')}\n", encoding="utf-8")
    _run_step([python, "-m", "venv", str(path)], log_path, "create venv")
    venv_python = str(path / "bin" / "python")
    _run_step([venv_python, *PIP, TORCH_SPEC], log_path, f"install {TORCH_SPEC} (CPU)")
    _run_step([venv_python, *PIP, "-r", str(REQUIREMENTS)], log_path, "install requirements.txt")
    _run_step([venv_python, *PIP, "--no-deps", WHEEL_SPEC], log_path, f"install {WHEEL_SPEC} --no-deps")
    smoke = [venv_python, "-c", SMOKE_IMPORTS]
    with log_path.open("a", encoding="utf-8") as log:
        result = subprocess.run(smoke, env=harness_env(), stdout=log, stderr=subprocess.STDOUT, check=False)  # noqa: S603
    if result.returncode != 0:
        raise ContractVenvError(
            f"The contract venv was built but sglang-omni does not import; see {log_path}."
        )


def _prune_siblings(keep: Path) -> None:
    """Remove contract venvs of other keys (1.3 GB each) next to `keep`."""
    for sibling in keep.parent.glob("contract-venv-*"):
        if sibling != keep and sibling.is_dir() and not sibling.name.endswith(".lock"):
            shutil.rmtree(sibling, ignore_errors=True)


def ensure_contract_venv(*, rebuild: bool = False, python: str | None = None) -> ContractVenv:
    """Return the contract venv, building it first if no finished build for this key exists.

    Args:
        rebuild: throw away a finished build and install again.
        python: the interpreter the venv is made from (default `OMNI_WEB_CONTRACT_PYTHON`, else
            this one); it must be Python 3.11 or 3.12, the wheel's Requires-Python.

    Raises:
        ContractVenvError: a step failed (its log file is named in the message).
    """
    interpreter = python or os.environ.get("OMNI_WEB_CONTRACT_PYTHON") or sys.executable
    key = venv_key(interpreter)
    path = venv_dir(key)
    path.parent.mkdir(parents=True, exist_ok=True)
    marker = path / MARKER_NAME
    with open(f"{path}.lock", "w", encoding="utf-8") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if (
            not rebuild
            and marker.is_file()
            and json.loads(marker.read_text(encoding="utf-8")).get("key") == key
        ):
            return ContractVenv(path=path, python=path / "bin" / "python", built=False, build_s=0.0)
        started = time.monotonic()
        _build(path, interpreter, Path(f"{path}.log"))
        build_s = time.monotonic() - started
        marker.write_text(json.dumps({"key": key, "build_s": round(build_s, 1)}), encoding="utf-8")
    if not os.environ.get("OMNI_WEB_CONTRACT_VENV"):
        _prune_siblings(path)
    return ContractVenv(path=path, python=path / "bin" / "python", built=True, build_s=build_s)


def main(argv: list[str] | None = None) -> int:
    """Command line: build if needed and print where the venv is."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rebuild", action="store_true", help="throw the cached venv away and build again")
    parser.add_argument("--size", action="store_true", help="also print the venv's disk use")
    args = parser.parse_args(argv)
    try:
        venv = ensure_contract_venv(rebuild=args.rebuild)
    except ContractVenvError as exc:
        print(exc, file=sys.stderr)
        return 1
    state = f"built in {venv.build_s:.1f} s" if venv.built else "cached"
    print(f"{venv.path} ({state})")
    if args.size:
        print(f"{venv.size_bytes / 1e6:.0f} MB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
