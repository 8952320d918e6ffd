"""Settings → automation: presets, the rules that pick them, the inbox, notifications, API tokens.

Appended to the Settings tab (``settings.build`` calls :func:`build`); every control calls the same
core objects the API, the inbox and the CLI use: :class:`~omni_web.library.presets.PresetBook`, the
settings file, the notifier and :class:`~omni_web.api.tokens.TokenStore`.
"""

from __future__ import annotations

import dataclasses
import json
import time
from typing import Any

import gradio as gr

from omni_web.api.tokens import TokenStore
from omni_web.farm import farm_token_store
from omni_web.library import RULE_FIELDS, Preset, Rule
from omni_web.ui.context import UiContext
from omni_web.ui.errors import guarded

__all__ = ["build", "presets_markdown", "tokens_markdown"]


def presets_markdown(presets: list[Preset]) -> str:
    """The saved presets as a Markdown table."""
    if not presets:
        return "No presets yet: save one from the Generate tab (below the form), or paste one as JSON here."
    rows = [
        "| Preset | Model | Voice | QA | Loudness | Format | Read-along | Chapters |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for p in presets:
        voice = p.voice.get("name") or p.voice.get("kind", "")
        rows.append(
            f"| {p.name} | {p.model_key} | {voice} | {p.qa_level or 'setting'} | {p.loudness or 'setting'} | "
            f"{p.output_format or 'setting'} | {'yes' if p.readalong else 'no'} | {p.chapters} |"
        )
    return "\n".join(rows)


def tokens_markdown(store: TokenStore) -> str:
    """The API tokens (ids and names, never secrets)."""
    tokens = store.tokens()
    if not tokens:
        return "No API tokens. Create one to use `/api/v1` (see the README's curl walk-through)."
    lines = ["| Id | Name | Created |", "|---|---|---|"]
    lines += [
        f"| `{t.id}` | {t.name} | {time.strftime('%Y-%m-%d %H:%M', time.localtime(t.created_at))} |"
        for t in tokens
    ]
    return "\n".join(lines)


def _rules_rows(ctx: UiContext) -> list[list[str]]:
    return [[r.field, r.value, r.preset] for r in ctx.services.library.presets.rules()] or [
        ["author", "", ""]
    ]


def _presets_section(ctx: UiContext) -> tuple[list[Any], Any]:
    with gr.Accordion("Presets and rules", open=False, elem_id="auto-presets"):
        listing = gr.Markdown(elem_id="auto-presets-list")
        with gr.Row():
            pick = gr.Dropdown(
                label="Preset", choices=[], elem_id="auto-preset-pick", scale=2, allow_custom_value=True
            )
            delete = gr.Button("Delete preset", variant="stop", size="sm", elem_id="auto-preset-delete")
        text = gr.Code(
            label="Preset as JSON (edit and save; a new name makes a new preset)",
            language="json",
            elem_id="auto-preset-json",
        )
        save = gr.Button("Save preset", size="sm", elem_id="auto-preset-save")
        gr.Markdown(
            f"Rules: the first whose field ({', '.join(RULE_FIELDS)}) contains the text picks the preset "
            "for a book queued without one (uploads, the inbox, the API)."
        )
        rules = gr.Dataframe(
            headers=["field", "contains", "preset"],
            column_count=(3, "fixed"),
            interactive=True,
            elem_id="auto-rules",
            datatype=["str", "str", "str"],
        )
        save_rules = gr.Button("Save rules", size="sm", elem_id="auto-rules-save")
        status = gr.Markdown(elem_id="auto-presets-status")
    outputs = [listing, pick, rules]

    def render() -> tuple[Any, ...]:
        presets = ctx.services.library.presets.presets()
        return presets_markdown(presets), gr.update(choices=[p.name for p in presets]), _rules_rows(ctx)

    def show(name: str | None) -> str:
        return json.dumps(ctx.services.library.presets.get(name).to_dict(), indent=2) if name else ""

    def save_preset(raw: str) -> tuple[Any, ...]:
        preset = ctx.services.library.presets.save(Preset.from_dict(json.loads(raw or "{}")))
        return (f"Saved preset '{preset.name}'.", *render())

    def drop(name: str | None) -> tuple[Any, ...]:
        if not name:
            raise gr.Error("Pick a preset first.")
        ctx.services.library.presets.delete(name)
        return (f"Deleted '{name}' (and the rules that picked it).", *render())

    def store_rules(table: Any) -> tuple[Any, ...]:
        rows = table.values.tolist() if hasattr(table, "values") else list(table or [])
        saved = ctx.services.library.presets.set_rules(
            [Rule(str(f or ""), str(v or ""), str(p or "")) for f, v, p in rows if str(v or "").strip()]
        )
        return (f"Saved {len(saved)} rule(s).", *render())

    pick.change(guarded(show), [pick], text, api_visibility="private")
    save.click(guarded(save_preset), [text], [status, *outputs], api_name="preset_save")
    delete.click(guarded(drop), [pick], [status, *outputs], api_name="preset_delete")
    save_rules.click(guarded(store_rules), [rules], [status, *outputs], api_name="rules_save")
    return outputs, render


def _inbox_and_notify_section(ctx: UiContext) -> tuple[list[Any], Any]:
    with gr.Accordion("Inbox and notifications", open=False, elem_id="auto-inbox"):
        folder = gr.Textbox(
            label="Inbox folder",
            placeholder="empty: inbox/ in the data root; off: not watched",
            elem_id="auto-inbox-dir",
        )
        preset = gr.Dropdown(
            label="Inbox preset (when no rule picks one)",
            choices=[],
            elem_id="auto-inbox-preset",
            allow_custom_value=True,
        )  # the choices are the presets saved by the time the page loads
        webhooks = gr.Textbox(
            label="Webhook URLs (one per line): JSON POST on done, failed, needs review",
            lines=2,
            elem_id="auto-webhooks",
        )
        apprise = gr.Textbox(
            label="Apprise URLs (one per line): ntfy://, gotify://, discord://, mailto://, ...",
            lines=2,
            elem_id="auto-apprise",
        )
        with gr.Row():
            save = gr.Button("Save", size="sm", elem_id="auto-inbox-save")
            test = gr.Button("Send a test notification", size="sm", elem_id="auto-notify-test")
        status = gr.Markdown(elem_id="auto-inbox-status")
    fields = [folder, preset, webhooks, apprise]

    def render() -> tuple[Any, ...]:
        s = ctx.settings
        names = [""] + [p.name for p in ctx.services.library.presets.presets()]
        return (
            s.inbox_dir,
            gr.update(choices=names, value=s.inbox_preset if s.inbox_preset in names else ""),
            s.webhook_urls,
            s.apprise_urls,
        )

    def save_all(inbox_dir: str, inbox_preset: str | None, hooks: str, urls: str) -> str:
        if inbox_preset:
            inbox_preset = ctx.services.library.presets.get(
                inbox_preset
            ).name  # PresetError lists the saved ones
        settings = dataclasses.replace(
            ctx.settings,
            inbox_dir=(inbox_dir or "").strip(),
            inbox_preset=inbox_preset or "",
            webhook_urls=hooks or "",
            apprise_urls=urls or "",
        )
        ctx.save_settings(settings.validate())
        where = settings.inbox_path(ctx.paths)
        return f"Saved. Inbox: {f'`{where}`' if where else 'off'}."

    def send_test() -> str:
        results = ctx.services.library.notifier.test()
        if not results:
            return "No targets yet: add a webhook or an Apprise URL and save."
        return "\n".join(f"- {'✓' if r.ok else '✗'} `{r.target}`: {r.detail}" for r in results)

    save.click(guarded(save_all), fields, status, api_name="automation_save")
    test.click(guarded(send_test), None, status, api_name="notify_test")
    return fields, render


def _tokens_section(
    store: TokenStore, *, title: str, prefix: str, api: str, example: str
) -> tuple[list[Any], Any]:
    """A token list with create and revoke; ``prefix`` names its elements, ``api`` its endpoints."""
    with gr.Accordion(title, open=False, elem_id=f"{prefix}s"):
        listing = gr.Markdown(elem_id=f"{prefix}s-list")
        with gr.Row():
            name = gr.Textbox(label="New token's name", placeholder=example, elem_id=f"{prefix}-name")
            create = gr.Button("Create token", size="sm", elem_id=f"{prefix}-create")
        shown = gr.Markdown(elem_id=f"{prefix}-secret")
        with gr.Row():
            pick = gr.Dropdown(label="Token", choices=[], elem_id=f"{prefix}-pick", allow_custom_value=True)
            revoke = gr.Button("Revoke", variant="stop", size="sm", elem_id=f"{prefix}-revoke")
    outputs = [listing, pick]

    def render() -> tuple[Any, ...]:
        return tokens_markdown(store), gr.update(
            choices=[(f"{t.name} ({t.id})", t.id) for t in store.tokens()]
        )

    def make(label: str) -> tuple[Any, ...]:
        token, secret = store.create(label or "token")
        return (f"Token **{token.name}** (copy it now, it is not shown again):\n\n`{secret}`", *render())

    def drop(token_id: str | None) -> tuple[Any, ...]:
        if not token_id:
            raise gr.Error("Pick a token first.")
        store.revoke(token_id)
        return (f"Revoked `{token_id}`.", *render())

    create.click(guarded(make), [name], [shown, *outputs], api_name=f"{api}_create")
    revoke.click(guarded(drop), [pick], [shown, *outputs], api_name=f"{api}_revoke")
    return outputs, render


def build(ctx: UiContext) -> tuple[list[Any], Any]:
    """Build the sections; returns (outputs, load function) for the Settings tab's page load."""
    sections = [
        _presets_section(ctx),
        _inbox_and_notify_section(ctx),
        _tokens_section(TokenStore(ctx.paths.api_tokens_file), title="API tokens", prefix="auto-token",
                        api="token", example="e.g. calibre-hook"),
        # GPU boxes join with these: python -m omni_web agent join <this app's URL> --token <token>
        _tokens_section(farm_token_store(ctx.paths), title="Farm tokens (GPU boxes: agent join)",
                        prefix="auto-farm-token", api="farm_token", example="e.g. lab-boxes"),
    ]
    outputs = [component for section_outputs, _ in sections for component in section_outputs]

    def load() -> list[Any]:
        return [value for _, render in sections for value in render()]

    return outputs, guarded(load)
