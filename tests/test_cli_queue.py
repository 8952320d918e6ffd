"""``python -m omni_web queue``: add, list, move, pause over the job store the web app's worker reads."""

from __future__ import annotations

from omni_web.cli import main
from omni_web.jobs import JobStore, QueueControl
from tests.conftest import DATA_DIR

MODEL = "qwen3_tts_0_6b_customvoice"


def test_queue_add_list_move_pause(data_paths, capsys) -> None:
    books = [DATA_DIR / "pg11-alice.epub", DATA_DIR / "wasteland.epub"]
    assert main(["queue", "add", *map(str, books), "--model", MODEL, "--voice", "Vivian"]) == 0
    store = JobStore(data_paths.jobs_db)
    alice, waste = (job.id for job in store.queued())
    assert main(["queue", "move", waste, "top"]) == 0
    assert [job.id for job in store.queued()] == [waste, alice]
    assert main(["queue", "pause"]) == 0 and QueueControl(store).paused
    assert main(["queue", "pause", alice]) == 0 and store.get(alice).paused
    capsys.readouterr()
    assert main(["queue", "list"]) == 0
    out = capsys.readouterr().out
    assert "PAUSED" in out and out.index(waste) < out.index(alice) and "[paused]" in out
    assert main(["queue", "move", "nope", "top"]) == 1
