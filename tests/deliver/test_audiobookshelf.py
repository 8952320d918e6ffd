"""Delivery to a fake Audiobookshelf (tests/fakes/fake_abs.py, written from ABS's own code).

Two narrator versions of a series book become two items, each with its narrator, series and
sequence, every chapter titled and the read-along EPUB as its ebook, by upload and by folder+scan;
a rebuilt book (a regenerated chapter) triggers exactly one item scan; a failed delivery is
recorded, never raised.
"""

from __future__ import annotations

import dataclasses
import subprocess
import zipfile
from pathlib import Path

import feedparser
import httpx
import pytest
from fastapi.testclient import TestClient
from lxml import etree

from omni_web.assemble import probe_chapters, probe_streams
from omni_web.assemble.ffmpeg import probe
from omni_web.book import load_book
from omni_web.client import SpeechClient, VoiceChoice
from omni_web.deliver.abs_client import AbsClient
from omni_web.deliver.abs_config import AbsConfig, abs_config_path, load_abs_config, save_abs_config
from omni_web.deliver.abs_delivery import DeliveryStore, deliver_after_job, deliver_book
from omni_web.deliver.opds import build_opds
from omni_web.errors import DeliveryError
from omni_web.paths import DataPaths
from omni_web.pipeline import ConvertRequest, rebuild_chapters, run_conversion
from omni_web.settings import Settings
from tests.conftest import DATA_DIR
from tests.fakes.fake_abs import FakeAbs, scan_folder
from tests.readalong.checks import EPUBCHECK_JAR

pytestmark = pytest.mark.slow  # subprocesses, real ffmpeg

BOOK = DATA_DIR / "hefty-water-series.epub"
MODEL = "qwen3_tts_0_6b_customvoice"
FAST = {"FAKE_SGL_SECONDS_PER_WORD": "0.004"}
SETTINGS = Settings(qa_level="off", pause_between_chapters_ms=500)
SERIES_REL = "Ann Writer/The Water Cycle"


def _factory(fake: FakeAbs):
    return lambda config: AbsClient(config.url, config.token, transport=fake.transport())


def _convert(data_paths: DataPaths, server, voice: str, **changes) -> tuple[ConvertRequest, dict]:
    request = ConvertRequest(
        book_path=BOOK, model_key=MODEL, voice=VoiceChoice.speaker(voice), readalong=True, **changes
    )
    with SpeechClient(server.base_url) as client:
        result = run_conversion(request, paths=data_paths, settings=SETTINGS, client=client)
    return request, result.to_dict()


def _expect_item(item: dict, voice: str, chapter_titles: list[str]) -> None:
    meta = item["metadata"]
    assert meta["title"] == "Hefty Water" and meta["authors"] == ["Ann Writer"]
    assert meta["narrators"] == [f"{voice} - Qwen3-TTS 0.6B CustomVoice"]
    assert meta["series"] == [{"name": "The Water Cycle", "sequence": "2"}]
    assert meta["isbn"] == "9780306406157" and meta["description"] == "A short book about water."
    assert [c["title"] for c in meta["chapters"]] == chapter_titles
    assert all(c["end"] > c["start"] for c in meta["chapters"])
    assert item["audioFiles"] == ["Hefty Water.m4b"] and item["ebookFile"] == "Hefty Water.readalong.epub"


def test_two_voices_become_two_items_by_upload_and_by_folder_scan_and_a_rebuild_scans_once(
    data_paths: DataPaths, fake_server, tmp_path: Path
) -> None:
    server = fake_server(MODEL, env=FAST)
    titles = [c.title for c in load_book(BOOK).chapters if c.selected_by_default]
    books = {voice: _convert(data_paths, server, voice) for voice in ("Vivian", "Ryan")}
    root = SETTINGS.output_path(data_paths)
    folders = {voice: Path(result["output_dir"]) for voice, (_, result) in books.items()}
    assert folders["Vivian"].name == "Vol 2 - Hefty Water {Vivian - Qwen3-TTS 0.6B CustomVoice}"
    # The folder alone, as any ABS library folder: every source agrees under ABS's precedence.
    for voice, folder in folders.items():
        _expect_item(scan_folder(folder, folder.relative_to(root).as_posix()), voice, titles)
        # Without metadata.json and the OPF (the m4b tags, reader.txt, desc.txt and the folder names),
        # then without any sidecar (the m4b and the folder name alone), and the folder name alone.
        sidecars = ["metadata.json", "Hefty Water.opf", "reader.txt", "desc.txt", "Hefty Water.m4b"]
        for hidden in (2, 4, 5):
            for name in sidecars[:hidden]:
                (folder / name).rename(folder / f".{name}.off")
            bare = scan_folder(folder, folder.relative_to(root).as_posix())["metadata"]
            assert bare["narrators"] == [f"{voice} - Qwen3-TTS 0.6B CustomVoice"], (hidden, bare)
            assert (bare["series"], bare["title"], bare["authors"]) == (
                [{"name": "The Water Cycle", "sequence": "2"}],
                "Hefty Water",
                ["Ann Writer"],
            )
            if hidden < 5:
                assert [c["title"] for c in bare["chapters"]] == titles
                assert bare["isbn"] == "9780306406157"  # from the m4b's ISBN free-form atom alone
            for name in sidecars[:hidden]:
                (folder / f".{name}.off").rename(folder / name)

    # Upload: one POST per version with ABS's five fields, then a library scan: the library's
    # folder watcher is off here, and the items show all the same.
    upload = FakeAbs(tmp_path / "abs-upload", watcher=False)
    config = AbsConfig(
        enabled=True, url="http://abs.lan:13378", token=upload.token, library=upload.library_id
    )
    for voice in books:
        record = deliver_after_job(
            data_paths,
            config,
            f"job-{voice}",
            folders[voice],
            output_root=root,
            client_factory=_factory(upload),
        )
        assert record is not None and record.state == "delivered", record
    assert [u["fields"] for u in upload.uploads] == [
        {
            "title": folders[v].name,
            "author": "Ann Writer",
            "series": "The Water Cycle",
            "library": upload.library_id,
            "folder": upload.folder_id,
        }
        for v in ("Vivian", "Ryan")
    ]
    sent = sorted(name for _, name, _ in upload.uploads[0]["files"])
    assert sent == sorted(
        [
            "Hefty Water.m4b",
            "Hefty Water.readalong.epub",
            "Hefty Water.opf",
            "metadata.json",
            "desc.txt",
            "reader.txt",
            *(["cover.jpg"] if (folders["Vivian"] / "cover.jpg").exists() else []),
        ]
    )
    assert (
        len(upload.items) == 2 and upload.library_scans == [upload.library_id] * 2 and not upload.item_scans
    )
    for voice in books:
        _expect_item(upload.item_at(f"{SERIES_REL}/{folders[voice].name}"), voice, titles)

    # Folder + scan: written atomically under the library folder, then one library scan each.
    library = tmp_path / "abs-folder"
    folder_abs = FakeAbs(library)
    folder_config = dataclasses.replace(
        config, mode="folder", folder_path=str(library), token=folder_abs.token
    )
    folder_store = DeliveryStore(tmp_path / "folder-deliveries.json")
    for voice in books:
        record = deliver_book(
            folder_config, folders[voice], root, store=folder_store, client_factory=_factory(folder_abs)
        )
        assert record.state == "delivered", record
    assert folder_abs.library_scans == [folder_abs.library_id] * 2 and not folder_abs.uploads
    assert not list(library.rglob(".*"))  # no staging left behind
    for voice in books:
        _expect_item(folder_abs.item_at(f"{SERIES_REL}/{folders[voice].name}"), voice, titles)

    # A regenerated chapter rebuilds Vivian's book in place: one item scan, in both modes.
    request, _ = books["Vivian"]
    with SpeechClient(server.base_url) as client:
        rebuilt = rebuild_chapters(request, [2], paths=data_paths, settings=SETTINGS, client=client)
    deliver_after_job(
        data_paths, config, "job-regen", rebuilt.output_dir, output_root=root, client_factory=_factory(upload)
    )
    deliver_book(
        folder_config, folders["Vivian"], root, store=folder_store, client_factory=_factory(folder_abs)
    )
    for fake in (upload, folder_abs):
        assert fake.item_scans == [fake.item_at(f"{SERIES_REL}/{folders['Vivian'].name}")["id"]]
        assert len(fake.items) == 2
        assert fake.library_scans == [fake.library_id] * 2  # no further library scan

    # The rebuilt m4b still carries the ISBN, every chapter mark, the cover and the other tags.
    m4b = folders["Vivian"] / "Hefty Water.m4b"
    tags = probe(m4b)["format"]["tags"]
    assert (tags["ISBN"], tags["title"], tags["show"], tags["episode_id"]) == (
        "9780306406157",
        "Hefty Water",
        "The Water Cycle",
        "2",
    )
    assert [c.title for c in probe_chapters(m4b)] == titles
    assert any(s.attached_pic for s in probe_streams(m4b)) == (folders["Vivian"] / "cover.jpg").exists()

    # The read-along EPUB the items got: EPUBCheck, 0 errors and 0 warnings.
    done = subprocess.run(
        ["java", "-jar", str(EPUBCHECK_JAR), str(folders["Vivian"] / "Hefty Water.readalong.epub")],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert "Messages: 0 fatals / 0 errors / 0 warnings" in done.stdout, done.stdout + done.stderr
    with zipfile.ZipFile(folders["Vivian"] / "Hefty Water.readalong.epub") as epub:
        opf = etree.fromstring(epub.read("EPUB/package.opf"))
    metas = {(m.get("property"), m.text) for m in opf.iter("{http://www.idpf.org/2007/opf}meta")}
    assert {
        ("schema:accessMode", "auditory"),
        ("schema:accessMode", "textual"),
        ("schema:accessibilityFeature", "synchronizedAudioText"),
        ("media:narrator", "Vivian - Qwen3-TTS 0.6B CustomVoice"),
        ("media:active-class", "-epub-media-overlay-active"),
    } <= metas

    # /opds lists both versions (behind the login) with their m4b and read-along EPUB.
    shelf = TestClient(build_opds(lambda: root, ("reader", "pw")))
    assert shelf.get("/").status_code == 401
    feed = feedparser.parse(shelf.get("/", auth=("reader", "pw")).content)
    assert sorted(c["name"] for e in feed.entries for c in e.contributors) == [
        "Ryan - Qwen3-TTS 0.6B CustomVoice",
        "Vivian - Qwen3-TTS 0.6B CustomVoice",
    ]
    assert all({"audio/mp4", "application/epub+zip"} <= {link.type for link in e.links} for e in feed.entries)


def test_a_book_without_author_or_description_gets_neither_made_up(
    data_paths: DataPaths, fake_server, tmp_path: Path
) -> None:
    server = fake_server(MODEL, env=FAST)
    _, result = _convert(
        data_paths, server, "Uncle_Fu", metadata=(("authors", ""), ("description", "")), chapters=(1,)
    )
    folder, root = Path(result["output_dir"]), SETTINGS.output_path(data_paths)
    assert folder.parent == root, folder  # no "Unknown Author" folder
    assert "comment" not in {k.lower() for k in probe(folder / "Hefty Water.m4b")["format"]["tags"]}
    fake = FakeAbs(tmp_path / "abs", watcher=False)
    config = AbsConfig(enabled=True, url="http://abs.lan:13378", token=fake.token, library=fake.library_id)
    record = deliver_after_job(
        data_paths, config, "job-1", folder, output_root=root, client_factory=_factory(fake)
    )
    assert record is not None and record.state == "delivered", record
    assert fake.uploads[0]["fields"] == {
        "title": folder.name,
        "library": fake.library_id,
        "folder": fake.folder_id,
    }
    meta = fake.item_at(folder.name)["metadata"]
    assert meta["authors"] == [] and not meta.get("description"), meta
    assert meta["narrators"] == ["Uncle Fu - Qwen3-TTS 0.6B CustomVoice"]
    assert meta["series"] == [{"name": "The Water Cycle", "sequence": "2"}] and meta["title"] == "Hefty Water"


def test_a_failed_delivery_is_recorded_and_retried_never_raised(
    data_paths: DataPaths, tmp_path: Path
) -> None:
    folder = tmp_path / "out" / "Ann Writer" / "Hefty Water {Vivian, M}"
    folder.mkdir(parents=True)
    subprocess.run(
        [
            "ffmpeg",
            "-v",
            "error",
            "-f",
            "lavfi",
            "-i",
            "anullsrc=r=24000:cl=mono",
            "-t",
            "0.3",
            "-c:a",
            "aac",
            str(folder / "Hefty Water.m4b"),
        ],
        check=True,
        timeout=60,
    )
    (folder / "metadata.json").write_text('{"title": "Hefty Water"}')

    def unreachable(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("connection refused", request=request)

    config = AbsConfig(enabled=True, url="http://abs.lan:13378", token="t", library="lib_books")
    down = lambda c: AbsClient(c.url, c.token, transport=httpx.MockTransport(unreachable))  # noqa: E731
    record = deliver_after_job(
        data_paths, config, "job-1", folder, output_root=tmp_path / "out", client_factory=down
    )
    assert record is not None and record.failed and "could not be reached" in record.error
    assert DeliveryStore.for_paths(data_paths).for_job("job-1") == record
    fake = FakeAbs(tmp_path / "abs")
    retry = deliver_book(
        dataclasses.replace(config, token=fake.token),
        folder,
        tmp_path / "out",
        store=DeliveryStore.for_paths(data_paths),
        job_id="job-1",
        client_factory=_factory(fake),
    )
    assert retry.state == "delivered" and [u["fields"]["title"] for u in fake.uploads] == [folder.name]
    # A flat-layout folder (every narrator version of a title) is never sent as one item.
    flat = tmp_path / "out" / "Ann Writer" / "Hefty Water"
    flat.mkdir()
    refused = deliver_book(
        dataclasses.replace(config, token=fake.token),
        flat,
        tmp_path / "out",
        store=DeliveryStore.for_paths(data_paths),
        client_factory=_factory(fake),
    )
    assert refused.failed and "outputs migrate" in refused.error and len(fake.uploads) == 1
    # A wrong token is a message that says what to do, not a traceback.
    with pytest.raises(DeliveryError, match="refused the API token"):
        AbsClient("http://abs.lan", "wrong", transport=fake.transport()).libraries()


def test_settings_are_owner_only_and_test_lists_libraries(data_paths: DataPaths, tmp_path: Path) -> None:
    data_paths.ensure()
    save_abs_config(
        data_paths, AbsConfig(enabled=True, url="http://abs.lan:13378", token="secret", library="lib_books")
    )
    assert abs_config_path(data_paths).stat().st_mode & 0o777 == 0o600
    assert load_abs_config(data_paths).token == "secret"
    fake = FakeAbs(tmp_path / "abs")
    with AbsClient("http://abs.lan:13378", fake.token, transport=fake.transport()) as client:
        assert [lib.label for lib in client.libraries()] == ["Audiobooks (book, 1 folder)"]


class _Clock:
    """A clock that moves only when the delivery sleeps."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds


def test_a_scan_dropped_while_another_runs_is_asked_again_until_the_book_shows(
    data_paths: DataPaths, fake_server, tmp_path: Path
) -> None:
    # Seen with the real Audiobookshelf 2.36 (bench/check_real_audiobookshelf.py): three uploads a
    # second apart, the second and third scans answered 200 during the first one and dropped.
    server = fake_server(MODEL, env=FAST)
    _, result = _convert(data_paths, server, "Vivian", chapters=(1,))
    folder, root = Path(result["output_dir"]), SETTINGS.output_path(data_paths)
    for busy, state in ((1, "delivered"), (1000, "failed")):
        fake = FakeAbs(tmp_path / f"abs-{busy}", watcher=False, busy_scans=busy)
        config = AbsConfig(
            enabled=True, url="http://abs.lan:13378", token=fake.token, library=fake.library_id
        )
        clock = _Clock()
        store = DeliveryStore(tmp_path / f"deliveries-{busy}.json")
        record = deliver_book(
            config, folder, root, store=store, client_factory=_factory(fake), clock=clock, sleep=clock.sleep
        )
        assert record.state == state, record
        if state == "delivered":
            assert len(fake.library_scans) == 2 and record.item_id == fake.item_at(record.rel_path)["id"]
        else:
            assert "did not show the book" in record.error and fake.items == {}
