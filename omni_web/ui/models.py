"""Models tab: the catalog as a checkbox tree by upstream org, applied as one cancelable task.

The checked boxes are compared with the Hugging Face cache (the only truth about what is
installed): unchecked installed models are removed after a confirm, newly checked ones are
downloaded; removals run first. When the task ends the tree is read from the disk again.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from typing import Any

import gradio as gr

from omni_web.catalog import CATALOG, CatalogEntry
from omni_web.errors import ModelError
from omni_web.models import (
    CachedModel,
    apply_model_diff,
    cached_models,
    hub_cache_dir,
    installed_keys,
    plan_removal,
)
from omni_web.tasks import TaskHandle
from omni_web.ui.asr_models import build_asr_models_box
from omni_web.ui.context import TASK_MODELS, OnLoad, UiContext
from omni_web.ui.errors import guarded
from omni_web.ui.labels import model_name
from omni_web.ui.taskpanel import TaskPanel, build_task_panel, task_view
from omni_web.ui.widgets import badge, esc, table

__all__ = ["ModelsRefs", "build", "catalog_orgs", "choice_label"]


def catalog_orgs() -> list[str]:
    """Upstream orgs in catalog order (one checkbox group each)."""
    return list(dict.fromkeys(entry.org for entry in CATALOG))


def choice_label(entry: CatalogEntry, cached: CachedModel | None) -> str:
    """``Qwen3-TTS 0.6B Base  -  installed, 2.4 GB`` (or the download size when not installed)."""
    if cached is None:
        state = f"~{entry.approx_download_gb:g} GB download"
    elif cached.complete:
        state = f"installed, {cached.size_str}"
    else:
        state = f"partial ({cached.detail}), {cached.size_str}; check to finish"
    return f"{entry.label}  -  {state}"


@dataclass(frozen=True, slots=True)
class ModelsRefs:
    """The Models tab's components (one checkbox group per org, in ``catalog_orgs()`` order)."""

    groups: list[gr.CheckboxGroup]
    details: gr.HTML
    apply: gr.Button
    cancel: gr.Button
    confirm_box: gr.Column
    confirm_text: gr.HTML
    confirm_yes: gr.Button
    confirm_no: gr.Button
    pending: gr.State
    panel: TaskPanel
    timer: gr.Timer
    on_load: OnLoad | None = field(default=None)


def _render_tree(ctx: UiContext) -> list[Any]:
    """One ``gr.update`` per org group (choices and checked boxes from the disk), then the details."""
    cached = {model.key: model for model in cached_models(cache_dir=ctx.hf_cache_dir)}
    updates = []
    for org in catalog_orgs():
        entries = [entry for entry in CATALOG if entry.org == org]
        choices = [(choice_label(entry, cached.get(entry.key)), entry.key) for entry in entries]
        checked = [entry.key for entry in entries if entry.key in cached and cached[entry.key].complete]
        updates.append(gr.update(choices=choices, value=checked))
    rows = []
    for entry in CATALOG:
        model = cached.get(entry.key)
        status = badge(model.status_str) if model else badge("not installed", tone="mute")
        size = model.size_str if model else f"~{entry.approx_download_gb:g} GB"
        rows.append(
            (
                esc(entry.label),
                esc(entry.org),
                f'<span class="ow-nowrap">{esc(" ".join(entry.capabilities))}</span>',
                status,
                f'<span class="ow-nowrap">{esc(size)}</span>',
                esc(entry.vram_note),
            )
        )
    cache_dir = hub_cache_dir(ctx.hf_cache_dir)
    details = table(["Model", "Org", "Can", "Status", "Size", "Notes"], rows, raw_columns=(0, 1, 2, 3, 4, 5))
    details += f'<div class="ow-dim">Hugging Face cache: <code>{esc(cache_dir)}</code></div>'
    return [*updates, details]


def _diff(ctx: UiContext, checked_groups: Iterable[list[str] | None]) -> tuple[list[str], list[str]]:
    """(keys to download, keys to remove) in catalog order, comparing the boxes with the disk."""
    checked = {key for group in checked_groups for key in (group or [])}
    installed = installed_keys(cache_dir=ctx.hf_cache_dir)
    add = [entry.key for entry in CATALOG if entry.key in checked and entry.key not in installed]
    remove = [entry.key for entry in CATALOG if entry.key in installed and entry.key not in checked]
    return add, remove


def _start_diff(ctx: UiContext, add: list[str], remove: list[str]) -> None:
    server = ctx.services.server

    def work(handle: TaskHandle) -> str:
        result = apply_model_diff(
            add,
            remove,
            paths=ctx.paths,
            stop_server_hosting=lambda key: server.stop_before_removing(key, log=handle.log),
            progress=lambda p: handle.progress(p.fraction, p.summary),
            log=handle.log,
            cancel=handle.cancel_event,
            cache_dir=ctx.hf_cache_dir,
            endpoint=ctx.hf_endpoint,
        )
        for warning in result.warnings:
            handle.log(f"WARNING: {warning}")
        if result.failed:
            raise ModelError(" ".join(failure_line(key, message) for key, message in result.failed))
        return diff_done_line(result.removed, [r.key for r in result.installed])

    ctx.tasks.start(TASK_MODELS, diff_title(add, remove), work)


def _names(keys: Iterable[str]) -> str:
    return ", ".join(model_name(key) for key in keys)


def diff_title(add: Iterable[str], remove: Iterable[str]) -> str:
    """The task's title: ``Model changes: download Qwen3-TTS 0.6B Base; remove ZONOS2``."""
    add, remove = list(add), list(remove)
    parts = [f"download {_names(add)}" if add else "", f"remove {_names(remove)}" if remove else ""]
    return "Model changes: " + "; ".join(p for p in parts if p)


def diff_done_line(removed: Iterable[str], installed: Iterable[str]) -> str:
    """``Done: removed ZONOS2, installed Qwen3-TTS 0.6B Base.`` (models by name, never by key)."""
    done = [
        *(f"removed {model_name(key)}" for key in removed),
        *(f"installed {model_name(key)}" for key in installed),
    ]
    return "Done: " + (", ".join(done) or "nothing changed") + "."


def failure_line(key: str, message: str) -> str:
    """One model's failure, named once: messages that already name the model are kept as they are."""
    label = model_name(key)
    return message if label in message else f"{label}: {message}"


def build(ctx: UiContext) -> ModelsRefs:
    """Create the Models tab's components and wire them (inside a ``gr.Tab``)."""
    gr.Markdown(
        "Check the models to keep on this machine and press **Apply**. Unchecking an installed model "
        "removes its weights (after a confirm); checking one downloads it into the Hugging Face cache. "
        "Downloads resume where they stopped."
    )
    with gr.Row(equal_height=False):
        with gr.Column(scale=3, elem_id="models-tree"):
            groups = [gr.CheckboxGroup(label=org, elem_classes=["ow-tree-group"]) for org in catalog_orgs()]
            with gr.Row():
                apply = gr.Button("Apply", variant="primary", elem_id="models-apply")
                cancel = gr.Button("Cancel", variant="stop", elem_id="models-cancel")
            with gr.Column(
                visible=False, elem_id="models-confirm", elem_classes=["ow-dialog"]
            ) as confirm_box:
                confirm_text = gr.HTML(padding=True)
                with gr.Row():
                    confirm_yes = gr.Button("Remove and apply", variant="stop", elem_id="models-confirm-yes")
                    confirm_no = gr.Button("Back", elem_id="models-confirm-no")
        with gr.Column(scale=2):
            panel = build_task_panel(log_label="Model changes log", elem_prefix="models", lines=16)
    gr.Markdown("### Catalog")
    details = gr.HTML(elem_id="models-details", padding=False)
    build_asr_models_box(ctx)  # the QA recognisers, in the same HF cache
    refs = ModelsRefs(
        groups,
        details,
        apply,
        cancel,
        confirm_box,
        confirm_text,
        confirm_yes,
        confirm_no,
        gr.State(None),
        panel,
        gr.Timer(1.0),
    )
    return replace(refs, on_load=_wire(ctx, refs))


def _wire(ctx: UiContext, refs: ModelsRefs) -> OnLoad:
    panel = refs.panel
    tree_out = [*refs.groups, refs.details]
    task_out = [panel.status, panel.log, panel.seen]
    confirm_out = [refs.confirm_box, refs.confirm_text, refs.pending]

    def task_outputs(seen: dict[str, Any] | None) -> list[Any]:
        view = task_view(ctx.tasks.snapshot(TASK_MODELS), seen)
        return [view.status_html, view.log_text, view.seen]

    @guarded
    def load(seen: dict[str, Any] | None) -> list[Any]:
        return [*_render_tree(ctx), *task_outputs(None)]

    @guarded
    def tick(seen: dict[str, Any] | None) -> list[Any]:
        view = task_view(ctx.tasks.snapshot(TASK_MODELS), seen)
        tree = _render_tree(ctx) if view.just_finished else [gr.skip()] * len(tree_out)
        return [*tree, view.status_html, view.log_text, view.seen]

    @guarded
    def apply(seen: dict[str, Any] | None, *checked: list[str]) -> list[Any]:
        add, remove = _diff(ctx, checked)
        if not add and not remove:
            gr.Info("Nothing to change: the checked models are exactly the installed ones.")
            return [gr.update(visible=False), "", None, *task_outputs(seen)]
        if remove:
            plan = plan_removal(remove, cache_dir=ctx.hf_cache_dir)
            record = ctx.services.server.owned_record()
            lines = [f"<p><b>{esc(plan.summary)}</b></p>"]
            if record is not None and record.model_key in remove:
                lines.append(
                    f"<p>The running server hosting {esc(model_name(record.model_key))} is stopped first.</p>"
                )
            if add:
                lines.append(f"<p>Then download: {esc(_names(add))}.</p>")
            return [
                gr.update(visible=True),
                "".join(lines),
                {"add": add, "remove": remove},
                *task_outputs(seen),
            ]
        _start_diff(ctx, add, [])
        return [gr.update(visible=False), "", None, *task_outputs(seen)]

    @guarded
    def confirm(pending: dict[str, list[str]] | None, seen: dict[str, Any] | None) -> list[Any]:
        if pending:
            _start_diff(ctx, pending["add"], pending["remove"])
        return [gr.update(visible=False), "", None, *task_outputs(seen)]

    @guarded
    def cancel(seen: dict[str, Any] | None) -> list[Any]:
        if not ctx.tasks.cancel(TASK_MODELS):
            gr.Info("No model changes are running.")
        return task_outputs(seen)

    refs.apply.click(apply, [panel.seen, *refs.groups], [*confirm_out, *task_out], api_name="models_apply")
    refs.confirm_yes.click(
        confirm, [refs.pending, panel.seen], [*confirm_out, *task_out], api_name="models_confirm"
    )
    refs.confirm_no.click(
        lambda: (gr.update(visible=False), "", None), None, confirm_out, api_visibility="private"
    )
    refs.cancel.click(cancel, [panel.seen], task_out, api_name="models_cancel")
    refs.timer.tick(
        tick, [panel.seen], [*tree_out, *task_out], show_progress="hidden", api_visibility="private"
    )
    return OnLoad(load, [panel.seen], [*tree_out, *task_out])
