"""Start the real sglang-omni 0.1.9 server with the GPU pipeline replaced by the stub.

Executed by the contract venv's Python (never imported by our own code):

    <contract-venv>/bin/python run_app.py serve --model-path ... [--config ...] --host 127.0.0.1 --port N

The argv is an `sgl-omni` command line minus the executable, e.g. what our
serve builder (`omni_web.server.spec.build_argv`) produces, less argv[0].

This is `sgl-omni serve` itself: the real Typer command parses the argv, loads
the config, and calls the real `launch_server`, which checks the port, builds
the real `Client` and `create_app`, runs uvicorn, and sends the pipeline's own
warmup requests. The only difference is `stub_pipeline.install()`, which puts
`StubPipelineRunner` where the launcher imports `MultiProcessPipelineRunner`
from, so no stage process and no GPU is needed (see `stub_pipeline.py`).

Environment the tests set: `HF_HOME` + `HF_HUB_OFFLINE=1` (a fake hub cache
with the checkpoint `config.json` files the config classes read),
`SPEAKER_SAMPLES_DIR` (uploaded voices), and optionally
`CONTRACT_STUB_KV_CAPACITY` (the KV capacity the stub scheduler admits against).
"""

from __future__ import annotations

import sys
from pathlib import Path

__all__ = ["main"]


def main(argv: list[str]) -> int:
    """Run `sgl-omni <argv>` on the stub pipeline until stopped; return the exit code."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import stub_pipeline

    stub_pipeline.install()
    from sglang_omni.cli import app

    try:
        app(list(argv), prog_name="sgl-omni")
    except SystemExit as exc:
        code = exc.code
        return code if isinstance(code, int) else (0 if code is None else 1)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
