"""Settings → Storage: what the data root and the output folder hold, and pruning what finished
books no longer need. Thin over :mod:`omni_web.storage` (the same calls as ``python -m omni_web storage``)."""

from __future__ import annotations

from typing import Any

import gradio as gr

from omni_web.backend.disk import format_bytes
from omni_web.storage import StorageReport, prune_plan, storage_report
from omni_web.ui.context import UiContext
from omni_web.ui.errors import guarded

__all__ = ["build", "report_markdown"]


def report_markdown(report: StorageReport) -> str:
    """Sizes by kind, then by book, as Markdown tables."""
    rows = [f"Data root `{report.root}`, output folder `{report.output_root}`.", "",
            "| What | Size | Files |", "|---|---:|---:|"]
    rows += [f"| {k.label} | {k.size_str} | {k.files:,} |" for k in report.kinds if k.size_bytes or k.files]
    rows.append(f"| **Total** | **{format_bytes(report.total_bytes)}** | |")
    books = [b for b in report.books if b.chunk_bytes or b.current_bytes or b.superseded_bytes]
    if books:
        rows += [
            "",
            "| Book | State | Chunks | Chapter versions in use | Superseded |",
            "|---|---|---:|---:|---:|",
        ]
        for b in books:
            state = "in work" if b.busy else ("finished" if b.finished else "not finished")
            rows.append(
                f"| {b.title} | {state} | {format_bytes(b.chunk_bytes)} | {format_bytes(b.current_bytes)} | "
                f"{format_bytes(b.superseded_bytes)} |"
            )
    return "\n".join(rows)


def build(ctx: UiContext) -> None:
    """The Storage section (inside the Settings tab): measured when opened (walking the folders costs a
    moment on a big library, so not on every page load), pruned after a confirm."""
    with gr.Accordion("Storage", open=False, elem_id="settings-storage") as section:
        gr.Markdown(
            "What the chunk cache, chapter versions and books take on disk. Pruning removes the chunk "
            "cache of finished books, superseded chapter versions and converted books no job reads; "
            "books a queued or running job works on are skipped."
        )
        table = gr.Markdown(elem_id="settings-storage-table")
        with gr.Row():
            measure = gr.Button("Measure", size="sm", elem_id="settings-storage-measure")
            plan = gr.Button("Prune…", size="sm", elem_id="settings-storage-plan")
        confirm = gr.Markdown(elem_id="settings-storage-confirm")
        with gr.Row():
            prune = gr.Button(
                "Prune now", variant="stop", size="sm", visible=False, elem_id="settings-storage-prune"
            )
            cancel = gr.Button("Keep everything", size="sm", visible=False, elem_id="settings-storage-cancel")

    @guarded
    def measured() -> str:
        return report_markdown(storage_report(ctx.paths, ctx.settings))

    @guarded
    def planned() -> list[Any]:
        found = prune_plan(ctx.paths, ctx.settings)
        if not found.files:
            return [
                "Nothing to prune.\n\n" + found.summary(),
                gr.update(visible=False),
                gr.update(visible=False),
            ]
        return [found.summary(), gr.update(visible=True), gr.update(visible=True)]

    @guarded
    def pruned() -> list[Any]:
        result = prune_plan(ctx.paths, ctx.settings).execute()  # planned again: jobs may have changed
        note = f"Freed {result.freed_str} ({result.freed_bytes:,} bytes, {result.files:,} files)."
        if result.skipped:
            note += f" {result.skipped} file(s) kept: a job started on their book, or they were gone."
        return [note, gr.update(visible=False), gr.update(visible=False), measured()]

    def kept() -> list[Any]:
        return ["Nothing removed.", gr.update(visible=False), gr.update(visible=False)]

    measure.click(measured, None, table, api_name="storage_measure")
    section.expand(measured, None, table, api_visibility="private")
    plan.click(planned, None, [confirm, prune, cancel], api_name="storage_plan")
    prune.click(pruned, None, [confirm, prune, cancel, table], api_name="storage_prune")
    cancel.click(kept, None, [confirm, prune, cancel], api_visibility="private")
