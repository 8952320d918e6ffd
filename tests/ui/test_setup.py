"""Setup tab handlers through gradio_client: the report, and Install / Repair with a live log
(pip installs a tiny stand-in ``sglang-omni 0.1.9`` wheel from a local folder, offline)."""

from __future__ import annotations

import shutil
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from omni_web.backend import BackendState, probe_backend
from omni_web.catalog import SGLANG_OMNI_VERSION
from omni_web.runstate import RunState
from omni_web.ui.context import TASK_BACKEND
from tests.ui.conftest import RunningApp, launch_app
from tests.ui.helpers import wait_for


def _stand_in_wheel(folder: Path) -> Path:
    """A minimal pure-Python wheel named sglang-omni at the pinned version."""
    folder.mkdir(parents=True, exist_ok=True)
    wheel = folder / f"sglang_omni-{SGLANG_OMNI_VERSION}-py3-none-any.whl"
    dist = f"sglang_omni-{SGLANG_OMNI_VERSION}.dist-info"
    files = {
        "sglang_omni/__init__.py": "VERSION = 'stand-in'\n",
        f"{dist}/METADATA": f"Metadata-Version: 2.1\nName: sglang-omni\nVersion: {SGLANG_OMNI_VERSION}\n",
        f"{dist}/WHEEL": "Wheel-Version: 1.0\nGenerator: omni-web-tests\nRoot-Is-Purelib: true\nTag: "
                         "py3-none-any\n",
    }
    record = "".join(f"{name},,\n" for name in files) + f"{dist}/RECORD,,\n"
    with zipfile.ZipFile(wheel, "w") as archive:
        for name, text in files.items():
            archive.writestr(name, text)
        archive.writestr(f"{dist}/RECORD", record)
    return wheel


@pytest.fixture(scope="module")
def app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningApp]:
    base = tmp_path_factory.mktemp("setup-app")
    wheels = _stand_in_wheel(base / "wheels").parent
    with launch_app(base, backend_index_args=("--no-index", "--find-links", str(wheels))) as running:
        shutil.rmtree(running.paths.backend_venv)  # a machine where the backend is not installed yet
        yield running


def test_report_shows_backend_gpus_and_tools(app):
    backend, gpus, tools = app.client().predict(api_name="/setup_report")
    assert "missing" in backend and str(app.paths.backend_venv) in backend
    assert f"pinned {SGLANG_OMNI_VERSION}" in backend and "Press Install / Repair" in backend
    assert "Compute capability" in gpus or "NO NVIDIA GPU" in gpus
    for tool in ("ffmpeg", "ffprobe", "sox"):
        assert f"<b>{tool}</b>" in tools
    assert "qwen3_tts_0_6b_customvoice" in tools  # who needs sox


def test_install_runs_in_the_background_with_a_live_log(app):
    client = app.client()
    status, log = client.predict(api_name="/setup_install")
    assert "Installing the SGLang-Omni backend" in status
    done = wait_for(
        lambda: (s := app.ctx.tasks.snapshot(TASK_BACKEND)).state.finished and s,
        timeout_s=240,
        what="the backend install to finish",
    )
    assert done.state is RunState.DONE, done.log_text[-3000:]
    assert f"sglang-omni=={SGLANG_OMNI_VERSION}" in done.log_text
    assert f"Successfully installed sglang-omni-{SGLANG_OMNI_VERSION}" in done.log_text
    assert probe_backend(app.paths).state is BackendState.READY
    backend, _, _ = client.predict(api_name="/setup_report")
    assert "ready" in backend and f"{SGLANG_OMNI_VERSION} (pinned {SGLANG_OMNI_VERSION})" in backend
    # A page opened now re-attaches to the finished task's log.
    loaded = app.client().predict(api_name="/setup_load")
    assert "Successfully installed" in loaded[-1]


def test_cancel_with_nothing_running_changes_nothing(app):
    app.client().predict(api_name="/setup_cancel")
    assert app.ctx.tasks.snapshot(TASK_BACKEND).state is RunState.DONE


def test_install_lines_put_this_machines_package_manager_first(data_paths, tmp_path):
    from omni_web.setup_report import MISSING_TOOL_NOTE, collect_setup_report
    from omni_web.ui.setup import render_tools
    from tests.fakes.fake_nvml import FakeNvml

    present = {"ffmpeg", "ffprobe", "pacman"}
    report = collect_setup_report(
        data_paths,
        nvml=FakeNvml([]),
        cache_dir=tmp_path / "hf",
        which=lambda name: f"/usr/bin/{name}" if name in present else None,
    )
    html = render_tools(report)
    assert html.index("sudo pacman -S sox") < html.index("sudo apt install sox")  # the CLI's order too
    assert MISSING_TOOL_NOTE in html


def test_setup_tab_says_whether_calibre_is_there_for_kindle_books(data_paths, tmp_path):
    from omni_web.setup_report import collect_setup_report, render_setup_report
    from omni_web.ui.setup import render_tools
    from tests.fakes.fake_nvml import FakeNvml

    for present in ({"ffmpeg", "ffprobe", "apt-get"}, {"ffmpeg", "ffprobe", "apt-get", "ebook-convert"}):
        report = collect_setup_report(
            data_paths,
            nvml=FakeNvml([]),
            cache_dir=tmp_path / "hf",
            which=lambda name, present=present: f"/usr/bin/{name}" if name in present else None,
        )
        html, text = render_tools(report), render_setup_report(report)
        assert "<b>ebook-convert</b>" in html and "MOBI/AZW3/AZW books" in html
        if "ebook-convert" in present:
            assert "/usr/bin/ebook-convert" in text and "sudo apt install calibre" not in html
        else:
            assert "sudo apt install calibre" in html and "sudo apt install calibre" in text
