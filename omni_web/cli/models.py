"""``python -m omni_web models list | install KEY... | remove KEY... [--yes]``.

Installed models are read from the Hugging Face cache (``HF_HUB_CACHE`` / ``HF_HOME``), downloads
go to the hub ``HF_ENDPOINT`` names (default huggingface.co). ``install`` runs each model's recipe
(companion packages into the backend venv, then its weights) with a progress bar per model;
Ctrl-C cancels and a re-run fetches only the missing files. ``remove`` shows what it frees, asks
(unless ``--yes``), stops a managed server hosting the model, then deletes its cached revisions.
"""

from __future__ import annotations

import argparse
import sys
import threading
from collections.abc import Callable
from typing import TypeVar

from tqdm.auto import tqdm

from omni_web.backend.disk import format_bytes
from omni_web.catalog import CATALOG, get_entry, keys
from omni_web.errors import SettingsError
from omni_web.models import DownloadProgress, apply_model_diff, cached_models, hub_cache_dir, plan_removal
from omni_web.models.removal import StopServerHosting
from omni_web.paths import DataPaths, data_root_from_env
from omni_web.settings import Settings, load_settings

__all__ = ["register", "server_stopper"]

T = TypeVar("T")


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``models`` and its subcommands."""
    parser = subparsers.add_parser(
        "models",
        help="list, install or remove TTS models (Hugging Face cache)",
        description="List, install or remove the catalog's TTS models in the Hugging Face cache.",
    )
    commands = parser.add_subparsers(dest="models_command", metavar="SUBCOMMAND", required=True)
    listing = commands.add_parser("list", help="every catalog model and whether it is installed")
    listing.set_defaults(handler=_list)
    install = commands.add_parser(
        "install", help="install models: companion packages, then weights (resumable)",
        description="Install models: companion packages into the backend venv, then the weights.",
    )
    install.add_argument("keys", nargs="+", metavar="KEY", help=f"catalog keys: {', '.join(keys())}")
    install.set_defaults(handler=_install)
    remove = commands.add_parser(
        "remove", help="delete models' cached weights (stops a managed server hosting one)",
    )
    remove.add_argument("keys", nargs="+", metavar="KEY", help="catalog keys")
    remove.add_argument("--yes", "-y", action="store_true", help="do not ask for confirmation")
    remove.set_defaults(handler=_remove)


def _list(args: argparse.Namespace) -> int:
    cached = {model.key: model for model in cached_models()}
    print(f"Hugging Face cache: {hub_cache_dir()}")
    width = max(len(entry.key) for entry in CATALOG)
    print(f"{'KEY':<{width}}  {'STATUS':<9}  {'ON DISK':>9}  {'DOWNLOAD':>8}  {'VRAM':>5}  MODEL")
    for entry in CATALOG:
        model = cached.get(entry.key)
        status = model.status_str if model else "-"
        size = model.size_str if model else "-"
        print(
            f"{entry.key:<{width}}  {status:<9}  {size:>9}  {f'~{entry.approx_download_gb:g} GB':>8}  "
            f"{f'{entry.min_vram_gb:g} GB':>5}  {entry.label} ({entry.repo_id})"
        )
    partial = [model.key for model in cached.values() if not model.complete]
    if partial:
        print(f"\nPartial downloads ({', '.join(partial)}): run `models install` again to finish them.")
    return 0


class _Bars:
    """One tqdm bar per model, fed by progress events from the download threads."""

    def __init__(self) -> None:
        self._bars: dict[str, tqdm] = {}
        self._lock = threading.Lock()

    def __call__(self, event: DownloadProgress) -> None:
        with self._lock:
            bar = self._bars.get(event.key)
            if bar is None:
                bar = tqdm(
                    total=event.total_bytes, unit="B", unit_scale=True, unit_divisor=1000, desc=event.key
                )
                self._bars[event.key] = bar
            bar.total = event.total_bytes
            bar.n = event.downloaded_bytes
            bar.set_postfix_str(f"{event.files_done}/{event.files_total} files", refresh=False)
            bar.refresh()
            if event.finished:
                bar.close()

    def close(self) -> None:
        with self._lock:
            for bar in self._bars.values():
                bar.close()


def _cancelable(work: Callable[[threading.Event], T]) -> T:
    """Run ``work`` in a thread so Ctrl-C can set its cancel event and wait for a clean stop."""
    cancel, finished = threading.Event(), threading.Event()
    outcome: dict[str, object] = {}

    def target() -> None:
        try:
            outcome["value"] = work(cancel)
        except BaseException as exc:  # handed to the main thread below
            outcome["error"] = exc
        finally:
            finished.set()

    threading.Thread(target=target, name="models-task", daemon=True).start()
    # Wait on an Event, not Thread.join: a join interrupted by Ctrl-C can return early afterwards.
    try:
        while not finished.wait(timeout=0.2):
            continue
    except KeyboardInterrupt:
        print("\nCancelling (finished files are kept)...", file=sys.stderr, flush=True)
        cancel.set()
        while not finished.wait(timeout=0.2):
            continue
    if "error" in outcome:
        raise outcome["error"]  # type: ignore[misc]
    return outcome["value"]  # type: ignore[return-value]


def _install(args: argparse.Namespace) -> int:
    for key in args.keys:
        get_entry(key)  # unknown keys fail before anything starts
    paths = data_root_from_env()
    paths.ensure()
    bars = _Bars()
    try:
        result = _cancelable(
            lambda cancel: apply_model_diff(
                args.keys,
                (),
                paths=paths,
                progress=bars,
                cancel=cancel,
                log=lambda line: tqdm.write(line),
            )
        )
    finally:
        bars.close()
    for installed in result.installed:
        extra = (
            f" (companions: {', '.join(installed.companions_installed)})"
            if installed.companions_installed
            else ""
        )
        print(f"installed {installed.key}{extra}: {installed.snapshot_path}")
    for warning in result.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    for key, message in result.failed:
        print(f"error: {key}: {message}", file=sys.stderr)
    return 0 if result.ok else 1


def server_stopper(paths: DataPaths) -> StopServerHosting:
    """A callable that stops the managed server when it hosts the given model (never a foreign one)."""
    from omni_web.server.manager import ServerManager  # the server layer loads httpx; only remove needs it

    try:
        settings = load_settings(paths)
    except SettingsError:
        settings = Settings()  # stopping reads only the server record, not the settings
    manager = ServerManager(paths, settings)
    return lambda key: manager.stop_before_removing(key, log=print)


def _remove(args: argparse.Namespace) -> int:
    plan = plan_removal(args.keys)
    for key in plan.not_installed:
        print(f"{key}: not in the Hugging Face cache, nothing to remove.")
    if plan.is_empty:
        return 0
    for item in plan.items:
        state = "" if item.complete else " (partial)"
        print(f"  {item.key}{state}: {item.size_str} in {item.repo_path}")
    print(plan.summary)
    if not args.yes:
        try:
            answer = input("Delete these files? [y/N] ").strip().lower()
        except EOFError:
            answer = ""
        if answer not in ("y", "yes"):
            print("Nothing removed.")
            return 1
    paths = data_root_from_env()
    freed = plan.execute(stop_server_hosting=server_stopper(paths))
    print(f"Removed {', '.join(plan.keys)}; freed {format_bytes(freed)}.")
    return 0
