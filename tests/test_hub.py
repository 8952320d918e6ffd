"""Model downloads, cache reading, removal and diffs through huggingface_hub against a local hub."""

from __future__ import annotations

import hashlib
import random
import threading
from pathlib import Path

import huggingface_hub.constants as hf_constants
import pytest

from omni_web.catalog import get_entry
from omni_web.errors import (
    DiskFullError,
    DownloadCancelled,
    DownloadError,
    GatedModel,
    ModelError,
    UnknownModel,
)
from omni_web.models import (
    DownloadProgress,
    apply_model_diff,
    cached_models,
    download_model,
    installed_keys,
    installed_models,
    plan_download,
    plan_removal,
)
from omni_web.paths import DataPaths
from tests.fakes.fake_hf_hub import FakeHub, FakeRepo

pytestmark = pytest.mark.slow  # the fake hub server

QWEN = get_entry("qwen3_tts_0_6b_base")
VOXTRAL = get_entry("voxtral_tts")
HIGGS = get_entry("higgs_audio_v3_tts")


def _bytes(seed: int, size: int) -> bytes:
    return random.Random(seed).randbytes(size)


def _repo(entry, *, shard_size: int = 400_000, gated: bool = False) -> FakeRepo:
    return FakeRepo(
        entry.repo_id,
        {
            "config.json": b'{"model_type": "tts"}',
            "model-00001-of-00002.safetensors": _bytes(1, shard_size),
            "model-00002-of-00002.safetensors": _bytes(2, shard_size),
            "tokenizer/vocab.json": _bytes(3, 3000),
        },
        gated=gated,
    )


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty HF cache under tmp; the env points there too, for code that reads it."""
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf-home"))
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hf-cache"))
    # Small reads so progress and resume happen mid-file with test-sized files.
    monkeypatch.setattr(hf_constants, "DOWNLOAD_CHUNK_SIZE", 64 * 1024)
    return tmp_path / "hf-cache"


@pytest.fixture
def hub():
    with FakeHub() as server:
        yield server


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def test_download_lays_out_the_cache_and_reports_byte_progress(hub: FakeHub, cache: Path) -> None:
    repo = _repo(QWEN)
    hub.add_repo(repo)
    hub.set_tree_page_size(2)  # the listing arrives in pages, as from the real hub
    events: list[DownloadProgress] = []

    snapshot = download_model(QWEN, progress=events.append, cache_dir=cache, endpoint=hub.url)

    repo_dir = cache / "models--Qwen--Qwen3-TTS-12Hz-0.6B-Base"
    assert snapshot == repo_dir / "snapshots" / repo.commit
    assert (repo_dir / "refs" / "main").read_text() == repo.commit
    for path, data in repo.files.items():
        link = snapshot / path
        assert link.is_symlink()
        assert link.read_bytes() == data
        assert link.resolve() == (repo_dir / "blobs" / repo.etag(path)).resolve()
    total = sum(len(data) for data in repo.files.values())
    assert events[-1].finished
    assert (events[-1].downloaded_bytes, events[-1].total_bytes) == (total, total)
    assert (events[-1].files_done, events[-1].files_total) == (4, 4)
    assert [e.downloaded_bytes for e in events] == sorted(e.downloaded_bytes for e in events)
    (model,) = installed_models(cache_dir=cache)
    assert (model.key, model.complete, model.size_on_disk_bytes) == (QWEN.key, True, total)
    assert model.snapshot_path == snapshot


def test_cut_connection_resumes_the_file_with_a_range_request(hub: FakeHub, cache: Path) -> None:
    repo = _repo(VOXTRAL, shard_size=600_000)
    hub.add_repo(repo)
    name = "model-00001-of-00002.safetensors"
    hub.cut_connection_once(repo.repo_id, name, after_bytes=300_000)

    snapshot = download_model(VOXTRAL, cache_dir=cache, endpoint=hub.url)

    gets = hub.gets_of(repo.repo_id, name)
    assert len(gets) == 2
    assert gets[0].range is None
    start = int(gets[1].range.removeprefix("bytes=").split("-")[0])
    assert 0 < start <= 300_000
    assert _sha((snapshot / name).read_bytes()) == _sha(repo.files[name])
    assert installed_keys(cache_dir=cache) == {VOXTRAL.key}


def test_cancel_keeps_finished_files_and_a_rerun_fetches_only_the_rest(hub: FakeHub, cache: Path) -> None:
    repo = _repo(QWEN, shard_size=1_000_000)
    hub.add_repo(repo)
    hub.set_chunk_delay(0.004)  # ~0.25 s per shard, so progress events arrive mid-file
    first, second = "model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors"
    into_second = len(repo.files["config.json"]) + len(repo.files[first]) + 50_000
    cancel = threading.Event()

    def on_progress(event: DownloadProgress) -> None:
        if event.downloaded_bytes >= into_second:
            cancel.set()

    with pytest.raises(DownloadCancelled) as raised:
        download_model(QWEN, progress=on_progress, cancel=cancel, cache_dir=cache, endpoint=hub.url,
                       max_workers=1)
    assert raised.value.key == QWEN.key

    repo_dir = cache / "models--Qwen--Qwen3-TTS-12Hz-0.6B-Base"
    assert (repo_dir / "blobs" / repo.etag(first)).read_bytes() == repo.files[first]
    assert not (repo_dir / "blobs" / repo.etag(second)).exists()
    assert not list((repo_dir / "blobs").glob("*.incomplete"))
    (partial,) = cached_models(cache_dir=cache)
    assert not partial.complete and partial.snapshot_path is None
    assert "not downloaded yet" in partial.detail
    assert installed_models(cache_dir=cache) == []
    assert plan_download(QWEN, cache_dir=cache, endpoint=hub.url).files_cached >= 2

    hub.set_chunk_delay(0)
    snapshot = download_model(QWEN, cache_dir=cache, endpoint=hub.url, max_workers=1)

    assert len(hub.gets_of(repo.repo_id, first)) == 1  # not fetched again
    assert len(hub.gets_of(repo.repo_id, second)) == 2
    assert (snapshot / second).read_bytes() == repo.files[second]
    assert installed_keys(cache_dir=cache) == {QWEN.key}


def test_gated_repo_raises_gated_model_until_a_token_is_accepted(hub: FakeHub, cache: Path) -> None:
    hub.add_repo(_repo(VOXTRAL, gated=True))
    with pytest.raises(GatedModel) as raised:
        download_model(VOXTRAL, cache_dir=cache, endpoint=hub.url, token=False)
    message = str(raised.value)
    assert "gated" in message and f"{hub.url}/{VOXTRAL.repo_id}" in message and "HF_TOKEN" in message

    hub.allow_token("hf_test_token")
    download_model(VOXTRAL, cache_dir=cache, endpoint=hub.url, token="hf_test_token")
    assert installed_keys(cache_dir=cache) == {VOXTRAL.key}
    gated_gets = [r for r in hub.requests if r.method == "GET" and "/resolve/" in r.path]
    assert gated_gets and all(r.authorization == "Bearer hf_test_token" for r in gated_gets)


def test_missing_repo_and_unreachable_hub_raise_download_error(hub: FakeHub, cache: Path) -> None:
    with pytest.raises(DownloadError, match="not found"):
        download_model(HIGGS, cache_dir=cache, endpoint=hub.url, token=False)
    closed = FakeHub()  # bound, then closed: nothing listens on its port
    url = closed.url
    closed.stop()
    with pytest.raises(DownloadError, match="could not reach"):
        download_model(HIGGS, cache_dir=cache, endpoint=url, token=False)


def test_download_refused_up_front_when_the_disk_is_too_small(
    hub: FakeHub, cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import shutil as real_shutil

    from omni_web.backend import disk

    usage = real_shutil.disk_usage("/")
    monkeypatch.setattr(disk.shutil, "disk_usage", lambda _path: usage._replace(free=10_000))
    hub.add_repo(_repo(QWEN))
    with pytest.raises(DiskFullError) as raised:
        download_model(QWEN, cache_dir=cache, endpoint=hub.url)
    assert "10.0 kB is free" in str(raised.value) and "does not fit" in str(raised.value)
    assert not [r for r in hub.requests if r.method == "GET" and "/resolve/" in r.path]


def test_plan_removal_shows_the_freed_size_then_execute_deletes(hub: FakeHub, cache: Path) -> None:
    repo = _repo(QWEN)
    hub.add_repo(repo)
    download_model(QWEN, cache_dir=cache, endpoint=hub.url)
    total = sum(len(data) for data in repo.files.values())

    plan = plan_removal([QWEN.key, VOXTRAL.key], cache_dir=cache)

    assert plan.keys == (QWEN.key,) and plan.not_installed == (VOXTRAL.key,)
    assert plan.expected_freed_bytes == total and plan.items[0].size_bytes == total
    assert plan.expected_freed_str in plan.summary
    assert (cache / "models--Qwen--Qwen3-TTS-12Hz-0.6B-Base").exists()  # planning deletes nothing

    stopped: list[str] = []
    assert plan.execute(stop_server_hosting=stopped.append) == total
    assert stopped == [QWEN.key]
    assert not (cache / "models--Qwen--Qwen3-TTS-12Hz-0.6B-Base").exists()
    assert cached_models(cache_dir=cache) == []
    assert plan_removal([QWEN.key], cache_dir=cache).is_empty


def test_partial_download_can_be_removed(hub: FakeHub, cache: Path) -> None:
    repo = _repo(QWEN, shard_size=1_000_000)
    hub.add_repo(repo)
    hub.set_chunk_delay(0.004)
    cancel = threading.Event()
    threshold = len(repo.files["config.json"]) + 1_000_000 + 50_000
    with pytest.raises(DownloadCancelled):
        download_model(
            QWEN,
            progress=lambda e: cancel.set() if e.downloaded_bytes >= threshold else None,
            cancel=cancel,
            cache_dir=cache,
            endpoint=hub.url,
            max_workers=1,
        )
    plan = plan_removal([QWEN.key], cache_dir=cache)
    assert plan.keys == (QWEN.key,) and not plan.items[0].complete
    assert plan.expected_freed_bytes >= 1_000_000
    plan.execute()
    assert cached_models(cache_dir=cache) == []


def test_apply_model_diff_removes_first_then_installs_with_warnings(
    hub: FakeHub, cache: Path, data_paths: DataPaths
) -> None:
    old, new = _repo(VOXTRAL), _repo(QWEN)
    hub.add_repo(old)
    hub.add_repo(new)
    download_model(VOXTRAL, cache_dir=cache, endpoint=hub.url)
    old_dir = cache / "models--mistralai--Voxtral-4B-TTS-2603"
    order: list[str] = []

    def stop_server_hosting(key: str) -> None:
        # Called before the files go, and before any download of the added model starts.
        assert old_dir.exists()
        assert not hub.gets_of(new.repo_id, "config.json")
        order.append(f"stop {key}")

    lines: list[str] = []
    result = apply_model_diff(
        [QWEN.key],
        [VOXTRAL.key],
        paths=data_paths,
        stop_server_hosting=stop_server_hosting,
        log=lines.append,
        cache_dir=cache,
        endpoint=hub.url,
        which=lambda name: None if name == "sox" else f"/usr/bin/{name}",
    )

    assert order == [f"stop {VOXTRAL.key}"]
    assert result.ok and result.removed == (VOXTRAL.key,)
    assert result.freed_bytes == sum(len(d) for d in old.files.values())
    (installed,) = result.installed
    assert installed.key == QWEN.key and installed.companions_installed == ()
    warnings = " ".join(installed.warnings)
    # No backend venv here: companions are skipped with a warning; sox is missing: install lines.
    assert "companion packages" in warnings and "python -m omni_web setup" in warnings
    assert (
        "sudo apt install sox" in warnings
        and "sudo pacman -S sox" in warnings
        and "sudo dnf install sox" in warnings
    )
    assert installed_keys(cache_dir=cache) == {QWEN.key}
    assert any(line.startswith("Remove 1 model") for line in lines)


def test_apply_model_diff_reports_a_failed_model_and_installs_the_others(
    hub: FakeHub, cache: Path, data_paths: DataPaths
) -> None:
    hub.add_repo(_repo(VOXTRAL, gated=True))
    hub.add_repo(_repo(HIGGS))
    result = apply_model_diff(
        [VOXTRAL.key, HIGGS.key],
        [],
        paths=data_paths,
        cache_dir=cache,
        endpoint=hub.url,
        token=False,
    )
    assert not result.ok
    assert [key for key, _ in result.failed] == [VOXTRAL.key]
    assert "gated" in result.failed[0][1]
    assert [item.key for item in result.installed] == [HIGGS.key]
    assert installed_keys(cache_dir=cache) == {HIGGS.key}


def test_apply_model_diff_checks_keys_before_changing_anything(
    hub: FakeHub, cache: Path, data_paths: DataPaths
) -> None:
    hub.add_repo(_repo(VOXTRAL))
    download_model(VOXTRAL, cache_dir=cache, endpoint=hub.url)
    with pytest.raises(UnknownModel):
        apply_model_diff(
            ["no_such_model"], [VOXTRAL.key], paths=data_paths, cache_dir=cache, endpoint=hub.url
        )
    with pytest.raises(ModelError, match="both installed and removed"):
        apply_model_diff([VOXTRAL.key], [VOXTRAL.key], paths=data_paths, cache_dir=cache, endpoint=hub.url)
    assert installed_keys(cache_dir=cache) == {VOXTRAL.key}


def test_cache_scan_ignores_repos_outside_the_catalog_and_dry_run_leftovers(
    hub: FakeHub, cache: Path
) -> None:
    hub.add_repo(FakeRepo("someone/other-model", {"config.json": b"{}"}))
    hub.add_repo(_repo(HIGGS))
    from huggingface_hub import snapshot_download

    snapshot_download("someone/other-model", cache_dir=cache, endpoint=hub.url)
    plan = plan_download(HIGGS, cache_dir=cache, endpoint=hub.url)  # writes refs/main, no files
    assert plan.files_total == 4 and plan.cached_bytes == 0
    assert plan.to_download_bytes == sum(len(d) for d in _repo(HIGGS).files.values())
    assert cached_models(cache_dir=cache) == []
