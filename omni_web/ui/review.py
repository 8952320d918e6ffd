"""QA review panel of the Jobs tab: the selected job's flagged chunks, each playable, with
accept as is, regenerate, or edit the text and regenerate.

Attached to the Jobs tab with one call (``build_review_panel(ctx, pick)``), so the tab's layout
can change around it. Everything here is read from the book's QA report (finished jobs) or the
job's progress and the chunk records (running jobs); regenerating queues a conversion that sends
one request and rebuilds only that chapter and the book files, and runs next (beside a running
book of the same model).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import gradio as gr
import numpy as np

from omni_web.errors import ReviewError
from omni_web.jobs import Job, JobState
from omni_web.library import fix_wait_reason, same_server_work
from omni_web.pipeline import ConvertProgress, ConvertRequest
from omni_web.pipeline.fix import plan_fix
from omni_web.pipeline.review import (
    ReviewRow,
    ReviewTarget,
    accept_chunk,
    accept_chunks,
    job_review_target,
    open_review,
    prepare_regenerate,
    qa_counts_line,
    qa_so_far,
    review_rows,
    rows_for_keys,
)
from omni_web.pipeline.review_inbox import inbox_page
from omni_web.qa import ChapterDrift, Mark, QaStore, decode_wav
from omni_web.ui.context import UiContext
from omni_web.ui.errors import guarded
from omni_web.ui.lexicon import build_lexicon_panel
from omni_web.ui.review_inbox import InboxRefs, ask_accept_all, build_inbox, inbox_outputs, render_inbox
from omni_web.ui.widgets import callout, esc, table

__all__ = [
    "ReviewRefs",
    "build_review_panel",
    "drift_html",
    "flagged_rows",
    "marks_html",
    "row_choice",
    "row_detail_html",
]


@dataclass(frozen=True, slots=True)
class ReviewRefs:
    """The review panel's components."""

    summary: gr.HTML
    pick: gr.Dropdown
    detail: gr.HTML
    player: gr.Audio
    text: gr.Textbox
    accept: gr.Button
    regenerate: gr.Button
    status: gr.Markdown
    filters: InboxRefs | None = None


def flagged_rows(job: Job, store: QaStore) -> tuple[list[ReviewRow], str, bool]:
    """(flagged rows, summary line, can regenerate) of a job: from its report once it is finished."""
    progress = ConvertProgress.from_dict(job.progress)
    qa = progress.qa
    if job.state is JobState.DONE:
        try:
            target = open_review(job_review_target(job.result, job.id))
        except ReviewError as exc:
            return [], str(exc), False
        return review_rows(target), qa_counts_line(target), True
    if qa is None:
        return [], "This job runs without audio QA.", False
    return (
        rows_for_keys(store, qa.flagged_keys),
        f"{qa_so_far(store, qa).line} so far. Accept works now; regenerate once the job is done.",
        False,
    )


def drift_html(drift: tuple[ChapterDrift, ...]) -> str:
    """The voice and the reading chapter by chapter (empty when no take was measured)."""
    rows = [
        (str(d.chapter), d.title, d.similarity_text, d.pace_text, d.pitch_text, str(d.retaken))
        for d in drift
        if d.takes and (d.pace_median is not None or d.similarity_median is not None)
    ]
    if not rows:
        return ""
    headers = ("Chapter", "Title", "Voice similarity", "Pace", "Pitch", "Takes redone for voice or reading")
    return (
        f'<div id="review-drift"><p>How the voice and the reading wander, chapter by chapter:</p>'
        f"{table(headers, rows)}</div>"
    )


def row_choice(row: ReviewRow) -> tuple[str, str]:
    """Dropdown entry ``ch 3 · chunk 12 — the audio is 0.33 of …`` → ``3:12``."""
    return (
        f"chapter {row.chapter} · chunk {row.chunk} — {row.first_reason[:70]}",
        f"{row.chapter}:{row.chunk}",
    )


# Inline styles: the marks live in this panel only. Struck red: not heard; amber: said twice;
# underlined blue: heard but not in the text. Each carries a title for screen readers and hover.
_MARK_HTML = {
    "missing": (
        '<del class="qa-missing" title="not heard" style="color:#b42318;background:#fee4e2">',
        "</del>",
    ),
    "repeated": ('<mark class="qa-repeated" title="said twice" style="background:#fef0c7">', "</mark>"),
    "extra": (
        '<ins class="qa-extra" title="heard, not in the text" style="color:#175cd3;background:#d1e9ff">',
        "</ins>",
    ),
}


def marks_html(marks: tuple[Mark, ...]) -> str:
    """The chunk text with its missing, repeated and extra words marked (escaped HTML)."""
    parts = []
    for mark in marks:
        opening, closing = _MARK_HTML.get(mark.kind, ("", ""))
        parts.append(f"{opening}{esc(mark.text)}{closing}")
    return " ".join(parts)


def row_detail_html(row: ReviewRow) -> str:
    """One flagged chunk: its text (marked where the take differs), figures, why it failed, what ASR heard."""
    marks = row.marks
    text = marks_html(marks) if any(m.kind for m in marks) else esc(row.text)
    facts = [
        ("Chapter", esc(f"{row.chapter} {row.chapter_title}".strip())),
        ("Chunk", esc(row.chunk)),
        ("Text", text),
        ("Figures", esc(row.figures)),
        ("Why flagged", esc(row.reasons)),
    ]
    if row.notices:
        facts.append(("Check", esc(row.notices)))
    if row.transcript:
        facts.append(("Heard", esc(row.transcript)))
    facts.append(("Takes", esc(row.takes)))
    return table(["", ""], facts, raw_columns=(0, 1))


def _audio(path: Path) -> tuple[int, np.ndarray] | None:
    # Sent as samples: the chunk cache lies in the app's state folder, which the page never serves.
    try:
        samples, rate = decode_wav(path.read_bytes())
    except (OSError, ValueError):
        return None
    return rate, (samples * 32767).astype(np.int16)


def build_review_panel(ctx: UiContext, job_pick: gr.Dropdown) -> ReviewRefs:
    """Create the panel (inside the Jobs tab's layout) and wire it to the tab's job picker."""
    with gr.Accordion("Review audio QA", open=False, elem_id="review-panel"):
        with gr.Row():
            summary = gr.HTML(elem_id="review-summary", padding=False)
            refresh = gr.Button("Refresh", size="sm", scale=0, elem_id="review-refresh")
        inbox = build_inbox()
        with gr.Row(equal_height=False):
            with gr.Column(scale=3):
                pick = gr.Dropdown(
                    label="Flagged chunk", elem_id="review-pick", interactive=True, allow_custom_value=True
                )
                detail = gr.HTML(elem_id="review-detail", padding=False)
            with gr.Column(scale=2):
                player = gr.Audio(
                    label="Chunk audio (the take in the book)",
                    interactive=False,
                    elem_id="review-player",
                    type="numpy",
                )
                text = gr.Textbox(
                    label="Text to speak",
                    lines=4,
                    elem_id="review-text",
                    info="Edit it (a misread name or number) before Regenerate, or leave it.",
                )
                with gr.Row():
                    accept = gr.Button("Accept as is", elem_id="review-accept")
                    regenerate = gr.Button("Regenerate", variant="primary", elem_id="review-regenerate")
        status = gr.Markdown(elem_id="review-status")
        # A misread name is fixed for good in the lexicon, then the chunk regenerated with it.
        job_book, job_model = gr.State(None), gr.State(None)
        build_lexicon_panel(
            ctx, book=job_book, model=job_model, api_prefix="review_lexicon", elem_prefix="review-lex"
        )
    refs = ReviewRefs(summary, pick, detail, player, text, accept, regenerate, status, inbox)
    _wire(_ReviewActions(ctx), refs, inbox, job_pick, refresh, (job_book, job_model))
    return refs


def _wire(
    actions: _ReviewActions,
    refs: ReviewRefs,
    inbox: InboxRefs,
    job_pick: gr.Dropdown,
    refresh: gr.Button,
    book_and_model: tuple[gr.State, gr.State],
) -> None:
    list_outputs = [
        refs.summary,
        refs.pick,
        refs.detail,
        refs.player,
        refs.text,
        refs.accept,
        refs.regenerate,
        *inbox_outputs(inbox),
    ]
    filters = [inbox.chapter, inbox.reason, inbox.page]
    job_pick.change(
        guarded(actions.job_book_and_model), [job_pick], list(book_and_model), api_name="review_lexicon_job"
    )
    job_pick.change(guarded(actions.show_list), [job_pick], list_outputs, api_visibility="private")
    refresh.click(guarded(actions.show_list), [job_pick, *filters], list_outputs, api_name="review_list")
    for control in filters:
        control.input(
            guarded(actions.show_list), [job_pick, *filters], list_outputs, api_visibility="private"
        )
    refs.pick.input(
        guarded(actions.show_row),
        [job_pick, refs.pick],
        [refs.detail, refs.player, refs.text],
        api_visibility="private",
    )
    refs.accept.click(
        guarded(actions.accept),
        [job_pick, refs.pick, *filters],
        [refs.status, *list_outputs],
        api_name="review_accept",
    )
    refs.regenerate.click(
        guarded(actions.regenerate),
        [job_pick, refs.pick, refs.text, *filters],
        [refs.status, *list_outputs],
        api_name="review_regenerate",
    )
    inbox.accept_all.click(
        guarded(ask_accept_all),
        [inbox.accept_all],
        [inbox.confirm, inbox.confirm_text],
        api_visibility="private",
    )
    inbox.confirm_go.click(
        guarded(actions.accept_matching),
        [job_pick, *filters],
        [refs.status, *list_outputs],
        api_name="review_accept_all",
    ).then(lambda: gr.update(visible=False), None, inbox.confirm)
    inbox.confirm_cancel.click(
        lambda: gr.update(visible=False), None, inbox.confirm, api_visibility="private"
    )


class _ReviewActions:
    """The panel's handlers: each reads the job and its report afresh (nothing kept between events)."""

    def __init__(self, ctx: UiContext) -> None:
        self.ctx = ctx
        self.store = QaStore(ctx.paths.chunk_cache_dir)
        self.jobs = ctx.services.library.jobs

    def rows_of(self, job_id: str | None) -> tuple[list[ReviewRow], str, bool]:
        if not job_id:
            return [], "Pick a job.", False
        return flagged_rows(self.jobs.get(job_id), self.store)

    def show_list(
        self,
        job_id: str | None,
        chapter: str | None = None,
        reason: str | None = None,
        page: float | None = 1,
    ) -> list[Any]:
        rows, line, can_regenerate = self.rows_of(job_id)
        shown = inbox_page(
            rows, chapter=int(chapter) if chapter else None, reason=reason or None, page=int(page or 1)
        )
        choices = [row_choice(r) for r in shown.rows]
        html = callout(line) if rows or not job_id else callout(line + " Nothing is waiting for review.")
        html += drift_html(self.drift_of(job_id))
        first = choices[0][1] if choices else None
        return [
            html,
            gr.update(choices=choices, value=first),
            *self.show_row(job_id, first),
            gr.update(interactive=bool(rows)),
            gr.update(interactive=bool(rows) and can_regenerate),
            *render_inbox(shown, chapter, reason, can_accept=bool(rows)),
        ]

    def accept_matching(
        self, job_id: str | None, chapter: str | None, reason: str | None, page: float | None
    ) -> list[Any]:
        if self.running(job_id):
            rows, _, _ = self.rows_of(job_id)
            shown = inbox_page(rows, chapter=int(chapter) if chapter else None, reason=reason or None)
            accepted = self.accept_records(shown.matching)
            return [f"Accepted {accepted:,} chunks as they are.", *self.show_list(job_id, chapter, reason, 1)]
        target = self.target(job_id)
        shown = inbox_page(
            review_rows(target), chapter=int(chapter) if chapter else None, reason=reason or None
        )
        accepted = accept_chunks(target, [(row.chapter, row.chunk) for row in shown.matching])
        return [f"Accepted {accepted:,} chunks as they are.", *self.show_list(job_id, chapter, reason, 1)]

    def drift_of(self, job_id: str | None) -> tuple[ChapterDrift, ...]:
        job = self.jobs.get(job_id) if job_id else None
        if job is None or job.state is not JobState.DONE:
            return ()
        try:
            return open_review(job_review_target(job.result, job.id)).report.drift
        except ReviewError:
            return ()

    def find(self, job_id: str | None, place: str | None) -> ReviewRow | None:
        if not place:
            return None
        return next((r for r in self.rows_of(job_id)[0] if f"{r.chapter}:{r.chunk}" == place), None)

    def show_row(self, job_id: str | None, place: str | None) -> list[Any]:
        row = self.find(job_id, place)
        if row is None:
            return ["", None, ""]
        return [row_detail_html(row), _audio(row.audio_path), row.text]

    def running(self, job_id: str | None) -> bool:
        """True while the job renders: its flagged chunks are accepted in their records, which the
        report it writes at the end reads."""
        return bool(job_id) and not self.jobs.get(job_id).state.finished

    def accept_records(self, rows: Any) -> int:
        accepted = 0
        for row in rows:
            record = self.store.load(row.record.key) if row.record is not None else None
            if record is not None and record.verdict.needs_review:
                self.store.save(record.accepted())
                accepted += 1
        return accepted

    def target(self, job_id: str | None) -> ReviewTarget:
        if not job_id:
            raise ReviewError("Pick a job first.")
        job = self.jobs.get(job_id)
        if job.state is not JobState.DONE:
            raise ReviewError("The job is still running: accept or regenerate once it is done.")
        return open_review(job_review_target(job.result, job_id))

    def accept(self, job_id: str | None, place: str | None, *filters: Any) -> list[Any]:
        chapter, chunk = _place(place)
        if self.running(job_id):
            row = self.find(job_id, place)
            if row is None or not self.accept_records([row]):
                raise ReviewError(f"Chunk {chunk} of chapter {chapter} is no longer flagged; nothing to "
                                  "accept.")
            return [f"Accepted chapter {chapter}, chunk {chunk} as it is.", *self.show_list(job_id, *filters)]
        accept_chunk(self.target(job_id), chapter, chunk)
        return [f"Accepted chapter {chapter}, chunk {chunk} as it is.", *self.show_list(job_id, *filters)]

    def regenerate(
        self, job_id: str | None, place: str | None, new_text: str | None, *filters: Any
    ) -> list[Any]:
        chapter, chunk = _place(place)
        target = self.target(job_id)
        # The text from the report, not from the review rows (those read every chunk's record).
        found = target.report.chunk_at(chapter, chunk)
        spoken = found.text if found is not None else None
        edited = new_text if spoken is not None and (new_text or "").strip() != spoken else None
        request = prepare_regenerate(target, chapter, chunk, text=edited)
        # The same request on purpose (with the name the job claimed): it rebuilds that job's own files.
        fix = plan_fix(request, target.report.chapter_files, target.parts_dir, (chapter,), self.ctx.settings)
        services = self.ctx.services
        job = services.library.submit_fix(request, fix, title=self.jobs.get(job_id).title)
        running = [
            other for other in self.jobs.list() if other.state is JobState.RUNNING and other.id != job.id
        ]
        when = (
            fix_wait_reason(
                job, running, queue_paused=services.library.queue.paused, shares_server=same_server_work
            )
            or "It starts now (beside a running book of the same server and model, if any)."
        )
        what = "with the edited text" if edited else "as a new take"
        return [
            f"Queued job `{job.id}`: chapter {chapter}, chunk {chunk} {what}. {fix.message} {when} "
            "Select the new job above to follow it.",
            *self.show_list(job_id, *filters),
        ]

    def job_book_and_model(self, job_id: str | None) -> tuple[str | None, str | None]:
        if not job_id:
            return None, None
        request = ConvertRequest.read(self.jobs.get(job_id).params)
        return (str(request.book_path) if request.book_path.parts else None), request.model_key or None


def _place(place: str | None) -> tuple[int, int]:
    if not place or ":" not in place:
        raise ReviewError("Pick a flagged chunk first.")
    chapter, chunk = place.split(":", 1)
    return int(chapter), int(chunk)
