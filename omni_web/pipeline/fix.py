"""A regenerate's job (a fix): which chapters it rebuilds, which it reuses, and why it waits.

A fix re-masters only the chapters whose chunks it replaces; every other chapter's mastered files
are reused when they exist under the mastering options the book was made with (kept with its
request, see :meth:`ConvertRequest.with_mastering`), and the book files are joined again from
them. :func:`plan_fix` looks before the job is queued, so the message says the truth before the
fix starts: a book whose mastered files are gone, or that was made before its mastering settings
were kept and whose settings changed since, is re-mastered whole, and the message says so.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from omni_web.pipeline.mastering import request_master_options
from omni_web.pipeline.request import ConvertRequest
from omni_web.records import JsonRecord
from omni_web.settings import Settings

__all__ = ["FIX_KEY", "FixParams", "FixPlan", "plan_fix"]

# Where a fix's plan is kept in its job's params (beside the request; FixParams reads it).
FIX_KEY = "fix"


@dataclass(frozen=True, slots=True)
class FixPlan(JsonRecord):
    """What a fix rebuilds: ``chapters`` are mastered again, ``reused`` kept as they are."""

    chapters: tuple[int, ...] = ()
    reused: tuple[int, ...] = ()
    # Non-empty: every chapter is mastered again, and this says why.
    whole_book: str = ""

    @property
    def message(self) -> str:
        """One sentence for the queue notice and the job's page."""
        if self.whole_book:
            count = len(self.chapters)
            return (f"This fix re-masters the whole book ({count} chapter{'s' if count != 1 else ''}): "
                    f"{self.whole_book}. It takes as long as the book's mastering.")
        named = _chapters(self.chapters)
        count = len(self.reused)
        reused = ("" if not count else "; the other chapter is reused as it is" if count == 1
                  else f"; the other {count} chapters are reused as they are")
        return (
            f"Only {named} {'is' if len(self.chapters) == 1 else 'are'} rebuilt{reused}, then the book files."
        )


@dataclass(frozen=True, slots=True)
class FixParams(JsonRecord):
    """What a fix job's params hold beside its request: the plan, under ``FIX_KEY``."""

    fix: FixPlan | None = None


def _chapters(numbers: Sequence[int]) -> str:
    if len(numbers) == 1:
        return f"chapter {numbers[0]}"
    return "chapters " + ", ".join(map(str, numbers[:-1])) + f" and {numbers[-1]}"


def plan_fix(
    request: ConvertRequest,
    chapter_files: Mapping[str, str],
    parts_dir: Path,
    changed: Iterable[int],
    settings: Settings,
) -> FixPlan:
    """What a fix of ``changed`` chapters rebuilds, from the book's chapter files (its QA report's
    ``chapter_files``: number -> file name) and the mastered records in ``parts_dir``."""
    key = request_master_options(request, settings).key
    changed = set(changed)
    others = {int(number): name for number, name in chapter_files.items() if int(number) not in changed}
    kept = {
        number for number, name in others.items() if (parts_dir / f"{Path(name).stem}.{key}.json").is_file()
    }
    rebuilt = tuple(sorted(changed | (others.keys() - kept)))
    if others and not kept:
        why = (
            "it was made before omni-web kept a book's mastering settings, and they changed since"
            if not request.mastering
            else "its mastered chapter files are gone"
        )
        return FixPlan(rebuilt, (), why)
    return FixPlan(rebuilt, tuple(sorted(kept)))
