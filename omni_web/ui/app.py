"""The web UI assembled from its tabs, and the options it is launched with.

Each tab module builds its own components (``build(ctx) -> <Tab>Refs``); this module puts them in
tabs, registers what every tab renders when a page opens, and links Generate to Jobs. Files are
served only from the output folder and the voice library; the data root's state and envs folders
are blocked outright.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import gradio as gr

from omni_web.auth import Credentials
from omni_web.ui import generate, jobs, models, queue_tab, server, settings, setup, shelf
from omni_web.ui.context import OnLoad, UiContext
from omni_web.ui.live import POLL_JS, mount_live, poll_answer
from omni_web.ui.menu_watch import serving_identity
from omni_web.ui.notify import build_notifier, page_title
from omni_web.ui.style import CSS, JS, THEME

__all__ = ["MAX_UPLOAD_BYTES", "AppRefs", "build_app", "launch_options", "mount_page_poll"]

# An EPUB or a voice clip; anything bigger is refused before it is written to disk.
MAX_UPLOAD_BYTES = 200 * 1024 * 1024
TAB_IDS = ("generate", "jobs", "shelf", "queue", "server", "models", "setup", "settings")


@dataclass(frozen=True, slots=True)
class AppRefs:
    """Every tab's refs, for tests and for linking tabs."""

    tabs: gr.Tabs
    setup: setup.SetupRefs
    models: models.ModelsRefs
    server: server.ServerRefs
    generate: generate.GenerateRefs
    jobs: jobs.JobsRefs
    queue: queue_tab.QueueRefs
    settings: settings.SettingsRefs
    shelf: shelf.ShelfRefs | None = None


def _register_load(demo: gr.Blocks, name: str, on_load: OnLoad | None) -> None:
    if on_load is not None:
        demo.load(on_load.fn, list(on_load.inputs), list(on_load.outputs), api_name=f"{name}_load",
                  show_progress="hidden")


def _link_generate_to_jobs(ctx: UiContext, refs: AppRefs) -> None:
    """After a job is queued, open the Jobs tab with that job selected."""

    def follow(job_id: str) -> tuple[Any, Any]:
        if not job_id:
            return gr.skip(), gr.skip()
        choices = jobs.job_choices(ctx.services.library.jobs.list())
        return gr.Tabs(selected="jobs"), gr.update(choices=choices, value=job_id)

    for event in refs.generate.submit_events:
        event.success(
            follow, [refs.generate.submitted], [refs.tabs, refs.jobs.pick], api_visibility="private"
        )


def _link_first_run_to_tabs(refs: AppRefs) -> None:
    """Each step of Generate's first-run checklist opens the tab where it is done."""
    for button, tab in refs.generate.first_run.buttons:
        button.click(lambda tab=tab: gr.Tabs(selected=tab), None, refs.tabs, api_visibility="private")


def _serve_outputs_in_place(ctx: UiContext) -> None:
    """Finished books and chapters are served from the output folder itself.

    Gradio otherwise copies every file a component shows into its cache (a 600 MB copy per m4b
    opened); files under a static path are served where they are. The folder is already among
    ``allowed_paths``, so this widens nothing.
    """
    output_dir = Path(ctx.settings.output_path(ctx.paths)).resolve()
    output_dir.mkdir(parents=True, exist_ok=True)
    gr.set_static_paths([output_dir])


def build_app(ctx: UiContext) -> tuple[gr.Blocks, AppRefs]:
    """Build the Blocks app over ``ctx``; returns it with every tab's refs."""
    _serve_outputs_in_place(ctx)
    # Other served files (uploads, previews) are cached under GRADIO_TEMP_DIR; drop copies older than 6 h.
    with gr.Blocks(title="omni-web", analytics_enabled=False, delete_cache=(3600, 6 * 3600)) as demo:
        gr.HTML(
            '<div class="ow-header"><span class="ow-logo">omni-web</span>'
            '<span class="ow-tagline">Books (EPUB, PDF, Word, text …) → audiobooks with '
            'SGLang-Omni</span></div>',
            padding=False,
            js_on_load=POLL_JS,  # the page's one poll (omni_web/ui/live.py)
        )
        with gr.Tabs(elem_id="ow-tabs") as tabs:
            with gr.Tab("Generate", id="generate", elem_id="tab-generate"):
                generate_refs = generate.build(ctx)
            with gr.Tab("Jobs", id="jobs", elem_id="tab-jobs"):
                jobs_refs = jobs.build(ctx)
            with gr.Tab("Shelf", id="shelf", elem_id="tab-shelf") as shelf_tab:  # in view on a phone too
                shelf_refs = shelf.build(ctx, shelf_tab)
            with gr.Tab("Queue", id="queue", elem_id="tab-queue"):
                queue_refs = queue_tab.build(ctx)
            with gr.Tab("Server", id="server", elem_id="tab-server"):
                server_refs = server.build(ctx)
            with gr.Tab("Models", id="models", elem_id="tab-models"):
                models_refs = models.build(ctx)
            with gr.Tab("Setup", id="setup", elem_id="tab-setup"):
                setup_refs = setup.build(ctx)
            with gr.Tab("Settings", id="settings", elem_id="tab-settings"):
                settings_refs = settings.build(ctx)
        build_notifier(ctx)  # a toast and the tab title on every tab when a job ends
        refs = AppRefs(
            tabs,
            setup_refs,
            models_refs,
            server_refs,
            generate_refs,
            jobs_refs,
            queue_refs,
            settings_refs,
            shelf_refs,
        )
        for name in TAB_IDS:
            _register_load(demo, name, getattr(refs, name).on_load)
        _link_generate_to_jobs(ctx, refs)
        _link_first_run_to_tabs(refs)
    return demo, refs


def mount_page_poll(gradio_app: Any, ctx: UiContext) -> None:
    """``/live/poll`` for the page's poll (omni_web/ui/live.py), on the launched app."""

    def title(jobs: list[Any]) -> str:
        # Only a running job's share; the notifier's event names a finished one.
        return page_title(jobs, None) if any(job.state.value == "running" for job in jobs) else ""

    def answer(selected: str | None) -> dict[str, Any]:
        identity = lambda: serving_identity(ctx.services.server.status(max_age_s=2.5))  # noqa: E731
        return poll_answer(ctx.services, ctx.settings, ctx.paths, selected, identity, title)

    mount_live(gradio_app, answer)


def launch_options(
    ctx: UiContext, *, host: str, port: int, credentials: Credentials | None
) -> dict[str, Any]:
    """Keyword arguments for ``demo.launch``: address, login, file access, upload limit, look."""
    output_dir = ctx.settings.output_path(ctx.paths)
    output_dir.mkdir(parents=True, exist_ok=True)
    blocked = [ctx.paths.state_dir, ctx.paths.envs_dir, ctx.paths.settings_file]
    return {
        "server_name": host,
        "server_port": port,
        "auth": credentials.as_tuple() if credentials is not None else None,
        "auth_message": "Log in with the user and password omni-web printed when it started.",
        "allowed_paths": [str(Path(output_dir).resolve()), str(ctx.paths.voices_dir.resolve())],
        "blocked_paths": [str(Path(p).resolve()) for p in blocked],
        "max_file_size": MAX_UPLOAD_BYTES,
        "show_error": True,
        "quiet": True,
        "footer_links": [],
        "run_history": False,
        "ssr_mode": False,
        "theme": THEME,
        "css": CSS,
        "js": JS,
    }
