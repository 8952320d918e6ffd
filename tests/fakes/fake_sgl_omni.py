#!/usr/bin/env python3
"""A test double for the real ``sgl-omni`` executable and server (sglang-omni 0.1.9).

Run it like the real one::

    python tests/fakes/fake_sgl_omni.py serve --model-path Qwen/Qwen3-TTS-12Hz-0.6B-CustomVoice \
        --host 127.0.0.1 --port 8100 [--config configs/qwen3_tts.yaml] [--<stage>.<group>.<field> V]...
    python tests/fakes/fake_sgl_omni.py check-gpu --json

It follows ``shared/docs/sglang-omni-api.md`` (1.2, 1.4, 1.5, 2.1-2.8, 3, 6, appendix): the same
flags and error texts (``Error: Invalid value: ...``, exit 2), the port check with its fallback
WARNINGs before "loading", no listener while loading, ``/health`` 503 ``starting`` then 200
``healthy``, the boot log lines, SIGTERM death by signal 15, SIGINT exit 0, and the speech, voices
and models endpoints with the real validation order, texts and status codes. No GPU, no model.

Which model: ``--model-path`` (or the config's ``model_path``) is looked up with
``omni_web.catalog.entry_for_repo``. A local directory names its model through ``config.json``:
``{"omni_web_fake_repo": "<repo id>"}`` (checked first), else a Hugging Face cache path segment
``models--Org--Name``, else the real keys (``architectures``, ``model_type``; for Qwen3-TTS also
``tts_model_type`` and ``talker_config.spk_id``). Anything else fails like the real server:
``Could not resolve model architecture for '<path>'`` with a traceback, exit 1.

Behaviour switches (environment variables, all optional):

``FAKE_SGL_BOOT_DELAY_S``          seconds of "model loading" before the port listens (default 0)
``FAKE_SGL_WARMUP_S``              seconds /health answers 503 ``starting`` after listening (default
                                   0.2; 0 with ``--skip-server-warmup``)
``FAKE_SGL_CRASH_DURING_BOOT=N``   after the boot delay, log ``Process pipeline died during startup
                                   (exit code N)`` + ``Startup failure detail:`` and exit 1
``FAKE_SGL_CRASH_DETAIL``          last line of that detail (default: a simulated RuntimeError)
``FAKE_SGL_CRASH_AFTER_REQUESTS=n``  the (n+1)-th speech request that passes validation kills the
                                   process at once (``os._exit(1)``), unanswered: a mid-job crash
``FAKE_SGL_CRASH_ON_TEXT=words``   a speech request whose input contains ``words`` kills the process
                                   the same way, every time (a poison chunk the model cannot say)
``FAKE_SGL_SLOTS=B``               speech requests generated at once; more wait (default: the config's
                                   ``engine.max_running_requests``, else 8)
``FAKE_SGL_QUEUE_LIMIT=Q``         at most Q requests wait for a slot; more get 503 ``The request queue
                                   is full.`` at once (default: ``engine.max_queued_requests``, else none)
``FAKE_SGL_LATENCY_S``             generation time per request, while holding a slot (default 0)
``FAKE_SGL_SECONDS_PER_WORD``      audio seconds per input word (default 0.3)
``FAKE_SGL_KV_CAPACITY=C``         thinker KV capacity for every family (default: Higgs 4095,
                                   others unlimited); see ``fake_sgl_omni_speech`` for the token model
``FAKE_SGL_FAIL_NEXT_503=n``       the next n valid speech requests get 503 ``The request queue is full.``
``FAKE_SGL_REQUEST_LOG=path``      append every speech request body (compact JSON) as one line
``FAKE_SGL_FAULTS=cut,silent,loop,drop,shuffle,gap,repeat,babble``  faulty 200 answers (see
                                   ``fake_sgl_omni_faults``): cut to a third, silent, looped x3, a
                                   third of the words left out, words shuffled, 8 consecutive words
                                   left out / said twice / babble appended (``FAKE_SGL_FAULT_WORDS``);
                                   on ``FAKE_SGL_FAULT_SHARE`` (0..1) of requests
``FAKE_SGL_FAULT_LOG=path``        append {input, attempt, seed, fault} per speech request
``FAKE_SGL_VOICE=espeak|flite``    speak with espeak-ng or flite ``slt`` (real words) instead of tone bursts
``FAKE_SGL_VOICE_MAP=A:slt,B:rms``  requested voices read by flite voices of their own (a cast)
``FAKE_SGL_FAULTS=voice,fast,slow,runaway``  reading faults: another flite voice
                                   (``FAKE_SGL_FAULT_VOICE``, default rms), read ``FAKE_SGL_FAULT_TEMPO``
                                   (1.4) times faster or slower, or looping to ``max_new_tokens``
``FAKE_SGL_TOKEN_S``               slot time per generated token (default 0), added to the latency
``FAKE_SGL_LEVEL_SPREAD_DB=S``     takes come back at uneven levels, like real TTS: each request's
                                   gain is picked from its text over -S..0 dB (default 0: all equal)
Real variables honoured: ``SGLANG_OMNI_STRICT_PORT=1``, ``SPEAKER_SAMPLES_DIR`` (voices persist
there as JSON + audio files; unset = memory only), ``SPEAKER_MAX_UPLOADED``.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import os
import signal
import socket
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.fakes.fake_sgl_omni_cli import (  # noqa: E402 - after the repo root is importable
    BadParameter,
    ServeOptions,
    StageSettings,
    UsageError,
    load_config_file,
    pair_extra_args,
    parse_serve_argv,
    resolve_settings,
    validate_media_path,
)
from tests.fakes.fake_sgl_omni_http import FakeServerState, FakeSwitches, make_http_server  # noqa: E402
from tests.fakes.fake_sgl_omni_media import MediaPolicy  # noqa: E402
from tests.fakes.fake_sgl_omni_models import (  # noqa: E402
    Family,
    ResolvedModel,
    family_for_config_cls,
    resolve_model_path,
)
from tests.fakes.fake_sgl_omni_speech import SpeechContext  # noqa: E402
from tests.fakes.fake_sgl_omni_voices import VoiceStore  # noqa: E402

__all__ = ["main"]

_launcher_log = logging.getLogger("sglang_omni.serve.launcher")
_runner_log = logging.getLogger("sglang_omni.pipeline.mp_runner")
_TRACE_HEAD = (
    "Traceback (most recent call last):\n"
    '  File "/opt/sglang-omni/bin/sgl-omni", line 8, in <module>\n    sys.exit(app())\n'
)
_SITE = "/opt/sglang-omni/lib/python3.12/site-packages/sglang_omni"
_LAUNCH_FRAMES = (
    f'  File "{_SITE}/cli/serve.py", line 577, in serve\n    launch_server(\n'
    f'  File "{_SITE}/serve/launcher.py", line 621, in run_server\n'
)


class _Stop:
    """Why the process was asked to stop (set from signal handlers)."""

    def __init__(self) -> None:
        self.event = threading.Event()
        self.signal: int | None = None

    def handler(self, signum: int, _frame: object) -> None:
        if signum == signal.SIGTERM:
            _launcher_log.warning("Received SIGTERM, stopping the pipeline")
        self.signal = self.signal or signum
        self.event.set()

    def wait(self, seconds: float) -> bool:
        """Sleep up to ``seconds``; True when a stop was requested."""
        deadline = time.monotonic() + seconds
        while not self.event.is_set():
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            self.event.wait(min(left, 0.1))
        return True


def _usage_error(exc: UsageError, command: str = "serve") -> int:
    text = f"Invalid value: {exc}" if isinstance(exc, BadParameter) else str(exc)
    sys.stderr.write(f"Usage: sgl-omni {command} [OPTIONS]\nTry 'sgl-omni {command} --help' for help.\n\n"
                     f"Error: {text}\n")
    return 2


def _traceback_exit(frames: str, error: str) -> int:
    sys.stderr.write(_TRACE_HEAD + frames + error + "\n")
    sys.stderr.flush()
    return 1


def _find_port(host: str, port: int) -> int | None:
    """The launcher's probe: SO_REUSEADDR test bind, fallback port or None under strict mode."""
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            probe.bind((host, port))
            return port
    except OSError:
        if os.environ.get("SGLANG_OMNI_STRICT_PORT", "").strip() == "1":
            return None
    _launcher_log.warning(f"Port {port} is already in use on {host}.")
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind((host, 0))
        free = probe.getsockname()[1]
    _launcher_log.warning(f"Using port {free} instead.")
    return free


def _boot_failure(model: ResolvedModel, settings: StageSettings) -> str | None:
    """A startup death the real stack would hit with these settings (fake texts), or None."""
    family = model.family
    engine = family.engine_stage
    if family.factory_max_new_tokens is None and settings.get(engine, "factory",
                                                              "max_new_tokens") is not None:
        return f"TypeError: {family.package} {engine} factory does not accept a 'max_new_tokens' parameter"
    fraction = settings.explicit_mem_fraction.get(engine)
    if family.max_mem_fraction is not None and fraction is not None and fraction > family.max_mem_fraction:
        return (
            f"RuntimeError: {engine} mem_fraction_static={fraction:.3f} leaves no memory for the colocated "
            f"stages (budget {family.max_mem_fraction:.2f})"
        )
    return None


def _placement_error(family: Family, settings: StageSettings) -> str | None:
    totals: dict[int, float] = {}
    defaults = dict(family.stage_fractions)
    for stage in family.stages:
        fraction = settings.get(stage, "", "gpu_memory_fraction", defaults.get(stage))
        gpus = settings.get(stage, "", "gpu", 0)
        for gpu in gpus if isinstance(gpus, list) else [gpus]:
            if isinstance(fraction, int | float) and isinstance(gpu, int):
                totals[gpu] = totals.get(gpu, 0.0) + float(fraction)
    for gpu, total in sorted(totals.items()):
        if total > 1.0 + 1e-9:
            return (
                f"ValueError: GPU {gpu} total_gpu_memory_fraction={total:.3f} exceeds placement limit 1.000"
            )
    return None


def _startup_crash(exit_code: int, detail: str) -> int:
    frames = _LAUNCH_FRAMES + (
        f'    await mp_runner.start(timeout=startup_timeout)\n  File "{_SITE}/pipeline/mp_runner.py", '
        "line 868, in start\n    raise RuntimeError(\n"
    )
    inner = (
        "Traceback (most recent call last):\n"
        f'  File "{_SITE}/pipeline/stage_workers.py", '
        "line 231, in run_stage_process\n    executor = factory(**factory_kwargs)\n" + detail
    )
    return _traceback_exit(
        frames,
        f"RuntimeError: Process pipeline died during startup (exit code {exit_code})\n"
        f"Startup failure detail:\n{inner}",
    )


def _log_started(model: ResolvedModel, name: str, port: int) -> None:
    family = model.family
    _runner_log.info(
        "MultiProcessPipelineRunner started: %d stage(s), %d process(es)",
        len(family.stages),
        family.processes,
    )
    placement = {
        "topology": family.config_cls,
        "pipeline": name,
        "gpus": {0: {"hardware": "fake (no GPU)", "stages": list(family.stages)}},
    }
    _launcher_log.info(f"Resolved placement/topology plan: placement={placement}")
    capabilities = {
        "architecture": family.architecture,
        "batch_vocoder": True,
        "breakable_prefill_cuda_graph": False,
        "cuda_graph": True,
        "full_prefill_cuda_graph": False,
        "reference_audio": family.package != "voxtral_tts",
        "streaming_vocoder": True,
        "torch_compile": False,
    }
    _launcher_log.info("Model capabilities: %s", json.dumps(capabilities, sort_keys=True))
    _launcher_log.info("Pipeline '%s' started (%d GPU(s))", name, 1)


def _uvicorn(line: str) -> None:
    sys.stderr.write(f"INFO:     {line}\n")
    sys.stderr.flush()


def _shutdown(stop: _Stop, server: object | None) -> int:
    if stop.signal == signal.SIGINT and server is not None:
        for line in (
            "Shutting down",
            "Waiting for application shutdown.",
            "Application shutdown complete.",
            f"Finished server process [{os.getpid()}]",
        ):
            _uvicorn(line)
    _launcher_log.info("Shutting down pipeline …")
    _launcher_log.info("Pipeline stopped.")
    sys.stderr.flush()
    sys.stdout.flush()
    if stop.signal == signal.SIGTERM:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        signal.raise_signal(signal.SIGTERM)
    os._exit(0)


def _warm_up(state: FakeServerState, seconds: float, announce: bool) -> None:
    started = time.perf_counter()
    time.sleep(seconds)
    with state.lock:
        state.starting = False
    if announce:
        _launcher_log.info(
            f"Server warmup of 1 request(s) finished in {time.perf_counter() - started:.1f} s; "
            "the server is ready"
        )


def _engine_width(switches: FakeSwitches, model: ResolvedModel, settings: StageSettings) -> FakeSwitches:
    """The engine's batch width and queue bound from the config (``engine.max_running_requests``,
    ``engine.max_queued_requests``) unless FAKE_SGL_SLOTS / FAKE_SGL_QUEUE_LIMIT set them."""
    engine = model.family.engine_stage
    running = settings.get(engine, "engine", "max_running_requests")
    queued = settings.get(engine, "engine", "max_queued_requests")
    if not os.environ.get("FAKE_SGL_SLOTS", "").strip() and isinstance(running, int) and running > 0:
        switches = dataclasses.replace(switches, slots=running)
    if switches.queue_limit is None and isinstance(queued, int) and queued >= 0:
        switches = dataclasses.replace(switches, queue_limit=queued)
    return switches


def _run(opts: ServeOptions, model: ResolvedModel, settings: StageSettings, media: MediaPolicy) -> int:
    switches = _engine_width(FakeSwitches.from_environ(dict(os.environ)), model, settings)
    stop = _Stop()
    signal.signal(signal.SIGTERM, stop.handler)
    signal.signal(signal.SIGINT, stop.handler)
    port = _find_port(opts.host, opts.port)
    if port is None:
        frames = _LAUNCH_FRAMES + "    port = find_available_port(host, port)\n"
        return _traceback_exit(
            frames,
            f"RuntimeError: port {opts.port} is already in use on {opts.host} and "
            "SGLANG_OMNI_STRICT_PORT=1 forbids falling back",
        )
    if stop.wait(switches.boot_delay_s):
        return _shutdown(stop, None)
    if switches.crash_during_boot is not None:
        return _startup_crash(
            switches.crash_during_boot,
            switches.crash_detail or "RuntimeError: simulated stage failure (FAKE_SGL_CRASH_DURING_BOOT)",
        )
    failure = _boot_failure(model, settings)
    if failure is not None:
        return _startup_crash(1, failure)
    placement = _placement_error(model.family, settings)
    if placement is not None:
        return _traceback_exit(
            _LAUNCH_FRAMES + "    await mp_runner.start(timeout=startup_timeout)\n", placement
        )
    name = settings.name or model.model_path
    _log_started(model, name, port)
    family = model.family
    voices_dir = os.environ.get("SPEAKER_SAMPLES_DIR", "").strip()
    voices = VoiceStore(
        Path(voices_dir).expanduser().resolve() if voices_dir else None,
        max_uploaded=int(os.environ.get("SPEAKER_MAX_UPLOADED") or 1000),
    )
    factory_cap = settings.get(
        family.engine_stage, "factory", "max_new_tokens", family.factory_max_new_tokens
    )
    ctx = SpeechContext(
        model=model,
        media=media,
        voices=voices,
        factory_max_new_tokens=factory_cap if isinstance(factory_cap, int) else None,
        kv_capacity=switches.kv_capacity or family.default_kv_capacity,
        seconds_per_word=switches.seconds_per_word,
    )
    state = FakeServerState(
        ctx=ctx, switches=switches, model_name=opts.model_name or name, stages=family.stages
    )
    _uvicorn(f"Started server process [{os.getpid()}]")
    _uvicorn("Waiting for application startup.")
    _uvicorn("Application startup complete.")
    try:
        server = make_http_server(opts.host, port, state)
    except OSError as exc:
        sys.stderr.write(
            f"ERROR:    [Errno {exc.errno}] error while attempting to bind on address "
            f"('{opts.host}', {port}): {exc.strerror.lower() if exc.strerror else exc}\n"
        )
        _launcher_log.info("Shutting down pipeline …")
        _launcher_log.info("Pipeline stopped.")
        return 1
    _uvicorn(f"Uvicorn running on http://{opts.host}:{port} (Press CTRL+C to quit)")
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.1}, daemon=True).start()
    warm = 0.0 if opts.skip_server_warmup else switches.warmup_s
    announce = family.package == "qwen3_tts" and not opts.skip_server_warmup
    threading.Thread(target=_warm_up, args=(state, warm, announce), daemon=True).start()
    while not stop.wait(3600):
        continue
    return _shutdown(stop, server)


def _resolve(opts: ServeOptions) -> tuple[ResolvedModel, dict[str, object] | None] | int:
    """The model and the config file data, or an exit code after printing the failure."""
    if opts.colocate and opts.text_only:
        raise BadParameter("--colocate cannot be combined with --text-only")
    if opts.colocate and not opts.config:
        raise BadParameter("--colocate requires --config")
    if opts.config and opts.variant is not None:
        raise BadParameter("--variant cannot be combined with --config")
    file_data: dict[str, object] | None = None
    if opts.config:
        file_data = load_config_file(opts.config)
        family = family_for_config_cls(str(file_data["config_cls"]))
        if family is None:
            raise BadParameter(
                f"Config class {file_data['config_cls']} not found in the pipeline config registry"
            )
        model_path = opts.model_path or file_data.get("model_path")
        if not isinstance(model_path, str):
            raise BadParameter(
                f"1 validation error for {family.config_cls}\nmodel_path\n  Field required "
                "[type=missing, input_value={}, input_type=dict]"
            )
        model = resolve_model_path(model_path, family=family)
        assert model is not None
        return model, file_data
    if opts.model_path is None:
        raise BadParameter("--model-path is required unless --config is set")
    model = resolve_model_path(opts.model_path)
    if model is None:
        frames = (
            f'  File "{_SITE}/cli/serve.py", line 520, in serve\n'
            "    config_manager = ConfigManager.from_model_path(model_path)\n"
            f'  File "{_SITE}/config/manager.py", line 74, in resolve_config_cls_for_model_path\n'
            "    raise ValueError(\n"
        )
        return _traceback_exit(
            frames, f"ValueError: Could not resolve model architecture for {opts.model_path!r}"
        )
    if opts.variant is not None and opts.variant not in model.family.variants:
        available = ", ".join(sorted(model.family.variants)) or "none"
        raise BadParameter(
            f"Unknown variant '{opts.variant}' for {model.family.config_cls}. Available variants: {available}"
        )
    return model, None


def serve(argv: list[str]) -> int:
    """``sgl-omni serve``: validate like the real CLI, then boot and serve until a signal."""
    try:
        opts = parse_serve_argv(argv)
    except UsageError as exc:
        return _usage_error(exc)
    if opts.help:
        print("Usage: sgl-omni serve [OPTIONS]\n\n  Serve the pipeline (fake sglang-omni 0.1.9 for tests).")
        return 0
    logging.basicConfig(
        level=getattr(logging, opts.log_level.upper()),
        stream=sys.stderr,
        format="%(asctime)s [%(levelname)s] %(name)s: %(message)s",
    )
    try:
        resolved = _resolve(opts)
        if isinstance(resolved, int):
            return resolved
        model, file_data = resolved
        pairs = pair_extra_args(opts.extra)
        settings = resolve_settings(
            model.family, file_data=file_data, pairs=pairs, mem_fraction_static=opts.mem_fraction_static
        )
        media = MediaPolicy(
            allowed_local_media_path=validate_media_path(opts.allowed_local_media_path),
            allowed_media_domains=tuple(
                part.strip().lower()
                for value in opts.allowed_media_domain
                for part in value.split(",")
                if part.strip()
            ),
        )
        if opts.tts_batch_max_items < 1:
            raise BadParameter("tts batch max items must be greater than 0")
    except UsageError as exc:
        return _usage_error(exc)
    return _run(opts, model, settings, media)


def check_gpu(argv: list[str]) -> int:
    """``sgl-omni check-gpu [--json] [--strict]`` on a machine without CUDA."""
    report = {
        "schema_version": 1,
        "environment": {
            "cuda_visible_devices": os.environ.get("CUDA_VISIBLE_DEVICES"),
            "driver_version": None,
            "cuda_driver_api_version": None,
            "cuda_runtime_version": None,
            "pytorch_version": None,
            "pytorch_cuda_build": None,
            "cuda_available": False,
            "logical_device_count": 0,
        },
        "gpus": [],
        "backends": [],
        "warnings": ["CUDA is not available (fake sgl-omni: no GPU)"],
    }
    if "--json" in argv:
        print(json.dumps(report, indent=2, sort_keys=True))
    else:
        print("GPU diagnostics (fake sgl-omni)\n  CUDA available: no\n  GPUs: none")
    return 1 if "--strict" in argv else 0


def main(argv: list[str]) -> int:
    """Dispatch ``serve`` and ``check-gpu`` like the Typer app."""
    if not argv or argv[0] in ("--help", "-h"):
        sys.stderr.write("Usage: sgl-omni [OPTIONS] COMMAND [ARGS]...\n\nCommands: serve, check-gpu\n")
        return 0 if argv else 2
    command, rest = argv[0], argv[1:]
    if command == "serve":
        return serve(rest)
    if command == "check-gpu":
        return check_gpu(rest)
    sys.stderr.write(
        "Usage: sgl-omni [OPTIONS] COMMAND [ARGS]...\nTry 'sgl-omni --help' for help.\n\n"
        f"Error: No such command '{command}'.\n"
    )
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
