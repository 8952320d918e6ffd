"""User settings, persisted as YAML in the data root.

Settings are a frozen record; changing one returns a new record (``dataclasses.replace``) that the
caller saves. Unknown keys in the file are ignored so an older app can read a newer file; values
are validated on load, and a bad one raises :class:`SettingsError` naming the key.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

import yaml

from omni_web.book.options import FOOTNOTE_MODES, TABLE_MODES, ReadOptions
from omni_web.errors import SettingsError
from omni_web.files import write_atomic
from omni_web.paths import DataPaths

__all__ = ["Settings", "load_settings", "save_settings"]


@dataclass(frozen=True, slots=True)
class Settings:
    """Everything a user can change; defaults are what a new install uses."""

    # The managed `sgl-omni serve`: host it binds, port it listens on, start timeout.
    server_host: str = "127.0.0.1"
    server_port: int = 8100
    start_timeout_s: float = 1200.0
    # None lets the vendored config (or upstream) decide; a value adds --mem-fraction-static.
    mem_fraction_static: float | None = None
    # An external server; when set, no managed server is started.
    remote_url: str = ""
    # How long a job waits for a server we did not start (the remote URL, --api-url) that went
    # away mid-job, before it stops with its finished chunks kept.
    remote_patience_s: float = 900.0
    # Scale-out (omni_web.server.group): "" or "all" = every GPU with room for the model, or ids
    # like "0,2"; two or more GPUs, or any worker URL, start a group behind the router.
    gpus: str = ""
    # `sgl-omni serve` instances on other machines added to the group (comma or space separated).
    worker_urls: str = ""
    # Text chunking and rendering.
    chunk_size_words: int = 120
    concurrency: int | None = None  # None = the model's catalog default
    # Pauses inserted during assembly.
    pause_between_chunks_ms: int = 250
    pause_after_paragraph_ms: int = 600
    pause_after_heading_ms: int = 900
    pause_between_chapters_ms: int = 1500
    # Output.
    output_dir: str = ""  # "" = <data root>/outputs
    output_format: str = "m4b"  # m4b | mp3
    # library: one folder per (book, narrator version), MP3/ACX sets in their own trees (what
    # Audiobookshelf and Storyteller expect); flat: every version of a title in one folder.
    output_layout: str = "library"
    # The read-along EPUB's audio: aac (EPUB 3.2 core media, every reader) or opus (about half the
    # size; EPUB 3.3 core media, Storyteller's choice; EPUBCheck 4 and older readers do not know it).
    readalong_audio: str = "aac"
    also_mp3_chapters: bool = False
    aac_bitrate_kbps: int = 64
    # Numbers, abbreviations and roman numerals spelled out before sending: "auto" follows the
    # model's catalog entry (a model that normalises by itself gets the book's text), "on", "off".
    text_normalization: str = "auto"
    # Footnotes inside chapters: "skip" (not read) or "end-of-paragraph" (read after the paragraph
    # that references them, as "Note: ..."); every reader honours it (omni_web/book/options.py).
    footnotes: str = "skip"
    # Tables in DOCX, ODT, HTML and EPUB books: "rows" (each row read as one sentence) or "note" (a
    # short "Table: ..." line, the rest not read).
    tables: str = "rows"
    loudness: str = "audiobook"  # mastering preset: audiobook | acx | r128 | podcast | off
    # Reference-clip transcription (faster-whisper model size).
    transcription_model: str = "small"
    # Audio QA of every chunk (omni_web.qa): off | basic | asr; the faster-whisper size or model
    # directory for asr; takes per chunk before it is flagged; the device the asr model runs on.
    qa_level: str = "basic"
    qa_model: str = "tiny.en"
    qa_takes: int = 3
    # auto: CUDA float16 when the model fits beside the TTS server, else CPU int8 (omni_web/qa/asr_models.py).
    qa_device: str = "auto"
    # With asr: hear who reads each take (a speaker embedding against its voice), besides its pace,
    # pitch and loudness, which every checked level compares (omni_web/qa/voice.py).
    qa_voice: bool = True
    # Automation: the watched inbox ("" = <data root>/inbox, "off" = not watched) and the preset its
    # books get when no rule picks one (omni_web/library/inbox.py); where a finished, failed or flagged
    # job is announced: webhook URLs and Apprise URLs, separated by spaces, commas or new lines.
    inbox_dir: str = ""
    inbox_preset: str = ""
    webhook_urls: str = ""
    apprise_urls: str = ""
    # The optional LLM that labels a cast's unsure quotes: an OpenAI-compatible chat endpoint
    # ("" = off), its model name and API key, how many requests it takes at once, and its timeout.
    llm_url: str = ""
    llm_model: str = ""
    llm_api_key: str = ""
    llm_concurrency: int = 2
    llm_timeout_s: float = 120.0
    # Web UI.
    web_host: str = "0.0.0.0"
    web_port: int = 7860

    def validate(self) -> Settings:
        """Return self if every value is usable; raise SettingsError naming the first bad one."""
        checks: list[tuple[bool, str]] = [
            (1 <= self.server_port <= 65535, "server_port must be between 1 and 65535"),
            (1 <= self.web_port <= 65535, "web_port must be between 1 and 65535"),
            (self.start_timeout_s > 0, "start_timeout_s must be positive"),
            (self.remote_patience_s >= 0, "remote_patience_s must be 0 or more seconds"),
            (
                self.mem_fraction_static is None or 0 < self.mem_fraction_static < 1,
                "mem_fraction_static must be between 0 and 1 (exclusive), or empty",
            ),
            (1 <= self.chunk_size_words <= 1000, "chunk_size_words must be between 1 and 1000"),
            (self.concurrency is None or 1 <= self.concurrency <= 256, "concurrency must be 1-256"),
            (self.pause_between_chunks_ms >= 0, "pause_between_chunks_ms must be >= 0"),
            (self.pause_after_paragraph_ms >= 0, "pause_after_paragraph_ms must be >= 0"),
            (self.pause_after_heading_ms >= 0, "pause_after_heading_ms must be >= 0"),
            (self.pause_between_chapters_ms >= 0, "pause_between_chapters_ms must be >= 0"),
            (self.output_format in ("m4b", "mp3"), "output_format must be m4b or mp3"),
            (self.output_layout in ("library", "flat"), "output_layout must be library or flat"),
            (self.readalong_audio in ("aac", "opus"), "readalong_audio must be aac or opus"),
            (8 <= self.aac_bitrate_kbps <= 512, "aac_bitrate_kbps must be 8-512"),
            (self.text_normalization in ("auto", "on", "off"), "text_normalization must be auto, on or off"),
            (self.qa_level in ("off", "basic", "asr"), "qa_level must be off, basic or asr"),
            (self.footnotes in FOOTNOTE_MODES, "footnotes must be skip or end-of-paragraph"),
            (self.tables in TABLE_MODES, "tables must be rows or note"),
            (1 <= self.qa_takes <= 10, "qa_takes must be 1-10"),
            (bool(self.qa_model.strip()), "qa_model must name a faster-whisper size or a model folder"),
            (self.qa_device in ("cpu", "cuda", "auto"), "qa_device must be cpu, cuda or auto"),
            (
                self.loudness in ("audiobook", "acx", "r128", "podcast", "off"),
                "loudness must be one of audiobook, acx, r128, podcast, off",
            ),
            (
                not self.remote_url or self.remote_url.startswith(("http://", "https://")),
                "remote_url must start with http:// or https://",
            ),
            (
                not self.llm_url or self.llm_url.startswith(("http://", "https://")),
                "llm_url must start with http:// or https:// (e.g. http://127.0.0.1:30000/v1)",
            ),
            (1 <= self.llm_concurrency <= 64, "llm_concurrency must be 1-64"),
            (self.llm_timeout_s > 0, "llm_timeout_s must be positive"),
            (
                re.fullmatch(r"\s*(all|\d+(\s*,\s*\d+)*)?\s*", self.gpus, re.IGNORECASE) is not None,
                "gpus must be all, or GPU ids like 0,2",
            ),
            (
                all(url.startswith(("http://", "https://")) for url in self.worker_url_list),
                "worker_urls must be http:// or https:// URLs, separated by commas or spaces",
            ),
        ]
        for ok, message in checks:
            if not ok:
                raise SettingsError(f"Invalid setting: {message}.")
        return self

    @property
    def worker_url_list(self) -> tuple[str, ...]:
        """The remote worker URLs, in order, without duplicates or trailing slashes."""
        urls = (part.strip().rstrip("/") for part in self.worker_urls.replace(",", " ").split())
        return tuple(dict.fromkeys(url for url in urls if url))

    def read_options(self, paths: DataPaths, *, footnotes: str | None = None) -> ReadOptions:
        """How books are read: the footnote setting (or a job's own ``footnotes``), the table setting,
        and the data root's conversion cache (MOBI/AZW3)."""
        return ReadOptions(footnotes=footnotes or self.footnotes, cache_dir=paths.state_dir / "converted",
                           tables=self.tables)

    def inbox_path(self, paths: DataPaths) -> Path | None:
        """The watched inbox folder, or None when it is switched off."""
        if self.inbox_dir.strip().lower() == "off":
            return None
        return Path(self.inbox_dir).expanduser() if self.inbox_dir.strip() else paths.root / "inbox"

    def output_path(self, paths: DataPaths) -> Path:
        """Where finished books go."""
        return Path(self.output_dir).expanduser() if self.output_dir else paths.outputs_dir

    def to_dict(self) -> dict[str, Any]:
        """Plain values for YAML/JSON."""
        return dataclasses.asdict(self)


def _coerce(name: str, value: Any, default: Any) -> Any:
    """Convert a YAML value to the field's type (YAML may give int for float, str for int)."""
    if value is None:
        return None
    try:
        if isinstance(default, bool):
            if isinstance(value, str):
                return value.strip().lower() in ("1", "true", "yes", "on")
            return bool(value)
        if isinstance(default, int):
            return int(value)
        if isinstance(default, float):
            return float(value)
        if default is None:  # optional numbers
            return float(value) if name == "mem_fraction_static" else int(value)
        return str(value)
    except (TypeError, ValueError):
        raise SettingsError(f"Invalid setting: {name} = {value!r} is not a valid value.") from None


def settings_from_dict(data: dict[str, Any]) -> Settings:
    """Build validated Settings from a mapping, ignoring unknown keys."""
    defaults = Settings()
    values = {}
    for field in fields(Settings):
        if field.name in data:
            values[field.name] = _coerce(field.name, data[field.name], getattr(defaults, field.name))
    return Settings(**values).validate()


def load_settings(paths: DataPaths) -> Settings:
    """Read the settings file; a missing file gives the defaults."""
    try:
        text = paths.settings_file.read_text(encoding="utf-8")
    except FileNotFoundError:
        return Settings()
    try:
        data = yaml.safe_load(text) or {}
    except yaml.YAMLError as exc:
        raise SettingsError(
            f"{paths.settings_file} is not valid YAML ({exc}). Fix or delete it to use the defaults."
        ) from exc
    if not isinstance(data, dict):
        raise SettingsError(f"{paths.settings_file} must hold a mapping of setting: value.")
    return settings_from_dict(data)


def save_settings(paths: DataPaths, settings: Settings) -> None:
    """Validate and write atomically (temp file + rename), so a crash never leaves half a file."""
    settings.validate()
    paths.settings_file.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(paths.settings_file, yaml.safe_dump(settings.to_dict(), sort_keys=False))
