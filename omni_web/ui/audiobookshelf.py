"""Settings tab: Audiobookshelf delivery, the output layout, and moving flat books into it.

Thin over omni_web/deliver: the settings are saved owner-only by
:func:`omni_web.deliver.abs_config.save_abs_config`; Test lists the server's libraries; the move
is planned first and runs only on the second button.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import gradio as gr

from omni_web.deliver.abs_client import AbsClient
from omni_web.deliver.abs_config import AbsConfig, load_abs_config, save_abs_config
from omni_web.deliver.migrate import MigrationPlan, plan_migration
from omni_web.ui.context import UiContext
from omni_web.ui.errors import guarded

__all__ = ["build"]

_LAYOUTS = [("one folder per book and narrator (library)", "library"), ("flat (older)", "flat")]
_LAYOUT_INFO = "Library: what Audiobookshelf and Storyteller expect; MP3 and ACX sets in mp3/ and acx/."
_READALONG_AUDIO = [
    ("AAC (every reader)", "aac"),
    ("Opus (about 0.4× the audio size; EPUB 3.3 readers)", "opus"),
]


def _config_from(
    on: object, url: object, token: object, library: object, how: object, path: object
) -> AbsConfig:
    """The delivery settings as the form gives them (text trimmed, blanks as empty)."""
    return dataclasses.replace(
        AbsConfig(),
        enabled=bool(on),
        url=str(url or "").strip(),
        token=str(token or "").strip(),
        library=str(library or ""),
        mode=str(how),
        folder_path=str(path or "").strip(),
    )


def _listed_libraries(url: str, token: str, chosen: str | None) -> tuple[str, dict]:
    """The server's libraries as the dropdown's choices, keeping the chosen one if the server has it."""
    with AbsClient(url.strip(), token) as client:
        libraries = client.libraries()
    choices = [(lib.label, lib.id) for lib in libraries]
    value = chosen if chosen in {lib.id for lib in libraries} else (choices[0][1] if choices else None)
    listed = ", ".join(lib.label for lib in libraries) or "none this token can see"
    return f"Connected. Libraries: {listed}.", gr.update(choices=choices, value=value)


def _planned_moves(found: MigrationPlan) -> tuple[str, dict]:
    """What a move would do, and the Move button shown only when there is something to move."""
    if not found.books:
        return "No flat-layout book to move.", gr.update(visible=False)
    names = "\n".join(f"- `{b.m4b.name}` → `{b.place.folder.name}/`" for b in found.books)
    counted = f"{len(found.books)} books ({found.move_count} files and folders)"
    return f"{counted} would move:\n{names}", gr.update(visible=True)


def build(ctx: UiContext) -> tuple[list[Any], Callable[[], list[Any]]]:
    """The section's components and wiring (inside the Settings tab); returns the components a page
    load fills and the function that gives their saved values (settings may change in another browser)."""
    config = load_abs_config(ctx.paths)
    with gr.Accordion("Library delivery (Audiobookshelf, output layout)", open=False, elem_id="settings-abs"):
        layout = gr.Radio(_LAYOUTS, value=ctx.settings.output_layout, label="Output layout",
                          elem_id="settings-layout", info=_LAYOUT_INFO)
        audio = gr.Radio(_READALONG_AUDIO, value=ctx.settings.readalong_audio, label="Read-along EPUB audio",
                         elem_id="settings-ra-audio")
        enabled = gr.Checkbox(value=config.enabled, label="Deliver finished books to Audiobookshelf",
                              elem_id="settings-abs-enabled")
        url = gr.Textbox(value=config.url, label="Server URL", placeholder="http://nas.lan:13378",
                         elem_id="settings-abs-url")
        token = gr.Textbox(value=config.token, label="API token", type="password",
                           elem_id="settings-abs-token",
                           info="Stored owner-only in state/audiobookshelf.json.")
        known_library = [config.library] if config.library else []
        library = gr.Dropdown(choices=known_library, value=config.library or None,
                              label="Library", allow_custom_value=True, elem_id="settings-abs-library",
                              info="Test fills this list from the server.")
        mode = gr.Radio([("upload", "upload"), ("write into the library folder, then scan", "folder")],
                        value=config.mode, label="How", elem_id="settings-abs-mode")
        folder = gr.Textbox(value=config.folder_path, label="Library folder on this machine (folder mode)",
                            elem_id="settings-abs-folder")
        with gr.Row():
            test = gr.Button("Test", elem_id="settings-abs-test")
            save = gr.Button("Save delivery settings", variant="primary", elem_id="settings-abs-save")
            plan = gr.Button("Find flat books to move", elem_id="settings-migrate-plan")
            move = gr.Button("Move them", variant="stop", visible=False, elem_id="settings-migrate-run")
        status = gr.Markdown(elem_id="settings-abs-status")

    @guarded
    def run_test(url_value: str, token_value: str, chosen: str | None) -> tuple[str, dict]:
        return _listed_libraries(url_value, token_value, chosen)

    @guarded
    def run_save(layout_value: str, audio_value: str, *values: object) -> str:
        saved = save_abs_config(ctx.paths, _config_from(*values))
        ctx.save_settings(dataclasses.replace(ctx.settings, output_layout=layout_value,
                                              readalong_audio=audio_value).validate())
        return f"Saved. Layout: {layout_value}. Delivery: {'on' if saved.active else 'off'}."

    @guarded
    def run_plan() -> tuple[str, dict]:
        return _planned_moves(plan_migration(ctx.settings.output_path(ctx.paths)))

    @guarded
    def run_move() -> tuple[str, dict]:
        migration = plan_migration(ctx.settings.output_path(ctx.paths))
        moved = migration.execute(job_store=ctx.services.library.jobs)
        return f"Moved {moved} books into the library layout.", gr.update(visible=False)

    test.click(run_test, [url, token, library], [status, library], api_name="abs_test")
    fields = [layout, audio, enabled, url, token, library, mode, folder]
    save.click(run_save, fields, status, api_name="abs_save")
    plan.click(run_plan, None, [status, move], api_name="outputs_migrate_plan")
    move.click(run_move, None, [status, move], api_name="outputs_migrate", concurrency_limit=1)

    def saved() -> list[Any]:
        now = load_abs_config(ctx.paths)
        settings = ctx.settings
        return [settings.output_layout, settings.readalong_audio, now.enabled, now.url, now.token,
                gr.update(choices=[now.library] if now.library else [], value=now.library or None), now.mode,
                now.folder_path]

    return fields, saved
