"""Fixtures of the contract tier: the cached sglang-omni venv and runs of the real CLI in it.

The venv is built on first use (`setup_env.ensure_contract_venv`, about 1.5 minutes cold, under a
second when cached). If it cannot be built the tests fail with the build log's tail, so CI cannot
pass without the contract tier; `OMNI_WEB_SKIP_CONTRACT=1` skips them instead (quick local runs).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.contract.fake_hub import write_fake_hub
from tests.contract.setup_env import (
    HARNESS_DIR,
    ContractVenv,
    ContractVenvError,
    ensure_contract_venv,
    harness_env,
)

PARSER = HARNESS_DIR / "run_serve_parser.py"
MARKER = "OMNI_WEB_RESOLVED_CONFIG "
_BOX = re.compile(r"[│╭╮╰╯─┃━┏┓┗┛]")


@dataclass(frozen=True, slots=True)
class ParseResult:
    """One run of the real `sgl-omni serve` parser, stopped before launch."""

    exit_code: int
    stdout: str
    stderr: str

    @property
    def report(self) -> dict:
        """The resolved config the harness printed (exit 0 only)."""
        for line in self.stdout.splitlines():
            if line.startswith(MARKER):
                return json.loads(line[len(MARKER) :])
        raise AssertionError(f"no resolved config in output (exit {self.exit_code}):\n{self.stderr[-3000:]}")

    @property
    def error_text(self) -> str:
        """stderr with Rich's box drawing removed and whitespace collapsed, for message checks."""
        return " ".join(_BOX.sub(" ", self.stderr).split())


@pytest.fixture(scope="session")
def contract_venv() -> ContractVenv:
    """The contract venv, built now if this machine has no finished build for its key."""
    if os.environ.get("OMNI_WEB_SKIP_CONTRACT") == "1":
        pytest.skip("OMNI_WEB_SKIP_CONTRACT=1: contract tier skipped")
    try:
        return ensure_contract_venv()
    except ContractVenvError as exc:
        pytest.fail(str(exc), pytrace=False)


@pytest.fixture(scope="session")
def contract_env(contract_venv: ContractVenv, tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """Environment for a contract run: stubs on the path, an offline fake hub, a private voices dir."""
    home = tmp_path_factory.mktemp("contract-home")
    env = harness_env()
    env.update(
        HF_HOME=str(write_fake_hub(home / "hf")),
        HF_HUB_OFFLINE="1",
        TRANSFORMERS_OFFLINE="1",
        HF_HUB_DISABLE_TELEMETRY="1",
        SPEAKER_SAMPLES_DIR=str(home / "speakers"),
        HOME=str(home),
        NO_COLOR="1",
    )
    return env


def run_serve_parser(
    venv: ContractVenv, env: dict[str, str], cases: dict[str, list[str]]
) -> dict[str, ParseResult]:
    """Run each argv (an `sgl-omni` command line minus the executable) through the real parser.

    All cases share one process (`--batch`), so the imports are paid once.
    """
    with tempfile.NamedTemporaryFile("w", suffix=".json", dir=env["HOME"], delete=False) as handle:
        json.dump([{"id": key, "argv": argv} for key, argv in cases.items()], handle)
    try:
        done = subprocess.run(  # noqa: S603 - argv list
            [str(venv.python), str(PARSER), "--batch", handle.name],
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
    finally:
        Path(handle.name).unlink()
    assert done.returncode == 0, f"parser harness crashed:\n{done.stderr[-4000:]}"
    results = {}
    for line in done.stdout.splitlines():
        if line.startswith("{"):
            item = json.loads(line)
            results[item["id"]] = ParseResult(item["exit_code"], item["stdout"], item["stderr"])
    assert set(results) == set(cases), f"missing results: {set(cases) - set(results)}"
    return results
