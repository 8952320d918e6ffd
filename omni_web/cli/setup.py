"""``python -m omni_web setup [--check]``: build (or repair) the sglang-omni backend venv.

``--check`` prints the whole picture and changes nothing: the interpreter the venv is (or would
be) built from and why, the venv's state and sglang-omni version, the GPUs NVML reports (or a
loud warning), per-model fit, system tools with install lines, disk space and the cached models.
Without it, setup resolves the interpreter (provisioning one with uv if needed), creates the venv
and pip-installs the pinned sglang-omni with a live log; Ctrl-C stops pip and a re-run repairs.
pip honours its usual environment (``PIP_INDEX_URL``, ``PIP_FIND_LINKS``, ``PIP_NO_INDEX``).
"""

from __future__ import annotations

import argparse

from omni_web.backend.venv import install_backend
from omni_web.paths import data_root_from_env
from omni_web.setup_report import collect_setup_report, render_setup_report

__all__ = ["register"]


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``setup``."""
    parser = subparsers.add_parser(
        "setup",
        help="create or repair the sglang-omni backend venv (--check: report only)",
        description=(
            "Create (or repair) the sglang-omni backend venv under envs/sglomni: pick a Python in "
            "sglang-omni's range (the app's own, python3.12/3.11 on PATH, or one uv provisions), then "
            "pip-install the pinned sglang-omni (~10 GB). A re-run repairs a half-finished install."
        ),
    )
    parser.add_argument(
        "--check", action="store_true",
        help="print interpreter, venv, version, GPUs, tools, disk and models; change nothing",
    )
    parser.set_defaults(handler=_run)


def _run(args: argparse.Namespace) -> int:
    paths = data_root_from_env()
    if args.check:
        print(render_setup_report(collect_setup_report(paths)))
        return 0
    status = install_backend(paths, log=lambda line: print(line, flush=True))
    print(f"\nThe backend is ready: {status.summary}\n")
    print(render_setup_report(collect_setup_report(paths)))
    return 0
