"""Settings → Library delivery through gradio_client: Test lists the libraries of a (fake, real-HTTP)
Audiobookshelf, Save stores the token owner-only and the layout; the move button plans first."""

from __future__ import annotations

from pathlib import Path

from fastapi import FastAPI
from fastapi.testclient import TestClient

from omni_web.deliver.abs_config import abs_config_path, load_abs_config
from omni_web.deliver.opds import mount_opds
from omni_web.settings import load_settings
from tests.fakes.fake_abs import FakeAbs, serve_fake_abs


def test_test_lists_libraries_and_save_stores_owner_only(ui_app, tmp_path: Path) -> None:
    fake = FakeAbs(tmp_path / "abs")
    client = ui_app.client()
    with serve_fake_abs(fake) as url:
        status, library = client.predict(url, fake.token, None, api_name="/abs_test")
        assert "Audiobooks (book, 1 folder)" in status
        assert library["value"] == fake.library_id and library["choices"] == [
            ["Audiobooks (book, 1 folder)", fake.library_id]
        ]
    saved = client.predict(
        "flat", "opus", True, url, fake.token, fake.library_id, "upload", "", api_name="/abs_save"
    )
    assert "Delivery: on" in saved and "Layout: flat" in saved
    assert abs_config_path(ui_app.paths).stat().st_mode & 0o777 == 0o600
    config = load_abs_config(ui_app.paths)
    assert (config.url, config.token, config.library, config.mode) == (
        url,
        fake.token,
        fake.library_id,
        "upload",
    )
    assert (
        load_settings(ui_app.paths).output_layout == "flat"
        and load_settings(ui_app.paths).readalong_audio == "opus"
    )
    client.predict("library", "aac", False, "", "", None, "upload", "", api_name="/abs_save")
    assert load_settings(ui_app.paths).output_layout == "library" and not load_abs_config(ui_app.paths).active
    message = client.predict(api_name="/outputs_migrate_plan")
    assert "No flat-layout book to move." in str(message)


def test_the_shelf_is_mounted_before_the_apps_own_routes(tmp_path: Path) -> None:
    app = FastAPI()

    @app.get("/{anything:path}")
    def catch_all(anything: str) -> dict[str, str]:  # Gradio's routes take every path
        return {"gradio": anything}

    mount_opds(app, lambda: tmp_path, ("u", "p"))
    client = TestClient(app)
    assert client.get("/opds/").status_code == 401
    assert client.get("/opds/", auth=("u", "p")).headers["content-type"].startswith("application/atom+xml")


def test_a_failed_delivery_shows_on_the_job_and_retry_sends_it(ui_app, tmp_path: Path) -> None:
    import subprocess

    from omni_web.deliver.abs_config import AbsConfig, save_abs_config
    from omni_web.deliver.abs_delivery import DeliveryRecord, DeliveryStore

    root = ui_app.ctx.settings.output_path(ui_app.paths)
    folder = root / "Ann Writer" / "Hefty Water {Vivian, M}"
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
    store = DeliveryStore.for_paths(ui_app.paths)
    store.put(
        DeliveryRecord(
            folder=str(folder),
            rel_path="Ann Writer/Hefty Water {Vivian, M}",
            state="failed",
            job_id="job-x",
            error="Audiobookshelf at http://nas could not be reached.",
        )
    )
    fake = FakeAbs(tmp_path / "abs")
    with serve_fake_abs(fake) as url:
        save_abs_config(
            ui_app.paths, AbsConfig(enabled=True, url=url, token=fake.token, library=fake.library_id)
        )
        status = ui_app.client().predict("job-x", api_name="/delivery_retry")
    text = status[0] if isinstance(status, (list, tuple)) else status
    assert "uploaded and scanned as `Ann Writer/Hefty Water {Vivian, M}`" in text
    assert [u["fields"]["title"] for u in fake.uploads] == ["Hefty Water {Vivian, M}"] and len(
        fake.items
    ) == 1
    assert store.for_job("job-x").state == "delivered"
