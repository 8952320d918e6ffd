"""Every error omni-web raises on purpose, under one base class.

Each message says what happened and what to do about it; attributes carry the facts (model key,
port, pid, log path) so the UI and the CLI can render them without parsing text. Foreign errors
(httpx, OSError, huggingface_hub, ffmpeg exit codes) are translated once, at the boundary of the
module that meets them, and chained with ``from exc``.

::

    OmniWebError
    ├── SettingsError
    │   └── CastError               a cast file, cast voice or cast flag is unusable
    ├── UnknownModel                (also KeyError)
    ├── ServerError
    │   ├── ServerStartError        the managed process died or never became healthy
    │   │   └── BootTimeout
    │   ├── PortTaken               the port is held; names both ports and the remedy
    │   ├── ForeignServer           a server we did not start hosts another model
    │   └── ServerNotRunning
    ├── SpeechError                 the server answered a speech/voice request with an error
    │   ├── KVCapacityError         "Request requires more tokens than the thinker KV cache…"
    │   ├── UnknownVoice            refused before any request
    │   ├── ServerMisconfigured     a 503 no retry can fix (the server lacks an audio encoder)
    │   └── ServerUnavailable       no usable answer for reasons outside the request (transient)
    │       ├── ServerUnreachable   nothing answered: refused, reset, dropped; safe to send again
    │       ├── ServerBusy          503 "queue full" through every retry
    │       └── RequestTimedOut     taken but not answered in time; never resent at once
    ├── BackendError                the sglang-omni venv or its interpreter
    │   ├── InstallError
    │   └── InstallCancelled        the user cancelled a pip/uv step; a re-run repairs
    ├── ModelError
    │   ├── ModelNotInstalled       (also FileNotFoundError)
    │   │   └── TranscriberNotInstalled  faster-whisper weights for transcripts
    │   ├── GatedModel
    │   ├── DownloadError
    │   └── DownloadCancelled       finished files stay cached; a re-run fetches the rest
    ├── GpuError
    ├── BookError                   the EPUB cannot be read
    │   ├── BookNotFound            (also FileNotFoundError) the book file is gone
    │   ├── NotAnEpub               not a ZIP, no container/OPF, broken package XML
    │   ├── UnsafeBook              decompression bomb or XML entity declarations
    │   ├── DrmProtected
    │   └── EmptyBook               nothing in it can be read aloud
    ├── ChapterSelectionError       chapter numbers the book lacks, a bad range, none selected
    ├── PreviewError                a preview came back in a form that cannot be played
    ├── LexiconError                a pronunciation entry or lexicon file is unusable
    ├── VoiceError                  a reference clip or voice name is unusable
    ├── FfmpegError                 ffmpeg/ffprobe failed or is missing
    ├── DiskFullError               (also OSError)
    ├── OutputNotWritable           (also OSError) the output folder cannot be written
    ├── ChunkFailed                 a chunk could not be rendered; names chapter, chunk, text
    │   └── PoisonChunk             it killed the server when rendered alone; the rest went on
    └── JobError
        ├── JobNotFound             (also KeyError)
        ├── JobCancelled
        ├── JobExists               a job for the exact same request is already there
        └── TaskBusy                a background task of that kind (install, download, start) runs

Anything else that escapes is a bug: :func:`internal_error_message` is the one line a user sees
for it (the UI, background tasks, jobs and the server status use it), the traceback goes to the log.
"""

from __future__ import annotations

import re
from pathlib import Path

__all__ = [
    "ReviewError",
    "BackendError",
    "BookError",
    "BookNotFound",
    "BootTimeout",
    "CastError",
    "ChapterSelectionError",
    "ChunkFailed",
    "DiskFullError",
    "DownloadCancelled",
    "DownloadError",
    "DrmProtected",
    "EmptyBook",
    "FfmpegError",
    "ForeignServer",
    "GatedModel",
    "GpuError",
    "InstallCancelled",
    "InstallError",
    "JobCancelled",
    "JobError",
    "JobExists",
    "JobNotFound",
    "KVCapacityError",
    "LexiconError",
    "ModelError",
    "ModelNotInstalled",
    "NotAnEpub",
    "OmniWebError",
    "OutputNotWritable",
    "PoisonChunk",
    "PortTaken",
    "PreviewError",
    "RequestTimedOut",
    "ServerBusy",
    "ServerError",
    "ServerMisconfigured",
    "ServerNotRunning",
    "ServerStartError",
    "ServerUnavailable",
    "ServerUnreachable",
    "SettingsError",
    "SpeechError",
    "TaskBusy",
    "TranscriberNotInstalled",
    "UnknownModel",
    "UnknownVoice",
    "UnsafeBook",
    "VoiceError",
    "exception_detail",
    "internal_error_message",
]


class OmniWebError(Exception):
    """Base of every error omni-web raises on purpose; ``str()`` is the user-facing message."""


# --- settings and catalog -------------------------------------------------------------------


class SettingsError(OmniWebError):
    """A setting has a value the app cannot use (raised when settings are loaded or changed)."""


class CastError(SettingsError):
    """A cast cannot be used: a cast file (bad YAML, unknown fields), a voice written wrongly, a
    clip that is neither a file nor a library voice, or a ``--cast``/``--set`` flag; the message
    names the file or flag and shows the right form."""


class UnknownModel(OmniWebError, KeyError):
    """A catalog key that is not in the catalog."""

    def __init__(self, key: str, known: list[str]) -> None:
        self.key = key
        self.known = known
        super().__init__(f"Unknown model '{key}'. Known models: {', '.join(known)}.")

    def __str__(self) -> str:  # KeyError would repr() the message
        return str(self.args[0])


# --- server lifecycle -----------------------------------------------------------------------


class ServerError(OmniWebError):
    """Something is wrong with the `sgl-omni serve` process or the endpoint."""


class ServerStartError(ServerError):
    """The managed server process died during boot (or was aborted); carries its log tail."""

    def __init__(
        self,
        message: str,
        *,
        exit_code: int | None = None,
        log_path: Path | None = None,
        log_tail: str = "",
    ) -> None:
        self.exit_code = exit_code
        self.log_path = log_path
        self.log_tail = log_tail
        super().__init__(message)


class BootTimeout(ServerStartError):
    """The server process lived but `/health` never answered 200 within the start timeout."""


class PortTaken(ServerError):
    """The configured port is held by another program.

    ``fallback_port`` is where sglang-omni would have moved the server (None when strict mode
    refused to fall back).
    """

    def __init__(self, port: int, *, fallback_port: int | None = None, host: str = "127.0.0.1") -> None:
        self.port = port
        self.fallback_port = fallback_port
        self.host = host
        moved = (
            f" sgl-omni tried to move the server to port {fallback_port}, where no client looks for it,"
            " so the boot was aborted."
            if fallback_port is not None
            else ""
        )
        super().__init__(
            f"Port {port} is already in use.{moved} Find and stop the program holding it "
            f"(ss -tlnp 'sport = :{port}'), or pick another port in Settings (CLI: --port), then start again."
        )


class ForeignServer(ServerError):
    """A server this app did not start answers at the endpoint but hosts a different model."""

    def __init__(self, endpoint: str, *, hosted_model: str, wanted_model: str) -> None:
        self.endpoint = endpoint
        self.hosted_model = hosted_model
        self.wanted_model = wanted_model
        super().__init__(
            f"The server at {endpoint} was not started by omni-web and hosts '{hosted_model}', "
            f"not '{wanted_model}'. Stop that server yourself, point omni-web at another port or "
            f"URL, or choose the model it hosts."
        )


class ServerNotRunning(ServerError):
    """An operation needs a running server and none answers."""


# --- speech client --------------------------------------------------------------------------


class SpeechError(OmniWebError):
    """The server answered with an error envelope; fields mirror ``{"error": {...}}``."""

    def __init__(
        self,
        message: str,
        *,
        status_code: int | None = None,
        error_type: str | None = None,
        param: str | None = None,
    ) -> None:
        self.message = message
        self.status_code = status_code
        self.error_type = error_type
        self.param = param
        prefix = f"HTTP {status_code}: " if status_code is not None else ""
        super().__init__(prefix + message)


class KVCapacityError(SpeechError):
    """The request does not fit the engine's KV cache / context window even after a refit."""

    def __init__(
        self,
        message: str,
        *,
        kv_capacity: int,
        input_tokens: int,
        max_new_tokens: int,
        status_code: int | None = 400,
    ) -> None:
        self.kv_capacity = kv_capacity
        self.input_tokens = input_tokens
        self.max_new_tokens = max_new_tokens
        super().__init__(message, status_code=status_code, error_type="BadRequestError")


class UnknownVoice(SpeechError):
    """A voice name the server does not list; refused before any speech request is sent."""

    def __init__(self, voice: str, valid: list[str]) -> None:
        self.voice = voice
        self.valid = valid
        super().__init__(f"Unknown voice '{voice}'. Valid voices: {', '.join(valid) or '(none)'}.")


class ServerMisconfigured(SpeechError):
    """The server refused for a reason no retry fixes (e.g. no encoder for the response format)."""


class ServerUnavailable(SpeechError):
    """The server gave no usable answer for a reason outside the request; see the subclasses.

    :mod:`omni_web.retry` decides what each kind is worth: how long to back off, whether to resend.
    """


class ServerUnreachable(ServerUnavailable):
    """Nothing answered (connection refused, reset, or dropped before a response): the server never
    processed the request, so sending it again is safe; for our own server it may mean a crash."""


class ServerBusy(ServerUnavailable):
    """The server answered 503 (its request queue is full) through every retry of the client."""


class RequestTimedOut(ServerUnavailable):
    """The server took the request but did not answer within the read timeout.

    It may still be working on it, so the request is never sent again at once: only after a long
    back-off (and never by the client itself).
    """


# --- backend install, models, GPU -----------------------------------------------------------


class BackendError(OmniWebError):
    """The sglang-omni backend venv is missing, broken, or has no usable interpreter."""


class InstallError(BackendError):
    """A pip/uv step failed; ``log_path`` holds the full output."""

    def __init__(self, message: str, *, log_path: Path | None = None) -> None:
        self.log_path = log_path
        super().__init__(message)


class InstallCancelled(BackendError):
    """The user cancelled a pip/uv step; the child was stopped and a re-run repairs the venv."""

    def __init__(self, message: str, *, log_path: Path | None = None) -> None:
        self.log_path = log_path
        super().__init__(message)


class ModelError(OmniWebError):
    """A model cannot be installed, found or removed."""


class ModelNotInstalled(ModelError, FileNotFoundError):
    """The model's weights are not in the Hugging Face cache."""

    def __init__(self, key: str, repo_id: str, *, label: str = "", cli_hint: bool = True) -> None:
        self.key = key
        self.repo_id = repo_id
        name = label or f"Model '{key}'"
        # The command names the catalog key the CLI takes; a page (cli_hint=False) says it in words.
        hint = f" (CLI: python -m omni_web models install {key})" if cli_hint else ""
        super().__init__(f"{name} ({repo_id}) is not downloaded. Download it in the Models tab, then try again{hint}.")

    def __str__(self) -> str:  # FileNotFoundError would format errno/filename
        return str(self.args[0])


class TranscriberNotInstalled(ModelNotInstalled):
    """The faster-whisper weights that transcribe reference clips are not in the HF cache.

    ``key`` is ``whisper-<size>``; ``size`` is the Settings value (``transcription_model``).
    """

    def __init__(self, size: str, repo_id: str) -> None:
        self.key = f"whisper-{size}"
        self.size = size
        self.repo_id = repo_id
        # Skip ModelNotInstalled's text: the remedy is the voices command, not `models install`.
        super(ModelNotInstalled, self).__init__(
            f"The transcription model faster-whisper '{size}' ({repo_id}) is not downloaded. "
            f"Download it with: python -m omni_web voices transcriber install --size {size} "
            "(or type the transcript yourself)."
        )


class GatedModel(ModelError):
    """The hub refused a download because the repository is gated."""


class DownloadError(ModelError):
    """A download failed (network, disk, hub error)."""


class DownloadCancelled(ModelError):
    """The user cancelled a model download; finished files stay cached, the rest is fetched again."""

    def __init__(self, key: str, repo_id: str) -> None:
        self.key = key
        self.repo_id = repo_id
        super().__init__(
            f"Download of '{key}' ({repo_id}) was cancelled. Files that finished stay in the cache; "
            f"install the model again to fetch the rest."
        )


class GpuError(OmniWebError):
    """A GPU fact the app needs could not be read."""


# --- books, voices, audio -------------------------------------------------------------------


class BookError(OmniWebError):
    """The EPUB cannot be read; the message names the problem and what to do."""


class BookNotFound(BookError, FileNotFoundError):
    """The book file does not exist (any more); ``path`` is where it was looked for."""

    def __init__(self, path: Path, *, remedy: str = "Check the path.") -> None:
        self.path = path
        super().__init__(f"The book {path} does not exist. {remedy}")

    def __str__(self) -> str:  # FileNotFoundError would format errno/filename
        return str(self.args[0])


class NotAnEpub(BookError):
    """The file is not a readable EPUB: not a ZIP, no container or package document, broken XML."""


class UnsafeBook(BookError):
    """The EPUB looks built to exhaust memory (decompression bomb, XML entity expansion)."""


class DrmProtected(BookError):
    """The EPUB's content is encrypted (``META-INF/encryption.xml``)."""


class EmptyBook(BookError):
    """The EPUB opened fine but has no text to read aloud (image-only or empty pages)."""


class ChapterSelectionError(OmniWebError):
    """The chapters asked for cannot be rendered: numbers the book lacks, a bad range, or none."""


class PreviewError(OmniWebError):
    """A preview cannot be played (e.g. the server sent audio in a sample format the page cannot show)."""


class LexiconError(OmniWebError):
    """A pronunciation lexicon entry (empty, bad regular expression) or file (bad YAML) is unusable."""


class VoiceError(OmniWebError):
    """A reference clip or voice name cannot be used."""


class FfmpegError(OmniWebError):
    """ffmpeg or ffprobe failed or is missing; carries the command's stderr tail."""

    def __init__(self, message: str, *, stderr_tail: str = "", returncode: int | None = None) -> None:
        self.stderr_tail = stderr_tail
        self.returncode = returncode
        super().__init__(message)


class DiskFullError(OmniWebError, OSError):
    """A write failed for lack of space; nothing already written is removed."""

    def __str__(self) -> str:
        return str(self.args[0])


class OutputNotWritable(OmniWebError, OSError):
    """An output folder cannot be created or written (permissions, missing mount, read-only disk)."""

    def __str__(self) -> str:
        return str(self.args[0])


# --- rendering ------------------------------------------------------------------------------


class ChunkFailed(OmniWebError):
    """A chunk still failed after its retries; the job stops instead of leaving a silent gap."""

    def __init__(self, *, chapter_title: str, chapter_number: int, chunk_number: int, text: str, cause: str) -> None:
        self.chapter_title = chapter_title
        self.chapter_number = chapter_number
        self.chunk_number = chunk_number
        self.text = text
        self.cause = cause
        excerpt = text if len(text) <= 160 else text[:157] + "..."
        super().__init__(
            f"Chunk {chunk_number} of chapter {chapter_number} ('{chapter_title}') failed: {cause}\n"
            f"Text: \"{excerpt}\"\nFinished chunks are kept; fix the cause and resume the job."
        )


class PoisonChunk(ChunkFailed):
    """A chunk that was in flight at two server crashes in a row killed the server again when it
    was rendered alone; it is failed by itself and every other chunk of the book is rendered."""


# --- jobs -----------------------------------------------------------------------------------


class JobError(OmniWebError):
    """A job cannot be queued, run, resumed or cancelled."""


class JobNotFound(JobError, KeyError):
    """No job with that id."""

    def __init__(self, job_id: str) -> None:
        self.job_id = job_id
        super().__init__(f"No job with id '{job_id}'.")

    def __str__(self) -> str:
        return str(self.args[0])


class JobCancelled(JobError):
    """The job was cancelled by the user; finished chunks are kept for a resume."""


class JobExists(JobError):
    """A conversion was submitted that an existing job already asks for (same book, chapters,
    model, voice and chunk size); ``job_id`` is that job, to open instead of queueing a twin."""

    def __init__(self, job_id: str, title: str, state: str) -> None:
        self.job_id = job_id
        self.title = title
        self.state = state
        super().__init__(
            f"A job for this exact request already exists: '{title}' (job {job_id}, {state}). "
            "Open it in the Jobs tab (resume or re-run it there), or change the voice, model, chapters "
            "or chunk size for a new book."
        )


class TaskBusy(JobError):
    """A background task of the same kind (backend install, model changes, server start) is running."""

    def __init__(self, kind: str, title: str) -> None:
        self.kind = kind
        self.title = title
        super().__init__(f"'{title}' is still running. Wait for it to finish or cancel it, then try again.")


# --- audio QA review ------------------------------------------------------------------------


class ReviewError(OmniWebError):
    """A QA review action cannot be done: no QA report for the book or job, or no such chunk."""


# --- bugs -------------------------------------------------------------------------------------


def exception_detail(exc: BaseException) -> str:
    """What a library's exception says, in words: its message, else its kind ("read timeout" for
    an empty ``ReadTimeout``); never the class name as such."""
    text = " ".join(str(exc).split()).strip()
    if text and text not in ("None", "''"):
        return text
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", type(exc).__name__).lower()


def internal_error_message(exc: BaseException) -> str:
    """The line shown for an exception that is not an :class:`OmniWebError` (a bug); log the traceback too."""
    return (f"Internal error: something went wrong inside omni-web ({exception_detail(exc)}). "
            "This is a bug; the app log has the details.")
