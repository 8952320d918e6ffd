"""The interpreter order, with fake interpreters on a temporary PATH and a fake uv."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from omni_web.backend.interpreter import (
    InterpreterSource,
    find_interpreter,
    query_python_version,
    resolve_interpreter,
)
from omni_web.errors import BackendError, InstallError
from omni_web.paths import DataPaths

REAL = sys.executable


def fake_python(path: Path, version: tuple[int, int, int]) -> Path:
    """A script that answers ``-c CODE`` like a Python of ``version`` (the real one, with
    ``sys.version_info`` replaced), and fails for anything else."""
    path.parent.mkdir(parents=True, exist_ok=True)
    patched = f"import sys; sys.version_info = {(*version, 'final', 0)!r}; exec(compile(sys.argv[1], '<string>', 'exec'))"
    path.write_text(
        "#!/bin/sh\n"
        'if [ "$1" = "-c" ]; then\n'
        f'  exec "{REAL}" -c "{patched}" "$2"\n'
        "fi\n"
        "echo unsupported >&2\n"
        "exit 2\n"
    )
    path.chmod(0o755)
    return path


def broken_shim(path: Path, name: str) -> Path:
    """What a pyenv shim prints when the version is installed but not selected."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"#!/bin/sh\necho 'pyenv: {name}: command not found' >&2\nexit 127\n")
    path.chmod(0o755)
    return path


def test_fake_interpreters_answer_version_queries_like_the_real_one(tmp_path: Path) -> None:
    fake = fake_python(tmp_path / "python3.12", (3, 12, 4))
    assert query_python_version(fake) == ((3, 12, 4), "")
    assert query_python_version(REAL) == (tuple(sys.version_info[:3]), "")
    shim = broken_shim(tmp_path / "python3.11", "python3.11")
    version, why = query_python_version(shim)
    assert version is None and "pyenv: python3.11: command not found" in why


def test_app_interpreter_in_range_wins_without_looking_further(data_paths: DataPaths, tmp_path: Path) -> None:
    fake_python(tmp_path / "bin" / "python3.12", (3, 12, 4))
    search = find_interpreter(
        data_paths, app_python=REAL, app_version=(3, 11, 7), search_path=str(tmp_path / "bin")
    )
    assert search.choice is not None
    assert search.choice.source is InterpreterSource.APP and search.choice.path == Path(REAL)
    assert "no download needed" in search.choice.reason and search.rejected == ()


def test_out_of_range_app_falls_back_to_the_newest_python_on_path(
    data_paths: DataPaths, tmp_path: Path
) -> None:
    bin_dir = tmp_path / "bin"
    fake_python(bin_dir / "python3.12", (3, 12, 4))
    fake_python(bin_dir / "python3.11", (3, 11, 9))
    search = find_interpreter(data_paths, app_python=REAL, app_version=(3, 13, 1), search_path=str(bin_dir))
    assert search.choice is not None
    assert (search.choice.source, search.choice.path, search.choice.version) == (
        InterpreterSource.PATH,
        bin_dir / "python3.12",
        (3, 12, 4),
    )
    assert "3.13.1, outside >=3.11,<3.13" in search.rejected[0]


def test_a_shim_that_does_not_run_is_skipped_with_its_reason(data_paths: DataPaths, tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"
    broken_shim(bin_dir / "python3.12", "python3.12")
    fake_python(bin_dir / "python3.11", (3, 11, 9))
    search = find_interpreter(data_paths, app_python=REAL, app_version=(3, 10, 2), search_path=str(bin_dir))
    assert search.choice is not None and search.choice.version == (3, 11, 9)
    assert any("python3.12" in why and "command not found" in why for why in search.rejected)


def test_nothing_usable_says_what_setup_will_do(data_paths: DataPaths, tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"
    fake_python(bin_dir / "python3.12", (3, 13, 0))  # misnamed: really a 3.13
    search = find_interpreter(data_paths, app_python=REAL, app_version=(3, 14, 0), search_path=str(bin_dir))
    assert search.choice is None
    assert any("3.13.0, outside" in why for why in search.rejected)
    assert any("python3.11: not on PATH" in why for why in search.rejected)
    assert "pip-install uv" in search.summary and "CPython 3.12" in search.summary
    with pytest.raises(BackendError, match="No Python in >=3.11,<3.13"):
        resolve_interpreter(
            data_paths,
            app_python=REAL,
            app_version=(3, 14, 0),
            search_path=str(bin_dir),
            allow_download=False,
        )


def test_an_interpreter_uv_provisioned_earlier_is_reused(data_paths: DataPaths, tmp_path: Path) -> None:
    managed = fake_python(
        data_paths.pythons_dir / "cpython-3.12.8-linux-x86_64-gnu" / "bin" / "python3.12", (3, 12, 8)
    )
    search = find_interpreter(data_paths, app_python=REAL, app_version=(3, 14, 0), search_path=str(tmp_path))
    assert search.choice is not None
    assert (search.choice.source, search.choice.path) == (InterpreterSource.UV_MANAGED, managed)


def _fake_app_venv(tmp_path: Path, *, uv_exit: int = 0) -> tuple[Path, Path]:
    """An app venv whose python answers version queries as 3.10 and whose ``-m pip install``
    drops a fake ``uv`` next to it; the fake uv "provisions" a fake CPython 3.12.8."""
    app_bin = tmp_path / "appvenv" / "bin"
    app_python = fake_python(app_bin / "python", (3, 10, 13))
    argv_log = tmp_path / "pip-argv.txt"
    interpreter_script = tmp_path / "appvenv" / "python3.12.template"
    fake_python(interpreter_script, (3, 12, 8))
    uv_source = tmp_path / "uv.py"
    uv_source.write_text(
        f"#!{REAL}\n"
        "import os, pathlib, shutil, sys\n"
        "if sys.argv[1:3] != ['python', 'install']:\n"
        "    sys.exit(2)\n"
        f"if {uv_exit}:\n"
        "    print('error: no network', flush=True)\n"
        f"    sys.exit({uv_exit})\n"
        "root = pathlib.Path(os.environ['UV_PYTHON_INSTALL_DIR'])\n"
        "target = root / f'cpython-{sys.argv[3]}.8-linux-x86_64-gnu' / 'bin' / f'python{sys.argv[3]}'\n"
        "target.parent.mkdir(parents=True)\n"
        f"shutil.copy({str(interpreter_script)!r}, target)\n"
        "target.chmod(0o755)\n"
        "print('bin dir', os.environ['UV_PYTHON_BIN_DIR'])\n"
        "print(f'Installed Python {sys.argv[3]}.8 in 0.1s')\n"
    )
    # The fake app python: -c is a version query, -m pip install records argv and installs uv.
    app_python.write_text(
        app_python.read_text().replace(
            "echo unsupported >&2\n",
            f'echo "$@" >> "{argv_log}"\n'
            f'cp "{uv_source}" "{app_bin}/uv" && chmod +x "{app_bin}/uv"\n'
            'echo "Successfully installed uv-0.9.0"\n'
            "exit 0\n",
        )
    )
    return app_python, argv_log


def test_uv_is_pip_installed_into_the_app_venv_and_provisions_cpython(
    data_paths: DataPaths, tmp_path: Path
) -> None:
    app_python, argv_log = _fake_app_venv(tmp_path)
    lines: list[str] = []
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    choice = resolve_interpreter(
        data_paths,
        app_python=app_python,
        app_version=(3, 10, 13),
        search_path=str(empty),
        index_args=["--no-index", "--find-links", str(tmp_path)],
        log=lines.append,
    )
    assert choice.source is InterpreterSource.UV_MANAGED and choice.version == (3, 12, 8)
    assert choice.path == data_paths.pythons_dir / "cpython-3.12.8-linux-x86_64-gnu" / "bin" / "python3.12"
    pip_argv = argv_log.read_text().split()
    assert pip_argv[:3] == ["-m", "pip", "install"] and pip_argv[-1] == "uv"
    assert "--no-index" in pip_argv
    assert (app_python.parent / "uv").exists()
    assert any("Successfully installed uv" in line for line in lines)
    assert f"bin dir {data_paths.pythons_dir / 'bin'}" in lines  # never the user's ~/.local/bin
    assert any(line.startswith("Backend interpreter: ") and "uv provisioned" in line for line in lines)
    logs = list(data_paths.logs_dir.glob("provision-python-*.log"))
    assert len(logs) == 1 and "Installed Python 3.12.8" in logs[0].read_text()

    # The next search finds it without uv (and without the network).
    os.remove(app_python.parent / "uv")
    again = find_interpreter(
        data_paths, app_python=app_python, app_version=(3, 10, 13), search_path=str(empty)
    )
    assert again.choice is not None and again.choice.path == choice.path


def test_a_failing_uv_is_an_install_error_with_its_log(data_paths: DataPaths, tmp_path: Path) -> None:
    app_python, _ = _fake_app_venv(tmp_path, uv_exit=3)
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    with pytest.raises(InstallError, match="could not provision CPython 3.12") as raised:
        resolve_interpreter(
            data_paths, app_python=app_python, app_version=(3, 10, 13), search_path=str(empty)
        )
    assert raised.value.log_path is not None and "error: no network" in raised.value.log_path.read_text()
