"""Run the real `sgl-omni serve` parser and config loader, stopped just before launch.

Executed by the contract venv's Python (never imported by our own code):

    <contract-venv>/bin/python run_serve_parser.py serve --model-path ... [--config ...] ...
    <contract-venv>/bin/python run_serve_parser.py --batch cases.json

The argv is an `sgl-omni` command line minus the executable. It goes to the
real Typer app of sglang-omni 0.1.9 (`sglang_omni.cli:app`), so everything
the real command does before it launches runs as shipped: flag parsing (Click
exits 2 on a bad flag), the config file loader (`ConfigManager.from_file`),
the dotted per-stage overrides, the `--mem-fraction-static` broadcast, schema
validation, and the media and batch-size validators that build the launch
keywords. Only `sglang_omni.cli.serve.launch_server` is replaced: instead of
starting stage processes on a GPU it prints one line, MARKER + JSON, and
exits 0. The JSON holds the resolved config as a config file spells it
(`dump_user_config`), the same dump of the class defaults for the same
model_path, the launch keywords, and the real placement planner's per-GPU
budget sums (`build_stage_placement_plan`, the runner's first step, which
refuses a card whose stage fractions add up past 1.0).

`--batch FILE` runs many command lines in one process (the imports take a few
seconds) and prints one JSON object per case: id, exit_code, stdout, stderr.
"""

from __future__ import annotations

import contextlib
import io
import json
import sys
from typing import NoReturn

__all__ = ["MARKER", "main", "run_batch", "run_one"]

MARKER = "OMNI_WEB_RESOLVED_CONFIG "


def _stages_by_name(config: object) -> dict[str, object]:
    from sglang_omni.config.sources import dump_user_config

    return dump_user_config(config)["stages"]


def _placement(pipeline_config: object) -> dict[str, object]:
    """The real placement planner's per-GPU budget sums, or the error it raises.

    It is the first thing the launcher's runner does with the config (before any
    process or GPU is touched), and where an over-budget card is refused.
    """
    from sglang_omni.config.placement import build_stage_placement_plan

    try:
        plan = build_stage_placement_plan(pipeline_config)
    except ValueError as exc:
        return {"error": str(exc)}
    return {
        "gpus": {
            str(gpu_id): {
                "stages": list(gpu.stage_names),
                "total_gpu_memory_fraction": gpu.total_gpu_memory_fraction,
            }
            for gpu_id, gpu in plan.gpus.items()
        }
    }


def _capture_launch(pipeline_config: object, **launch_kwargs: object) -> NoReturn:
    """Stand-in for `launch_server`: report what would have launched, then stop."""
    config_cls = type(pipeline_config)
    report = {
        "placement": _placement(pipeline_config),
        "config_cls": config_cls.__name__,
        "model_path": pipeline_config.model_path,
        "name": pipeline_config.name,
        "stages": _stages_by_name(pipeline_config),
        "default_stages": _stages_by_name(config_cls(model_path=pipeline_config.model_path)),
        "launch": dict(launch_kwargs),
    }
    sys.stdout.write(MARKER + json.dumps(report, sort_keys=True, default=str) + "\n")
    sys.stdout.flush()
    raise SystemExit(0)


def run_one(argv: list[str]) -> int:
    """Run `sgl-omni <argv>` with launching replaced; return the exit code."""
    import sglang_omni.cli.serve as serve_module
    from sglang_omni.cli import app

    serve_module.launch_server = _capture_launch
    try:
        app(list(argv), prog_name="sgl-omni")
    except SystemExit as exc:
        code = exc.code
        return code if isinstance(code, int) else (0 if code is None else 1)
    except Exception as exc:  # noqa: BLE001 - an uncaught error is exit 1, as in the real CLI
        sys.stderr.write(f"{type(exc).__name__}: {exc}\n")
        return 1
    return 0


def run_batch(cases: list[dict[str, object]]) -> list[dict[str, object]]:
    """Run each `{"id", "argv"}` case, capturing its exit code and output."""
    results = []
    for case in cases:
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = run_one([str(arg) for arg in case["argv"]])
        results.append(
            {"id": case["id"], "exit_code": code, "stdout": out.getvalue(), "stderr": err.getvalue()}
        )
    return results


def main(argv: list[str]) -> int:
    """Entry point: one command line, or `--batch FILE`."""
    if argv[:1] == ["--batch"]:
        with open(argv[1], encoding="utf-8") as handle:
            cases = json.load(handle)
        for result in run_batch(cases):
            sys.__stdout__.write(json.dumps(result) + "\n")
        return 0
    return run_one(argv)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
