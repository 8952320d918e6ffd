from __future__ import annotations

import dataclasses

import pytest

from omni_web.errors import SettingsError
from omni_web.paths import DataPaths, data_root_from_env
from omni_web.settings import Settings, load_settings, save_settings


def test_defaults_when_no_file(data_paths: DataPaths) -> None:
    assert load_settings(data_paths) == Settings()


def test_round_trip(data_paths: DataPaths) -> None:
    changed = dataclasses.replace(
        Settings(), server_port=9123, remote_url="http://gpu:8000", mem_fraction_static=0.6
    )
    save_settings(data_paths, changed)
    assert load_settings(data_paths) == changed


def test_bad_value_names_the_key(data_paths: DataPaths) -> None:
    data_paths.settings_file.write_text("server_port: 70000\n")
    with pytest.raises(SettingsError, match="server_port"):
        load_settings(data_paths)


def test_broken_yaml_says_what_to_do(data_paths: DataPaths) -> None:
    data_paths.settings_file.write_text("server_port: [\n")
    with pytest.raises(SettingsError, match="Fix or delete"):
        load_settings(data_paths)


def test_env_moves_the_root(tmp_path) -> None:
    assert data_root_from_env({"OMNI_WEB_HOME": str(tmp_path)}).root == tmp_path.resolve()
    assert data_root_from_env({}).root.name  # the repo folder
