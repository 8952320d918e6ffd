"""Check against the real Audiobookshelf: how it reads the books the app makes.

Not a test (the suite cannot fetch Audiobookshelf: it is not on a package registry): a check run
by hand on a machine with its source. It converts one series book in two voices (the fake
sgl-omni), starts Audiobookshelf from ``--abs DIR`` (a checkout whose ``npm install --omit=dev``
has run, its sqlite3 built: ``npx node-gyp rebuild --nodedir=/usr`` in node_modules/sqlite3) on a
free loopback port with its own config and metadata folders, and prints what it shows for:

Versions: two voices of a series book, and a third made with no author and no description.

1. the app's library folder scanned (every sidecar), then a copy with the m4b and folder names
   alone (no sidecar), each in its own library with the folder watcher off;
2. the app's upload (``deliver_book``) into a library without a watcher.

    .venv/bin/python bench/check_real_audiobookshelf.py --abs /tmp/abs236

Audiobookshelf is stopped by its own pid.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from omni_web.client import SpeechClient, VoiceChoice  # noqa: E402
from omni_web.deliver.abs_config import AbsConfig  # noqa: E402
from omni_web.deliver.abs_delivery import DeliveryStore, deliver_book  # noqa: E402
from omni_web.paths import DataPaths  # noqa: E402
from omni_web.pipeline import ConvertRequest, run_conversion  # noqa: E402
from omni_web.settings import Settings  # noqa: E402
from tests.fakes.sgl_omni import free_port, start_fake_server  # noqa: E402

BOOK = ROOT / "tests" / "data" / "hefty-water-series.epub"
MODEL = "qwen3_tts_0_6b_customvoice"
SETTINGS = Settings(qa_level="off", pause_between_chapters_ms=500)
# Two voices of the book, and one made with no author and no description (nothing made up).
VERSIONS = (
    ("Vivian", {}),
    ("Ryan", {}),
    ("Uncle_Fu", {"metadata": (("authors", ""), ("description", "")), "chapters": (1,)}),
)


def convert(paths: DataPaths) -> dict[str, Path]:
    """Each version of the book, in the app's library layout: voice -> its folder."""
    folders = {}
    env = {"FAKE_SGL_SECONDS_PER_WORD": "0.004"}
    with start_fake_server(MODEL, env=env, log_path=paths.root / "fake.log") as server:
        for voice, changes in VERSIONS:
            request = ConvertRequest(
                book_path=BOOK, model_key=MODEL, voice=VoiceChoice.speaker(voice), **changes
            )
            with SpeechClient(server.base_url) as client:
                result = run_conversion(request, paths=paths, settings=SETTINGS, client=client)
            folders[voice] = Path(result.to_dict()["output_dir"])
    return folders


class Abs:
    """A running Audiobookshelf with a root user, stopped by its pid."""

    def __init__(self, source: Path, work: Path) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        argv = [
            "node",
            "index.js",
            "--config",
            str(work / "config"),
            "--metadata",
            str(work / "metadata"),
            "--port",
            str(self.port),
        ]
        env = {
            "PATH": "/usr/bin:/bin",
            "FFMPEG_PATH": shutil.which("ffmpeg") or "",
            "FFPROBE_PATH": shutil.which("ffprobe") or "",
            "ROUTER_BASE_PATH": "",
            "HOST": "127.0.0.1",
        }
        self.log = (work / "abs.log").open("w")
        self.process = subprocess.Popen(argv, cwd=source, env=env, stdout=self.log, stderr=subprocess.STDOUT)
        self._wait_up()
        httpx.post(
            f"{self.url}/init", json={"newRoot": {"username": "root", "password": "pw"}}
        ).raise_for_status()
        login = httpx.post(f"{self.url}/login", json={"username": "root", "password": "pw"})
        login.raise_for_status()
        user = login.json()["user"]
        self.token = user.get("accessToken") or user["token"]

    def _wait_up(self) -> None:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                if httpx.get(f"{self.url}/status", timeout=2).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.2)
        raise RuntimeError("Audiobookshelf did not start (see abs.log)")

    def api(self, method: str, path: str, **kwargs: object) -> httpx.Response:
        response = httpx.request(
            method,
            f"{self.url}{path}",
            headers={"Authorization": f"Bearer {self.token}"},
            timeout=60,
            **kwargs,
        )
        response.raise_for_status()
        return response

    def library(self, name: str, folder: Path) -> str:
        """A book library on ``folder`` with its folder watcher off."""
        body = {
            "name": name,
            "mediaType": "book",
            "folders": [{"fullPath": str(folder)}],
            "settings": {"disableWatcher": True},
        }
        return str(self.api("POST", "/api/libraries", json=body).json()["id"])

    def items(self, library_id: str, expected: int) -> list[dict]:
        """The library's items once ``expected`` are there (a scan runs in the background)."""
        deadline = time.monotonic() + 60
        while True:
            results = self.api("GET", f"/api/libraries/{library_id}/items", params={"limit": 0}).json()[
                "results"
            ]
            if len(results) >= expected or time.monotonic() > deadline:
                return results
            time.sleep(0.5)

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.process.kill()
        self.log.close()


def show(abs_server: Abs, label: str, items: list[dict]) -> None:
    print(f"\n{label}: {len(items)} items")
    for listed in items:
        item = abs_server.api("GET", f"/api/items/{listed['id']}", params={"expanded": 1}).json()
        meta = item["media"]["metadata"]
        chapters = len(item["media"].get("chapters") or [])
        print(
            f"  {item['relPath']}\n    title {meta.get('title')!r}; authors {meta.get('authorName')!r}; "
            f"narrators {meta.get('narratorName')!r}; series {meta.get('seriesName')!r}; "
            f"isbn {meta.get('isbn')!r}; chapters {chapters}; description {meta.get('description')!r}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--abs", type=Path, required=True, help="an Audiobookshelf checkout, installed")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        paths = DataPaths(root=work / "app").ensure()
        folders = convert(paths)
        root = SETTINGS.output_path(paths)
        bare = work / "bare"
        for folder in folders.values():
            copy = bare / folder.relative_to(root)
            copy.mkdir(parents=True)
            for m4b in folder.glob("*.m4b"):
                shutil.copy2(m4b, copy / m4b.name)
        uploads = work / "uploads"
        uploads.mkdir()
        abs_server = Abs(args.abs, work)
        try:
            version = abs_server.api("GET", "/status").json().get("serverVersion")
            print(f"Audiobookshelf {version} at {abs_server.url}")
            for label, folder in (
                ("the app's folders, every sidecar", root),
                ("m4b and folder names alone", bare),
            ):
                library = abs_server.library(label, folder)
                abs_server.api("POST", f"/api/libraries/{library}/scan")
                show(abs_server, label, abs_server.items(library, len(VERSIONS)))
            library = abs_server.library("upload, no watcher", uploads)
            config = AbsConfig(enabled=True, url=abs_server.url, token=abs_server.token, library=library)
            store = DeliveryStore.for_paths(paths)
            for voice, folder in folders.items():
                record = deliver_book(config, folder, root, store=store, job_id=f"job-{voice}")
                print(f"upload {voice}: {record.state} ({record.mode}) {record.error}")
            uploaded = abs_server.items(library, len(VERSIONS))
            show(abs_server, "uploaded by the app", uploaded)
            if len(uploaded) < len(VERSIONS):
                print("  (fewer items than uploads; Audiobookshelf's log ends:)")
                lines = (work / "abs.log").read_text(encoding="utf-8", errors="replace").splitlines()
                print("\n".join(f"    {line}" for line in lines[-25:]))
        finally:
            abs_server.stop()


if __name__ == "__main__":
    main()
