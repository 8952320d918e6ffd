"""Every error omni-web raises on purpose, under one base class.

Each message says what happened and what to do about it; attributes carry the facts (model key,
port, pid, log path) so the UI and the CLI can render them without parsing text. Foreign errors
(httpx, OSError, huggingface_hub, ffmpeg exit codes) are translated once, at the boundary of the
module that meets them, and chained with ``from exc``.

::

    OmniWebError
    ├── SettingsError
    │   ├── CastError               a cast file, cast voice or cast flag is unusable
    │   └── PresetError             a job preset or preset rule is unusable
    ├── UnknownModel                (also KeyError)
    ├── ServerError
    │   ├── ServerStartError        the managed process died or never became healthy
    │   │   └── BootTimeout
    │   ├── PortTaken               the port is held; names both ports and the remedy
    │   ├── ForeignServer           a server we did not start hosts another model
    │   ├── ServerNotRunning
    │   ├── FarmRefused         an agent's farm token was refused by the app
    │   └── FarmBoxNotFound     no farm box (or several) has the id or name given
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
    ├── BookError                   the book file cannot be read
    │   ├── BookNotFound            (also FileNotFoundError) the book file is gone
    │   ├── NotAnEpub               not a ZIP, no container/OPF, broken package XML
    │   ├── UnsafeBook              decompression bomb or XML entity declarations
    │   ├── DrmProtected            DRM'd EPUB/MOBI, password-protected PDF
    │   ├── UnsupportedFormat       the content is no book format omni-web reads (or needs a missing tool)
    │   └── EmptyBook               nothing in it can be read aloud
    │       └── ScannedBook         a PDF of page pictures: no text layer, needs OCR first
    ├── ChapterSelectionError       chapter numbers the book lacks, a bad range, none selected
    ├── PreviewError                a preview came back in a form that cannot be played
    ├── LexiconError                a pronunciation entry or lexicon file is unusable
    ├── LlmError                    the chat endpoint that labels quotes refused (status, url)
    │   ├── LlmUnreachable          nothing answered there, or not in time
    │   └── LlmUnusableAnswer       it answered, but not with the JSON labels asked for
    ├── VoiceError                  a reference clip or voice name is unusable
    ├── FfmpegError                 ffmpeg/ffprobe failed or is missing
    ├── DiskFullError               (also OSError)
    ├── OutputNotWritable           (also OSError) the output folder cannot be written
    ├── DeliveryError               a library (Audiobookshelf) refused or could not be reached
    ├── ChunkFailed                 a chunk could not be rendered; names chapter, chunk, text
    │   └── PoisonChunk             it killed the server when rendered alone; the rest went on
    └── JobError
        ├── JobNotFound             (also KeyError)
        ├── JobCancelled
        ├── JobExists               a job for the exact same request is already there
        └── TaskBusy                a background task of that kind (install, download, start) runs

Anything else that escapes is a bug: :func:`internal_error_message` is the one line a user sees
for it (the UI, background tasks, jobs and the server status use it), the traceback goes to the log.

The classes live in one module per area (``base``, ``settings``, ``server``, ``speech``, ``models``,
``media``, ``jobs``, ``llm``); import them from ``omni_web.errors``, which is the one public surface.
"""

from __future__ import annotations

from omni_web.errors.base import (
    OmniWebError,
    exception_detail,
    internal_error_message,
)
from omni_web.errors.jobs import (
    ChunkFailed,
    DeliveryError,
    JobCancelled,
    JobError,
    JobExists,
    JobNotFound,
    PoisonChunk,
    ReviewError,
    TaskBusy,
)
from omni_web.errors.llm import LlmError, LlmUnreachable, LlmUnusableAnswer
from omni_web.errors.media import (
    BookError,
    BookNotFound,
    ChapterSelectionError,
    DiskFullError,
    DrmProtected,
    EmptyBook,
    FfmpegError,
    LexiconError,
    NotAnEpub,
    OutputNotWritable,
    PreviewError,
    ScannedBook,
    UnsafeBook,
    UnsupportedFormat,
    VoiceError,
)
from omni_web.errors.models import (
    BackendError,
    DownloadCancelled,
    DownloadError,
    GatedModel,
    InstallCancelled,
    InstallError,
    ModelError,
    ModelNotInstalled,
    TranscriberNotInstalled,
)
from omni_web.errors.server import (
    BootTimeout,
    FarmBoxNotFound,
    FarmRefused,
    ForeignServer,
    PortTaken,
    ServerError,
    ServerNotRunning,
    ServerStartError,
)
from omni_web.errors.settings import (
    CastError,
    PresetError,
    SettingsError,
    UnknownModel,
)
from omni_web.errors.speech import (
    KVCapacityError,
    RequestTimedOut,
    ServerBusy,
    ServerMisconfigured,
    ServerUnavailable,
    ServerUnreachable,
    SpeechError,
    UnknownVoice,
)

__all__ = [
    "DeliveryError",
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
    "InstallCancelled",
    "InstallError",
    "JobCancelled",
    "JobError",
    "JobExists",
    "JobNotFound",
    "KVCapacityError",
    "LexiconError",
    "LlmError",
    "LlmUnreachable",
    "LlmUnusableAnswer",
    "ModelError",
    "ModelNotInstalled",
    "NotAnEpub",
    "OmniWebError",
    "OutputNotWritable",
    "PoisonChunk",
    "PortTaken",
    "PreviewError",
    "RequestTimedOut",
    "ScannedBook",
    "ServerBusy",
    "ServerError",
    "ServerMisconfigured",
    "ServerNotRunning",
    "FarmRefused",
    "FarmBoxNotFound",
    "ServerStartError",
    "ServerUnavailable",
    "ServerUnreachable",
    "PresetError",
    "SettingsError",
    "SpeechError",
    "TaskBusy",
    "TranscriberNotInstalled",
    "UnknownModel",
    "UnknownVoice",
    "UnsafeBook",
    "UnsupportedFormat",
    "VoiceError",
    "exception_detail",
    "internal_error_message",
]
