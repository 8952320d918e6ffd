"""``server farm drain|resume|remove|pin BOX [MODEL]`` on a farm record, and ``server status``
showing what the user decided (the agent of the removed box is a real HTTP server on loopback)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from omni_web.cli import main
from omni_web.farm.registry import FarmBox, FarmRegistry
from omni_web.paths import DataPaths

MODEL = "qwen3_tts_0_6b_base"


class _Agent(BaseHTTPRequestHandler):
    """An agent that answers every call and records its paths."""

    asked: list[str] = []

    def do_POST(self) -> None:  # noqa: N802 - http.server's name
        type(self).asked.append(f"{self.command} {self.path} {self.headers.get('Authorization')}")
        body = b'{"gpus": [], "workers": []}' if self.command == "POST" else b'{"text": "Joined the farm\\n"}'
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_GET = do_POST  # noqa: N815 - http.server's name (GET /log)

    def log_message(self, *_args: object) -> None:
        return


@pytest.fixture
def agent() -> Iterator[tuple[str, list[str]]]:
    _Agent.asked = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Agent)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}", _Agent.asked
    server.shutdown()
    server.server_close()


@pytest.fixture
def home(tmp_path: Path, monkeypatch, agent) -> FarmRegistry:
    monkeypatch.setenv("OMNI_WEB_HOME", str(tmp_path))
    registry = FarmRegistry(DataPaths(root=tmp_path).ensure(), lambda: None)
    registry._save(FarmBox(id="b1", name="lab-1", agent_url="http://127.0.0.1:9", secret="s", joined_at=1.0))
    registry._save(FarmBox(id="b2", name="lab-2", agent_url=agent[0], secret="s2", joined_at=2.0))
    return registry


def test_drain_resume_and_pin_change_the_box_and_status_shows_it(home: FarmRegistry, capsys) -> None:
    assert main(["server", "farm", "drain", "lab-1"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("Drained box lab-1 (b1)") and "server farm resume b1" in out
    assert "  box lab-1 (http://127.0.0.1:9): drained, joined " in out
    assert home.box("b1").drained
    assert main(["server", "farm", "pin", "b1", MODEL]) == 0
    assert "Pinned box lab-1 (b1)" in capsys.readouterr().out
    main(["server", "status"])
    status = capsys.readouterr().out
    assert "box lab-1 (http://127.0.0.1:9): drained, joined " in status
    assert f", id b1, pinned to {MODEL}" in status and ", id b2\n" in status
    assert main(["server", "farm", "resume", "lab-1"]) == 0
    assert "Resumed box lab-1 (b1)" in capsys.readouterr().out
    resumed = home.box("b1")
    assert (resumed.drained, resumed.state, resumed.pinned_model) == (False, "resuming", MODEL)
    assert main(["server", "farm", "pin", "lab-1"]) == 0
    assert "no longer pinned" in capsys.readouterr().out and home.box("b1").pinned_model == ""


def test_log_prints_the_agents_log_or_says_it_does_not_answer(home: FarmRegistry, agent, capsys) -> None:
    _url, asked = agent
    assert main(["server", "farm", "log", "lab-2"]) == 0
    assert capsys.readouterr().out == "Joined the farm\n"
    assert asked == ["GET /log?lines=200 Bearer s2"]
    assert main(["server", "farm", "log", "lab-1"]) == 1
    assert "The agent of box lab-1 (http://127.0.0.1:9) does not answer" in capsys.readouterr().err


def test_remove_tells_the_agent_to_stop_and_forgets_the_box(home: FarmRegistry, agent, capsys) -> None:
    _url, asked = agent
    assert main(["server", "farm", "remove", "lab-2"]) == 0
    assert "Removed box lab-2 (b2)" in capsys.readouterr().out
    assert asked == ["POST /stop Bearer s2"]
    assert [b.id for b in home.boxes()] == ["b1"]


def test_an_unknown_box_or_a_stray_model_fails_saying_what_to_do(home: FarmRegistry, capsys) -> None:
    assert main(["server", "farm", "drain", "lab-9"]) == 1
    err = capsys.readouterr().err
    assert "No farm box is called 'lab-9'" in err and "lab-1 (b1), lab-2 (b2)" in err
    assert main(["server", "farm", "drain", "lab-1", MODEL]) == 1
    assert "Only pin takes a MODEL" in capsys.readouterr().err
    assert main(["server", "farm", "pin", "lab-1", "no_such_model"]) == 1
    assert not home.box("b1").drained and home.box("b1").pinned_model == ""
