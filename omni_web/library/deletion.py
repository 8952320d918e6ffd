"""Deleting a finished job and the files it wrote, planned before anything is removed."""

from __future__ import annotations

import dataclasses

from omni_web.jobs import Job, JobStore
from omni_web.pipeline.outputs import OutputRemoval

__all__ = ["JobDeletion"]


@dataclasses.dataclass(frozen=True)
class JobDeletion:
    """A planned deletion of one job and its files (see :meth:`Library.plan_job_deletion`)."""

    job: Job
    files: OutputRemoval
    store: JobStore

    @property
    def summary(self) -> str:
        """One line for the confirm: how many files, how big, where."""
        count = len(self.files.files)
        if not count:
            return f"Delete the job '{self.job.title}'. It has no files left to remove."
        noun = "file" if count == 1 else "files"
        return (f"Delete the job '{self.job.title}' and its {count} {noun} ({self.files.size_str}) "
                f"under {self.files.output_root}. The rendered chunks stay cached, so a new job of "
                "the same book is fast.")

    def execute(self) -> int:
        """Forget the job, then remove its files; returns the number of files removed."""
        self.store.delete(self.job.id)
        return self.files.execute()
