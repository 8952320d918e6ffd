"""What `sgl-omni serve` command a start runs: a pure plan, checkable without launching anything.

:func:`build_serve_spec` turns a catalog entry, the GPU's compute capability and the settings into a
frozen :class:`ServeSpec`; :func:`build_argv` turns the spec into the argv list; :func:`shell_command`
renders that list for a human who starts the server by hand. Nothing here touches a process, a
socket or the GPU.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from pathlib import Path

from omni_web.catalog import CatalogEntry, model_label
from omni_web.paths import CONFIGS_DIR
from omni_web.server.widths import configured_width
from omni_web.settings import Settings

__all__ = ["ServeSpec", "build_argv", "build_serve_spec", "client_host", "format_cc", "shell_command"]


def format_cc(cc: tuple[int, int]) -> str:
    """Render a compute capability the way NVIDIA writes it: ``(8, 9)`` → ``"8.9"``."""
    return f"{cc[0]}.{cc[1]}"


def client_host(host: str) -> str:
    """The address a local client dials for a server bound to ``host``.

    A server bound to every interface (``0.0.0.0`` / ``::``) is reached over loopback; an IPv6
    literal gets the brackets a URL needs.
    """
    host = host.strip()
    if host in ("", "0.0.0.0"):
        return "127.0.0.1"
    if host == "::":
        return "[::1]"
    if ":" in host and not host.startswith("["):
        return f"[{host}]"
    return host


@dataclass(frozen=True, slots=True)
class ServeSpec:
    """Everything one `sgl-omni serve` start needs, decided before anything runs.

    ``tag`` is ``""`` or the catalog's fallback tag (e.g. ``"bf16 fallback"``); ``notes`` are the
    lines that explain a choice to the user (written to the log header and the boot output).
    """

    entry: CatalogEntry
    model_path: str
    config_path: Path | None
    host: str
    port: int
    mem_fraction_static: float | None = None
    tag: str = ""
    notes: tuple[str, ...] = ()
    # "throughput" or "memory-safe" for a model with both configs, else "" (one config only).
    profile: str = ""
    # Requests the server runs at once, when its config says (configs that set max_running_requests).
    width: int | None = None

    @property
    def profile_line(self) -> str:
        """``Throughput profile (configs/qwen3_tts_throughput.yaml): 64 requests at once`` for the Server tab."""
        if not self.profile:
            return ""
        name = f"configs/{self.config_path.name}" if self.config_path is not None else "upstream defaults"
        runs = f": {self.width} requests at once" if self.width else ""
        return f"{self.profile.capitalize()} profile ({name}){runs}"

    @property
    def model_key(self) -> str:
        """The catalog key of the model this spec serves."""
        return self.entry.key

    @property
    def model_label(self) -> str:
        """The model's name with its tag, e.g. ``"ZONOS2 (bf16 fallback)"``."""
        return model_label(self.entry.key, self.tag)

    @property
    def base_url(self) -> str:
        """The URL a client on this machine uses to reach the server."""
        return f"http://{client_host(self.host)}:{self.port}"


def _choose_config(
    entry: CatalogEntry, compute_capability: tuple[int, int] | None, configs_dir: Path
) -> tuple[Path | None, str, tuple[str, ...]]:
    """Pick the vendored config for this GPU; return (config path, tag, notes)."""
    default = configs_dir / entry.config_file if entry.config_file else None
    if not (entry.fallback_config_file and entry.fallback_below_cc):
        return default, "", ()
    needed = format_cc(entry.fallback_below_cc)
    fallback_rel = f"configs/{entry.fallback_config_file}"
    default_desc = f"configs/{entry.config_file}" if entry.config_file else "its default pipeline (no config)"
    if compute_capability is None:
        return (
            default,
            "",
            (
                f"No GPU compute capability is known, so {entry.label} starts with {default_desc}. "
                f"On a GPU below {needed} it needs {fallback_rel} ({entry.fallback_tag}).",
            ),
        )
    have = format_cc(compute_capability)
    if tuple(compute_capability) >= entry.fallback_below_cc:
        return (
            default,
            "",
            (f"GPU compute capability {have} >= {needed}: {entry.label} starts with {default_desc}.",),
        )
    why = f" {entry.vram_note}" if entry.vram_note else ""
    return (
        configs_dir / entry.fallback_config_file,
        entry.fallback_tag,
        (
            f"GPU compute capability {have} < {needed}: starting {entry.label} with {fallback_rel} "
            f"({entry.fallback_tag}).{why}",
        ),
    )


def build_serve_spec(
    entry: CatalogEntry,
    *,
    settings: Settings,
    compute_capability: tuple[int, int] | None,
    port: int | None = None,
    configs_dir: Path = CONFIGS_DIR,
    vram_gb: float | None = None,
) -> ServeSpec:
    """Plan the server start for ``entry`` on this GPU with these settings.

    Args:
        entry: the catalog entry to serve; its repo id becomes ``--model-path``.
        settings: host, port, and the optional ``mem_fraction_static`` override.
        compute_capability: the first GPU's ``(major, minor)``, or None when no GPU is known (the
            default config is used and a note says so).
        port: overrides ``settings.server_port`` (the CLI's ``--port``).
        configs_dir: where the vendored configs live (tests may point elsewhere).
        vram_gb: GPU 0's memory in GiB; picks the throughput profile where the model has one and the
            card has room (unknown: the memory-safe profile).
    """
    config_path, tag, notes = _choose_config(entry, compute_capability, configs_dir)
    profile = ""
    if entry.throughput_config_file and not tag:  # a fallback for an old GPU comes first
        config_path, profile, note = _choose_profile(entry, vram_gb, configs_dir)
        notes = (*notes, note)
        # Shown beside the model wherever the server is (the Server tab's badge, its log, the record);
        # the memory-safe profile is the plain default and carries no tag.
        tag = "throughput profile" if profile == "throughput" else ""
    return ServeSpec(
        entry=entry,
        model_path=entry.repo_id,
        config_path=config_path,
        host=settings.server_host,
        port=settings.server_port if port is None else port,
        mem_fraction_static=settings.mem_fraction_static,
        tag=tag,
        notes=notes,
        profile=profile,
        width=configured_width(config_path),
    )


def _choose_profile(
    entry: CatalogEntry, vram_gb: float | None, configs_dir: Path
) -> tuple[Path | None, str, str]:
    """The throughput config on a card with room for it, else the memory-safe one; (path, profile, note)."""
    assert entry.throughput_config_file is not None
    floor = entry.throughput_min_vram_gb
    if vram_gb is not None and vram_gb >= floor:
        return (
            configs_dir / entry.throughput_config_file,
            "throughput",
            (
                f"GPU memory {vram_gb:.0f} GB >= {floor:.0f} GB: {entry.label} starts with the throughput "
                "profile "
                f"(configs/{entry.throughput_config_file})."
            ),
        )
    have = "unknown" if vram_gb is None else f"{vram_gb:.0f} GB"
    safe = f"configs/{entry.config_file}" if entry.config_file else "its default pipeline"
    return (
        configs_dir / entry.config_file if entry.config_file else None,
        "memory-safe",
        (
            f"GPU memory {have} < {floor:.0f} GB for the throughput profile: {entry.label} starts with the "
            f"memory-safe profile ({safe})."
        ),
    )


def build_argv(spec: ServeSpec, *, sgl_omni: Path) -> list[str]:
    """The argv list that starts ``spec`` with the ``sgl-omni`` executable at ``sgl_omni``.

    ``--mem-fraction-static`` appears only when the user set it: the vendored configs pin their
    own budgets, and the flag would override every engine stage's (``sglang_omni/cli/serve.py``).
    """
    argv = [str(sgl_omni), "serve", "--model-path", spec.model_path]
    if spec.config_path is not None:
        argv += ["--config", str(spec.config_path)]
    argv += ["--host", spec.host, "--port", str(spec.port)]
    if spec.mem_fraction_static is not None:
        argv += ["--mem-fraction-static", f"{spec.mem_fraction_static:g}"]
    return argv


def shell_command(argv: list[str]) -> str:
    """The argv as one shell-quoted line a user can paste into a terminal."""
    return shlex.join(argv)
