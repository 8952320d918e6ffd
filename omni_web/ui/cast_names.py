"""The cast panel's names row: merge two characters, rename one, split a name off, hide or show one.

Thin over :func:`omni_web.cast.edit_characters`, the same edits as ``cast --merge/--rename/--split/
--hide/--unhide`` in the CLI. They are saved with the book's cast at once, voices follow their
character, and the panel is drawn again from the book with the edits laid over it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import gradio as gr

from omni_web.cast import CastFile, Character, edit_characters
from omni_web.errors import CastError
from omni_web.ui.widgets import esc

__all__ = ["CastNameRefs", "build_cast_names", "name_choices", "name_edits"]

Save = Callable[[Callable[[CastFile], CastFile]], CastFile]


@dataclass(frozen=True, slots=True)
class CastNameRefs:
    """The names row's components."""

    same_as: gr.Dropdown
    merge: gr.Button
    new_name: gr.Textbox
    rename: gr.Button
    alias: gr.Dropdown
    split: gr.Button
    hide: gr.Button
    hidden: gr.Dropdown
    unhide: gr.Button
    hints: gr.Markdown  # characters that may be one person, for the user to merge or leave
    names: gr.State  # the listed characters' other names and hints, for the menus without a new pass


def build_cast_names() -> CastNameRefs:
    """Create the row (call inside the cast panel, below its character menu)."""
    with gr.Accordion("Names: one person under two names, a wrong name, a word that is no one",
                      open=False, elem_id="cast-names"):
        hints = gr.Markdown(elem_id="cast-hints")
        same_as, merge = _menu_and_button(
            "Same person as", "cast-same-as", "The character picked above is this one under another name.",
            "Merge into that character", "cast-merge",
        )
        with gr.Row():
            new_name = gr.Textbox(label="New name", elem_id="cast-new-name",
                                  info="The name the cast shows and maps the voice by.")
            rename = gr.Button("Rename", size="sm", elem_id="cast-rename")
        alias, split = _menu_and_button(
            "One of its names", "cast-alias", "A name that is someone else becomes a character of its own.",
            "Make it a character of its own", "cast-split",
        )
        with gr.Row():
            hide = gr.Button("Not a character: hide it", size="sm", elem_id="cast-hide")
            hidden = gr.Dropdown(label="Hidden names", elem_id="cast-hidden", interactive=True,
                                 info="Their quotes are read by the dialogue voice.")
            unhide = gr.Button("Show again", size="sm", elem_id="cast-unhide")
    return CastNameRefs(
        same_as, merge, new_name, rename, alias, split, hide, hidden, unhide, hints, gr.State({})
    )


def _menu_and_button(label: str, menu_id: str, info: str, action: str, button_id: str) -> tuple[Any, Any]:
    # A name may be typed too: a character beyond the listed ones, a form the list does not show.
    with gr.Row():
        menu = gr.Dropdown(label=label, elem_id=menu_id, interactive=True, allow_custom_value=True, info=info)
        button = gr.Button(action, size="sm", elem_id=button_id)
    return menu, button


def name_choices(people: Sequence[Character], chosen: str | None, hidden: Sequence[str]) -> tuple[Any, ...]:
    """The menus for ``chosen`` (the characters to merge into, the one it may be first; its other
    names; the hidden names), the hints, and every listed character's names (see :func:`picked`)."""
    names = {p.name: {"aliases": list(p.aliases), "maybe": list(p.maybe)} for p in people}
    return (
        gr.update(choices=[p.name for p in people], value=_first_maybe(names, chosen)),
        picked(names, chosen)[1],
        gr.update(choices=list(hidden), value=None),
        _hints(people),
        names,
    )


def picked(names: Mapping[str, Mapping[str, list[str]]], chosen: str | None) -> tuple[Any, Any]:
    """The merge and alias menus for the character ``chosen``."""
    aliases = names.get(chosen or "", {}).get("aliases", [])
    return gr.update(value=_first_maybe(names, chosen)), gr.update(choices=list(aliases), value=None)


def _first_maybe(names: Mapping[str, Mapping[str, list[str]]], chosen: str | None) -> str | None:
    maybe = [m for m in names.get(chosen or "", {}).get("maybe", []) if m in names]
    return maybe[0] if maybe else None


def _hints(people: Sequence[Character]) -> str:
    """ "Maybe one person": each listed character with the listed ones it may be, once per pair."""
    listed = {p.name for p in people}
    seen: set[frozenset[str]] = set()
    lines = []
    for person in people:
        others = [m for m in person.maybe if m in listed and frozenset((person.name, m)) not in seen]
        seen.update(frozenset((person.name, m)) for m in others)
        if others:
            lines.append(f"- **{esc(person.name)}** may be {' or '.join(esc(o) for o in others)}")
    if not lines:
        return ""
    return "Maybe one person under two names (pick one above, then merge):\n" + "\n".join(lines)


def name_edits(save: Save) -> dict[str, Callable[..., str]]:
    """The row's handlers, each saving one edit with ``save`` and saying what it did."""

    def merge(name: str | None, into: str | None) -> str:
        if not name or not into:
            raise CastError("Pick a character, then the character it is the same person as.")
        save(lambda cast: edit_characters(cast, merge=([name], into)))
        return f"**{esc(name)}** is {esc(into)} now: their lines and names are one character's."

    def rename(name: str | None, new: str | None) -> str:
        if not name:
            raise CastError("Pick the character to rename first.")
        save(lambda cast: edit_characters(cast, rename=(name, new or "")))
        return f"**{esc(name)}** is shown as {esc((new or '').strip())} now."

    def split(name: str | None, form: str | None) -> str:
        if not name or not form:
            raise CastError("Pick a character, then the name of theirs that is someone else.")
        save(lambda cast: edit_characters(cast, split=form))
        return f"**{esc(form)}** is a character of its own now, not {esc(name)}."

    def hide(name: str | None) -> str:
        if not name:
            raise CastError("Pick the name that is no character first.")
        save(lambda cast: edit_characters(cast, hide=name))
        return f"**{esc(name)}** is no character now: its quotes are read by the dialogue voice."

    def unhide(name: str | None) -> str:
        if not name:
            raise CastError("Pick a hidden name to show again.")
        save(lambda cast: edit_characters(cast, unhide=name))
        return f"**{esc(name)}** is a character again."

    return {"merge": merge, "rename": rename, "split": split, "hide": hide, "unhide": unhide}
