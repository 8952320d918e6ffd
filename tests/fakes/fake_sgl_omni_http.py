"""The fake ``sgl-omni`` HTTP app (API doc section 2) on :class:`http.server.ThreadingHTTPServer`.

Routes: ``GET /health``, ``GET /v1/models``, ``POST /v1/audio/speech`` (plain, ``stream`` pcm and
SSE), ``GET /v1/audio/speech/{id}``, ``GET|POST /v1/audio/voices``,
``DELETE /v1/audio/voices/{name}``; anything else is 404 ``{"detail":"Not Found"}`` (405 for a
known path with the wrong method). Access lines go to stdout in uvicorn's format.
"""

from __future__ import annotations

import base64
import json
import logging
import math
import os
import sys
import threading
import time
import uuid
from collections import OrderedDict
from dataclasses import dataclass, field, replace
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, unquote, urlsplit

from tests.fakes.fake_sgl_omni_audio import (
    encode_with_ffmpeg,
    pcm_mono,
    synthesize_pcm,
    take_level,
    wav_bytes,
)
from tests.fakes.fake_sgl_omni_errors import ApiError, bad_request, service_unavailable
from tests.fakes.fake_sgl_omni_faults import FaultPlan, Faults, looped_pcm, spoken_pcm, voice_map
from tests.fakes.fake_sgl_omni_speech import (
    GenerationPlan,
    PreparedSpeech,
    SpeechContext,
    plan_generation,
    prepare_speech,
)
from tests.fakes.fake_sgl_omni_voices import (
    MAX_VOICE_UPLOAD_BODY_BYTES,
    MAX_VOICE_UPLOAD_BYTES,
    parse_multipart,
)

__all__ = ["FakeServerState", "FakeSwitches", "make_http_server"]

_MIME = {
    "wav": "audio/wav",
    "mp3": "audio/mpeg",
    "flac": "audio/flac",
    "opus": "audio/opus",
    "aac": "audio/aac",
    "pcm": "audio/pcm",
}
_KNOWN_PATHS = {
    "/health": ("GET",),
    "/v1/models": ("GET",),
    "/v1/audio/speech": ("POST",),
    "/v1/audio/voices": ("GET", "POST"),
}
_scheduler_log = logging.getLogger("sglang_omni.scheduling.omni_scheduler")


def _env_float(environ: dict[str, str], name: str, default: float) -> float:
    raw = environ.get(name, "").strip()
    return float(raw) if raw else default


def _env_int(environ: dict[str, str], name: str) -> int | None:
    raw = environ.get(name, "").strip()
    return int(raw) if raw else None


@dataclass(frozen=True, slots=True)
class FakeSwitches:
    """The ``FAKE_SGL_*`` behaviour switches (documented in ``fake_sgl_omni.py``)."""

    boot_delay_s: float = 0.0
    warmup_s: float = 0.2
    crash_during_boot: int | None = None
    crash_detail: str = ""
    crash_after_requests: int | None = None
    crash_on_text: str = ""  # a speech request whose input holds this kills the process (a poison chunk)
    slots: int = 8
    latency_s: float = 0.0
    seconds_per_word: float = 0.3
    kv_capacity: int | None = None
    fail_next_503: int = 0
    queue_limit: int | None = None  # requests waiting for a slot beyond this are refused (503 queue full)
    request_log: Path | None = None
    faults: Faults = field(default_factory=Faults)
    voice: str = "tones"  # or "espeak" / "flite": real words from espeak-ng or flite (voice slt)
    voice_map: dict[str, str] = field(default_factory=dict)  # requested voice -> flite voice (a cast)
    level_spread_db: float = 0.0
    token_s: float = 0.0  # slot time per generated token (a runaway's whole budget holds its slot)

    @classmethod
    def from_environ(cls, environ: dict[str, str]) -> FakeSwitches:
        """Read the switches; unset or empty variables keep the defaults."""
        log = environ.get("FAKE_SGL_REQUEST_LOG", "").strip()
        return cls(
            boot_delay_s=_env_float(environ, "FAKE_SGL_BOOT_DELAY_S", 0.0),
            warmup_s=_env_float(environ, "FAKE_SGL_WARMUP_S", 0.2),
            crash_during_boot=_env_int(environ, "FAKE_SGL_CRASH_DURING_BOOT"),
            crash_detail=environ.get("FAKE_SGL_CRASH_DETAIL", "").strip(),
            crash_after_requests=_env_int(environ, "FAKE_SGL_CRASH_AFTER_REQUESTS"),
            crash_on_text=environ.get("FAKE_SGL_CRASH_ON_TEXT", "").strip(),
            slots=max(_env_int(environ, "FAKE_SGL_SLOTS") or 8, 1),
            latency_s=_env_float(environ, "FAKE_SGL_LATENCY_S", 0.0),
            seconds_per_word=_env_float(environ, "FAKE_SGL_SECONDS_PER_WORD", 0.3),
            kv_capacity=_env_int(environ, "FAKE_SGL_KV_CAPACITY"),
            fail_next_503=_env_int(environ, "FAKE_SGL_FAIL_NEXT_503") or 0,
            queue_limit=_env_int(environ, "FAKE_SGL_QUEUE_LIMIT"),
            request_log=Path(log) if log else None,
            faults=Faults.from_environ(environ),
            voice=environ.get("FAKE_SGL_VOICE", "").strip() or "tones",
            level_spread_db=_env_float(environ, "FAKE_SGL_LEVEL_SPREAD_DB", 0.0),
            voice_map=voice_map(environ.get("FAKE_SGL_VOICE_MAP", "")),
            token_s=_env_float(environ, "FAKE_SGL_TOKEN_S", 0.0),
        )


class FakeServerState:
    """Mutable server state shared by the handler threads; every counter sits behind one lock."""

    def __init__(
        self, *, ctx: SpeechContext, switches: FakeSwitches, model_name: str, stages: tuple[str, ...]
    ) -> None:
        self.ctx = ctx
        self.switches = switches
        self.model_name = model_name
        self.stages = stages
        self.lock = threading.Lock()
        self.slots = threading.Semaphore(switches.slots)
        self.starting = True
        self.total_requests = 0
        self.pending = 0
        self.running = 0
        self.accepted = 0
        self.fail_next_503 = switches.fail_next_503
        self.outcomes: OrderedDict[str, dict[str, object]] = OrderedDict()

    def health(self) -> tuple[int, dict[str, object]]:
        """(status code, body) of ``GET /health``."""
        with self.lock:
            states = {
                name: count for name, count in (("pending", self.pending), ("running", self.running)) if count
            }
            body = {
                "status": "starting" if self.starting else "healthy",
                "running": True,
                "stages": list(self.stages),
                "entry_stage": self.stages[0],
                "total_requests": self.pending + self.running,
                "pending_completions": self.pending + self.running,
                "request_states": states,
                "stream_delivery": {
                    "stream_backlog_bytes": 0,
                    "open_stream_count": 0,
                    "generation_finished_stream_count": 0,
                    "longest_reader_idle_s": 0.0,
                    "failed_stream_count": 0,
                },
            }
        return (503 if self.starting else 200), body

    def log_request_body(self, raw: bytes) -> None:
        """Append the body to FAKE_SGL_REQUEST_LOG as one line (compact JSON when it parses)."""
        path = self.switches.request_log
        if path is None:
            return
        try:
            line = json.dumps(json.loads(raw), ensure_ascii=False, separators=(",", ":"))
        except ValueError:
            line = raw.decode("utf-8", errors="replace").replace("\n", " ")
        with self.lock, path.open("a", encoding="utf-8") as handle:
            handle.write(line + "\n")

    def admit(self, text: str = "") -> None:
        """Admission: the queue-full switch, then the crash switches (which end the process)."""
        with self.lock:
            if self.fail_next_503 > 0:
                self.fail_next_503 -= 1
                raise service_unavailable("The request queue is full.")
            self.accepted += 1
            poison = self.switches.crash_on_text
            if poison and poison in text:
                logging.getLogger("sglang_omni.pipeline.mp_runner").error(
                    "Stage process(es) died: pipeline (exit code -11) [FAKE_SGL_CRASH_ON_TEXT]"
                )
                sys.stderr.flush()
                os._exit(1)
            crash = self.switches.crash_after_requests
            if crash is not None and self.accepted > crash:
                logging.getLogger("sglang_omni.pipeline.mp_runner").error(
                    "Stage process(es) died: pipeline (exit code -9) [FAKE_SGL_CRASH_AFTER_REQUESTS=%d]",
                    crash,
                )
                sys.stderr.flush()
                os._exit(1)

    def remember_outcome(self, request_id: str, outcome: dict[str, object]) -> None:
        """Keep the last 1024 stream outcomes for ``GET /v1/audio/speech/{id}``."""
        with self.lock:
            self.outcomes[request_id] = outcome
            while len(self.outcomes) > 1024:
                self.outcomes.popitem(last=False)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "uvicorn"
    state: FakeServerState  # set on the subclass made by make_http_server

    # -- plumbing ---------------------------------------------------------------------------------

    def version_string(self) -> str:
        return self.server_version

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - stdlib signature
        return

    def log_request(self, code: int | str = "-", size: int | str = "-") -> None:
        status = int(code) if str(code).isdigit() else 0
        phrase = HTTPStatus(status).phrase if status in HTTPStatus._value2member_map_ else ""
        host, port = self.client_address[:2]
        try:
            print(f'INFO:     {host}:{port} - "{self.requestline}" {status} {phrase}', flush=True)
        except OSError:
            return  # stdout closed by the parent: the access line is lost, the response is not

    def _read_body(self) -> bytes:
        if "chunked" in (self.headers.get("transfer-encoding") or "").lower():
            parts = []
            while True:
                size = int(self.rfile.readline().split(b";", 1)[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        continue
                    return b"".join(parts)
                parts.append(self.rfile.read(size))
                self.rfile.readline()
        length = int(self.headers.get("content-length") or 0)
        return self.rfile.read(length) if length > 0 else b""

    def _send(
        self, status: int, body: bytes, content_type: str, headers: dict[str, str] | None = None
    ) -> None:
        self.send_response(status)
        self.send_header("content-type", content_type)
        self.send_header("content-length", str(len(body)))
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _json(self, status: int, payload: object) -> None:
        self._send(status, json.dumps(payload).encode("utf-8"), "application/json")

    def _error(self, exc: ApiError) -> None:
        self._json(exc.status, exc.payload())

    def _route(self, method: str) -> None:
        path = urlsplit(self.path).path
        try:
            if method == "GET" and path == "/health":
                self._json(*self.state.health())
            elif method == "GET" and path == "/v1/models":
                self._models()
            elif method == "POST" and path == "/v1/audio/speech":
                self._speech()
            elif method == "GET" and path.startswith("/v1/audio/speech/"):
                self._stream_outcome(unquote(path.removeprefix("/v1/audio/speech/")))
            elif method == "GET" and path == "/v1/audio/voices":
                self._list_voices()
            elif method == "POST" and path == "/v1/audio/voices":
                self._upload_voice()
            elif method == "DELETE" and path.startswith("/v1/audio/voices/"):
                self._delete_voice(unquote(path.removeprefix("/v1/audio/voices/")))
            elif path in _KNOWN_PATHS:
                self._read_body()
                self._json(405, {"detail": "Method Not Allowed"})
            else:
                self._read_body()
                self._json(404, {"detail": "Not Found"})
        except ApiError as exc:
            self._error(exc)
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True

    def do_GET(self) -> None:  # noqa: N802 - stdlib naming
        self._route("GET")

    def do_POST(self) -> None:  # noqa: N802
        self._route("POST")

    def do_DELETE(self) -> None:  # noqa: N802
        self._route("DELETE")

    def do_PUT(self) -> None:  # noqa: N802
        self._route("PUT")

    # -- routes -----------------------------------------------------------------------------------

    def _models(self) -> None:
        name = self.state.model_name
        card = {
            "id": name,
            "object": "model",
            "created": 0,
            "owned_by": "sglang-omni",
            "permission": [
                {
                    "id": "modelperm-default",
                    "object": "model_permission",
                    "allow_create_engine": False,
                    "allow_sampling": True,
                    "allow_logprobs": True,
                }
            ],
            "root": name,
        }
        self._json(200, {"object": "list", "data": [card]})

    def _speech(self) -> None:
        state = self.state
        raw = self._read_body()
        state.log_request_body(raw)
        request_id = f"speech-{uuid.uuid4()}"
        try:
            payload = json.loads(raw)
        except ValueError:
            raise bad_request("speech request body must be valid JSON") from None
        prepared = prepare_speech(payload, state.ctx)
        state.admit(str(payload.get("input", "")))
        try:
            plan = plan_generation(prepared, state.ctx)
        except ApiError as exc:
            if exc.message.startswith("Request requires more tokens"):
                _scheduler_log.warning("Rejecting request %s before scheduling: %s", request_id, exc.message)
            raise
        pcm, plan = self._generate(prepared, plan)
        family = state.ctx.model.family
        if prepared.stream:
            self._stream(prepared, plan, pcm_mono(pcm, channels=family.channels), request_id)
            return
        self._send_audio(prepared, plan, pcm, request_id)

    def _generate(self, prepared: PreparedSpeech, plan: GenerationPlan) -> tuple[bytes, GenerationPlan]:
        state = self.state
        with state.lock:
            limit = state.switches.queue_limit
            if limit is not None and state.running >= state.switches.slots and state.pending >= limit:
                # The real scheduler's waiting-queue bound (max_queued_requests): refused at once.
                raise service_unavailable("The request queue is full.")
            state.pending += 1
        state.slots.acquire()
        with state.lock:
            state.pending -= 1
            state.running += 1
        try:
            fault = state.switches.faults.plan(prepared.input, prepared.get("seed"))
            pcm, plan = self._speak(prepared, plan, fault)
            # The slot is held while the tokens are generated: a runaway holds it for its whole budget.
            held = state.switches.latency_s + state.switches.token_s * plan.completion_tokens
            if held > 0:
                time.sleep(held)
            return take_level(pcm, prepared.input, state.switches.level_spread_db), plan
        finally:
            with state.lock:
                state.running -= 1
            state.slots.release()

    def _speak(
        self, prepared: PreparedSpeech, plan: GenerationPlan, fault: FaultPlan
    ) -> tuple[bytes, GenerationPlan]:
        switches = self.state.switches
        family = self.state.ctx.model.family
        rate, channels = family.sample_rate_hz, family.channels
        if switches.voice in ("espeak", "flite"):
            flite_voice = switches.voice_map.get(prepared.voice.lower(), "slt")
            if fault.fault == "voice":
                flite_voice = switches.faults.other_voice
            pcm = spoken_pcm(
                fault.text, voice=switches.voice, rate=rate, channels=channels, flite_voice=flite_voice
            )
            pcm = switches.faults.apply(pcm, fault.fault, channels=channels, rate=rate)
            # Real speech sets the tokens: its length at the codec's frame rate, cut at the budget.
            seconds = len(pcm) / (2 * channels * rate)
            needed = math.ceil(seconds * plan.tokens_per_s)
            plan = replace(plan, duration_s=seconds, completion_tokens=needed, finish_reason="stop")
            if fault.fault == "runaway" or needed > plan.max_new_tokens:
                seconds = plan.max_new_tokens / plan.tokens_per_s
                pcm = (
                    looped_pcm(pcm, seconds, rate=rate, channels=channels)
                    if fault.fault == "runaway"
                    else pcm[: int(seconds * rate) * 2 * channels]
                )
                plan = replace(
                    plan, duration_s=seconds, completion_tokens=plan.max_new_tokens, finish_reason="length"
                )
            return pcm, plan
        seconds = plan.duration_s * len(fault.text.split()) / max(len(prepared.input.split()), 1)
        pcm = synthesize_pcm(
            fault.text,
            voice_key=plan.voice_key,
            rate=rate,
            channels=channels,
            seconds_per_word=switches.seconds_per_word,
            duration_s=seconds,
        )
        if fault.fault == "runaway":
            seconds = plan.max_new_tokens / plan.tokens_per_s
            pcm = looped_pcm(pcm, seconds, rate=rate, channels=channels)
            plan = replace(
                plan, duration_s=seconds, completion_tokens=plan.max_new_tokens, finish_reason="length"
            )
        return switches.faults.apply(pcm, fault.fault, channels=channels, rate=rate), plan

    def _send_audio(
        self, prepared: PreparedSpeech, plan: GenerationPlan, pcm: bytes, request_id: str
    ) -> None:
        family = self.state.ctx.model.family
        fmt = prepared.response_format
        if fmt == "wav":
            body = wav_bytes(pcm, rate=family.sample_rate_hz, channels=family.channels)
        elif fmt == "pcm":
            body = pcm_mono(pcm, channels=family.channels)
        else:
            encoded = encode_with_ffmpeg(pcm, rate=family.sample_rate_hz, channels=family.channels, fmt=fmt)
            if encoded is None:
                raise service_unavailable(
                    f"PyAV or pydub is required for response_format='{fmt}'", param="response_format"
                )
            body = encoded
        total = plan.prompt_tokens + plan.completion_tokens
        headers = {
            "content-disposition": f'attachment; filename="speech.{fmt}"',
            "x-request-id": request_id,
            "x-finish-reason": plan.finish_reason,
            "x-prompt-tokens": str(plan.prompt_tokens),
            "x-completion-tokens": str(plan.completion_tokens),
            "x-sglang-omni-input-tokens": str(plan.prompt_tokens),
            "x-sglang-omni-output-tokens": str(plan.completion_tokens),
            "x-sglang-omni-total-tokens": str(total),
        }
        self._send(200, body, _MIME[fmt], headers)

    def _chunk(self, data: bytes) -> None:
        self.wfile.write(f"{len(data):X}\r\n".encode("ascii") + data + b"\r\n")

    def _stream(self, prepared: PreparedSpeech, plan: GenerationPlan, pcm: bytes, request_id: str) -> None:
        family = self.state.ctx.model.family
        sse = prepared.stream_format == "sse"
        self.send_response(200)
        self.send_header("content-type", "text/event-stream" if sse else "audio/pcm")
        self.send_header("transfer-encoding", "chunked")
        for key, value in (
            ("x-sample-rate", str(family.sample_rate_hz)),
            ("x-channels", "1"),
            ("x-bit-depth", "16"),
            ("x-request-id", request_id),
            ("x-sglang-omni-speech-id", request_id),
        ):
            self.send_header(key, value)
        self.end_headers()
        step = family.sample_rate_hz  # half a second of s16le mono
        for start in range(0, len(pcm), step):
            piece = pcm[start : start + step]
            if sse:
                event = {"type": "speech.audio.delta", "audio": base64.b64encode(piece).decode("ascii")}
                piece = f"data: {json.dumps(event)}\n\n".encode()
            self._chunk(piece)
        total = plan.prompt_tokens + plan.completion_tokens
        if sse:
            usage = {
                "input_tokens": plan.prompt_tokens,
                "output_tokens": plan.completion_tokens,
                "total_tokens": total,
            }
            done = {"type": "speech.audio.done", "usage": usage, "finish_reason": plan.finish_reason}
            self._chunk(f"data: {json.dumps(done)}\n\n".encode())
        self.wfile.write(b"0\r\n\r\n")
        self.state.remember_outcome(
            request_id,
            {
                "request_id": request_id,
                "finish_reason": plan.finish_reason,
                "usage": {
                    "prompt_tokens": plan.prompt_tokens,
                    "completion_tokens": plan.completion_tokens,
                    "total_tokens": total,
                    "engine_time_s": self.state.switches.latency_s,
                },
            },
        )

    def _stream_outcome(self, request_id: str) -> None:
        with self.state.lock:
            outcome = self.state.outcomes.get(request_id)
        if outcome is None:
            self._json(404, {"detail": f"No finished speech stream with request id {request_id}"})
        else:
            self._json(200, outcome)

    def _list_voices(self) -> None:
        query = parse_qs(urlsplit(self.path).query)
        raw = (query.get("names_only") or ["false"])[-1].lower()
        if raw not in ("true", "1", "yes", "on", "false", "0", "no", "off"):
            self._json(
                422,
                {
                    "detail": [
                        {
                            "type": "bool_parsing",
                            "loc": ["query", "names_only"],
                            "msg": "Input should be a valid boolean, unable to interpret input",
                            "input": raw,
                        }
                    ]
                },
            )
            return
        voices = self.state.ctx.voices
        if raw in ("true", "1", "yes", "on"):
            self._json(200, {"uploaded_voice_names": voices.names()})
            return
        model = self.state.ctx.model
        self._json(200, voices.list_response(model.speakers if model.custom_voice else None))

    def _upload_voice(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        if length > MAX_VOICE_UPLOAD_BODY_BYTES:
            self.close_connection = True
            raise ApiError(
                f"request body must be at most {MAX_VOICE_UPLOAD_BODY_BYTES} bytes",
                status=413,
                error_type="RequestTooLargeError",
                param="audio_sample",
                code=413,
            )
        fields = parse_multipart(self.headers.get("content-type") or "", self._read_body()) or {}
        missing = [
            name
            for name in ("audio_sample", "consent", "name")
            if name not in fields or (name != "audio_sample" and fields[name].value == b"")
        ]
        if missing:
            detail = [
                {"type": "missing", "loc": ["body", name], "msg": "Field required", "input": None}
                for name in missing
            ]
            self._json(422, {"detail": detail})
            return
        sample = fields["audio_sample"]
        if sample.filename is None:
            self._json(
                422,
                {
                    "detail": [
                        {
                            "type": "value_error",
                            "loc": ["body", "audio_sample"],
                            "msg": "Value error, Expected UploadFile, received: <class 'str'>",
                            "input": sample.text,
                        }
                    ]
                },
            )
            return
        if len(sample.value) > MAX_VOICE_UPLOAD_BYTES:
            raise bad_request(
                f"audio_sample must be at most {MAX_VOICE_UPLOAD_BYTES} bytes", param="audio_sample"
            )
        optional = {
            name: fields[name].text if name in fields else None
            for name in ("ref_text", "speaker_description")
        }
        body = self.state.ctx.voices.upload(
            name=fields["name"].text,
            consent=fields["consent"].text,
            audio=sample.value,
            filename=sample.filename,
            content_type=sample.content_type,
            **optional,
        )
        self._json(200, body)

    def _delete_voice(self, name: str) -> None:
        if self.state.ctx.voices.delete(name):
            self._json(200, {"success": True, "message": f"Voice '{name}' deleted successfully"})
        else:
            self._json(404, {"success": False, "error": f"Voice '{name}' not found"})


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 256


def make_http_server(host: str, port: int, state: FakeServerState) -> ThreadingHTTPServer:
    """Bind (SO_REUSEADDR, like uvicorn) and return the server; raises OSError when the port is taken."""
    handler = type("FakeSglOmniHandler", (_Handler,), {"state": state})
    return _Server((host, port), handler)
