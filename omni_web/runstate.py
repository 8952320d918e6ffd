"""Where a piece of background work is in its life: one enum for queued jobs and for tasks.

A job (``omni_web/jobs/store.py``) waits in a line first, so it starts QUEUED; a task
(``omni_web/tasks.py``) runs the moment it is started, so it never is. "Nothing of this kind ran
yet" is not a state of a task but the absence of one: a task snapshot then has no state (None).
"""

from __future__ import annotations

import enum

__all__ = ["RunState"]


class RunState(enum.StrEnum):
    """Queued, running, or ended one of three ways; stored by value (``"queued"``, ...)."""

    QUEUED = "queued"
    RUNNING = "running"
    DONE = "done"
    FAILED = "failed"
    CANCELLED = "cancelled"

    @property
    def finished(self) -> bool:
        """True once the work ended (in any way): a worker picks it up again only on a resume."""
        return self in (RunState.DONE, RunState.FAILED, RunState.CANCELLED)
