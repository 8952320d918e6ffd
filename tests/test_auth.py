"""The web UI login: when it is required, where it comes from, the first password (0600)."""

from __future__ import annotations

import json
import stat

import pytest

from omni_web.auth import (
    AUTH_ENV_VAR,
    is_loopback_host,
    load_or_create_credentials,
    parse_credentials,
    read_auth_file,
    resolve_login,
)
from omni_web.errors import SettingsError


@pytest.mark.parametrize("host", ["127.0.0.1", "127.5.5.5", "::1", "[::1]", "localhost"])
def test_loopback_hosts(host):
    assert is_loopback_host(host)


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "192.168.1.20", "gpu-box", ""])
def test_hosts_beyond_loopback(host):
    assert not is_loopback_host(host)


def test_first_start_beyond_loopback_creates_an_owner_only_password(data_paths):
    made = resolve_login("0.0.0.0", data_paths, environ={})
    assert made is not None and made.created
    assert made.username == "omni" and len(made.password) >= 16
    mode = stat.S_IMODE(data_paths.credentials_file.stat().st_mode)
    assert mode == 0o600
    stored = json.loads(data_paths.credentials_file.read_text())
    assert stored == {"username": "omni", "password": made.password}
    again = resolve_login("0.0.0.0", data_paths, environ={})
    assert again is not None and not again.created and again.password == made.password


def test_loosened_credentials_file_is_made_owner_only_again(data_paths):
    resolve_login("0.0.0.0", data_paths, environ={})
    data_paths.credentials_file.chmod(0o644)
    resolve_login("0.0.0.0", data_paths, environ={})
    assert stat.S_IMODE(data_paths.credentials_file.stat().st_mode) == 0o600


def test_loopback_needs_no_login_unless_one_is_given(data_paths, tmp_path):
    assert resolve_login("127.0.0.1", data_paths, environ={}) is None
    assert not data_paths.credentials_file.exists()
    login = resolve_login("127.0.0.1", data_paths, environ={AUTH_ENV_VAR: "me:pw:with:colons"})
    assert login is not None and login.as_tuple() == ("me", "pw:with:colons")
    file = tmp_path / "login.txt"
    file.write_text("reader:open sesame\nignored\n")
    assert resolve_login("localhost", data_paths, auth_file=file, environ={}).as_tuple() == (
        "reader",
        "open sesame",
    )


def test_no_auth_is_an_explicit_opt_out(data_paths):
    assert resolve_login("0.0.0.0", data_paths, no_auth=True, environ={AUTH_ENV_VAR: "a:b"}) is None
    assert not data_paths.credentials_file.exists()


def test_environment_wins_over_file_and_stored(data_paths, tmp_path):
    load_or_create_credentials(data_paths, environ={})
    file = tmp_path / "login.json"
    file.write_text(json.dumps({"username": "filer", "password": "from-file"}))
    assert read_auth_file(file).as_tuple() == ("filer", "from-file")
    login = load_or_create_credentials(data_paths, auth_file=file, environ={AUTH_ENV_VAR: "env:from-env"})
    assert login.as_tuple() == ("env", "from-env")
    assert load_or_create_credentials(data_paths, auth_file=file, environ={}).as_tuple() == (
        "filer",
        "from-file",
    )


@pytest.mark.parametrize("text", ["nocolon", ":pw", "user:", "  :  "])
def test_bad_login_strings_say_the_format(text):
    with pytest.raises(SettingsError, match="user:password"):
        parse_credentials(text, source="test")


def test_unreadable_auth_file_names_it(tmp_path):
    with pytest.raises(SettingsError, match="Cannot read the login file"):
        read_auth_file(tmp_path / "missing.txt")
    bad = tmp_path / "bad.json"
    bad.write_text('{"user": "x"}')
    with pytest.raises(SettingsError, match="lacks 'username' and 'password'"):
        read_auth_file(bad)
