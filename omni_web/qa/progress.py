"""QA verdicts so far in one job: what the renderer's hook counts and the job's progress document stores."""

from __future__ import annotations

from dataclasses import dataclass

from omni_web.records import JsonRecord

__all__ = ["QaProgress"]


@dataclass(frozen=True, slots=True)
class QaProgress(JsonRecord):
    """Audio QA verdicts so far: chunks passed, passed after a retake, flagged."""

    level: str = "basic"
    passed: int = 0
    retaken: int = 0
    flagged: int = 0
    accepted: int = 0
    unchecked: int = 0
    requests: int = 0  # takes requested by this run
    flagged_keys: tuple[str, ...] = ()  # chunk keys waiting for review (records in the chunk cache)
    behind: int = 0  # takes the server has delivered that wait for speech recognition

    @property
    def line(self) -> str:
        """``QA 270 passed, 6 retaken, 1 flagged`` for progress lines (and how far QA is behind)."""
        text = f"QA {self.passed} passed, {self.retaken} retaken, {self.flagged} flagged"
        text += f", {self.accepted} accepted" if self.accepted else ""
        # Said, not hidden: takes waiting for their transcript hold chunks back from the book.
        return text + (f"; QA {self.behind} chunks behind the server" if self.behind else "")
