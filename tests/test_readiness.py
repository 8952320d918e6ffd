"""The first-run checklist and the questions asked before a job is queued."""

from __future__ import annotations

import pytest

from omni_web.backend import BackendState
from omni_web.catalog import get_entry
from omni_web.errors import ModelNotInstalled
from omni_web.pipeline.admission import model_switch_note, require_runnable
from omni_web.readiness import first_run_readiness
from omni_web.server import ServerState, ServerStatus
from omni_web.settings import Settings

QWEN = "qwen3_tts_0_6b_customvoice"
HIGGS = "higgs_audio_v3_tts"
STOPPED = ServerStatus(ServerState.STOPPED)


def _healthy(key: str, *, owned: bool = True) -> ServerStatus:
    return ServerStatus(ServerState.HEALTHY, endpoint="http://127.0.0.1:8100", model_key=key, owned=owned)


def test_an_empty_install_lists_three_steps_in_order() -> None:
    readiness = first_run_readiness(backend_state=BackendState.MISSING, downloaded=set(), status=STOPPED,
                                    settings=Settings())
    assert [step.tab for step in readiness.steps] == ["setup", "models", "server"]
    assert not readiness.can_run and not any(step.done for step in readiness.steps)
    assert readiness.next_step.tab == "setup" and "Install / Repair" in readiness.next_step.detail
    # A newcomer who already runs a server is told on the first line how to use it instead.
    assert (
        "Already running sgl-omni" in readiness.next_step.detail
        and "Remote server URL" in readiness.next_step.detail
    )


def test_backend_and_a_model_are_enough_to_run() -> None:
    readiness = first_run_readiness(
        backend_state=BackendState.READY,
        downloaded={QWEN},
        status=STOPPED,
        settings=Settings(),
        model_labels={QWEN: "Qwen3-TTS 0.6B CustomVoice"},
    )
    assert readiness.can_run and readiness.next_step.tab == "server"
    assert "Qwen3-TTS 0.6B CustomVoice" in readiness.steps[1].detail
    half = first_run_readiness(
        backend_state=BackendState.READY, downloaded=set(), status=STOPPED, settings=Settings()
    )
    assert not half.can_run and half.next_step.tab == "models"


def test_a_remote_or_foreign_server_needs_nothing_installed() -> None:
    remote = first_run_readiness(
        backend_state=BackendState.MISSING,
        downloaded=set(),
        status=STOPPED,
        settings=Settings(remote_url="http://gpu:8100"),
    )
    assert remote.can_run and [step.tab for step in remote.steps] == ["server"]
    foreign = first_run_readiness(
        backend_state=BackendState.MISSING,
        downloaded=set(),
        status=_healthy(QWEN, owned=False),
        settings=Settings(),
    )
    assert foreign.can_run


def test_a_model_that_is_not_downloaded_is_refused_with_its_name() -> None:
    entry = get_entry(HIGGS)
    with pytest.raises(ModelNotInstalled, match=f"{entry.label}.*Models tab") as told:
        require_runnable(entry, downloaded={QWEN}, status=STOPPED, remote_url="")
    assert HIGGS not in str(told.value)  # said on the page: the name, never the catalog key
    require_runnable(entry, downloaded={HIGGS}, status=STOPPED, remote_url="")
    require_runnable(entry, downloaded=set(), status=STOPPED, remote_url="http://gpu:8100")
    require_runnable(entry, downloaded=set(), status=_healthy(HIGGS, owned=False), remote_url="")


def test_switching_our_servers_model_is_said_before_queueing() -> None:
    higgs = get_entry(HIGGS)
    note = model_switch_note(higgs, status=_healthy(QWEN), remote_url="")
    assert note and get_entry(QWEN).label in note and higgs.label in note and "stops" in note
    assert model_switch_note(get_entry(QWEN), status=_healthy(QWEN), remote_url="") is None
    assert model_switch_note(higgs, status=STOPPED, remote_url="") is None
    assert model_switch_note(higgs, status=_healthy(QWEN, owned=False), remote_url="") is None
    assert model_switch_note(higgs, status=_healthy(QWEN), remote_url="http://gpu:8100") is None


def test_speakers_are_shown_as_people_write_them_and_sent_as_the_server_spells_them() -> None:
    from omni_web.client import VoiceChoice
    from omni_web.pipeline import narrator_label
    from omni_web.voices import voice_menu

    menu = voice_menu(get_entry(QWEN), None, [])
    labels = {option.key: option.label for option in menu}
    assert labels["speaker:Uncle_Fu"] == "Uncle Fu" and labels["speaker:Ono_Anna"] == "Ono Anna"
    assert labels["speaker:Vivian"] == "Vivian"
    assert narrator_label(get_entry(QWEN), VoiceChoice.speaker("Uncle_Fu")).startswith("Uncle Fu - ")
