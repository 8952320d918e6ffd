"""Persistent jobs: a SQLite queue in the data root, its steering, and one worker thread that runs them."""

from omni_web.jobs.queue import MOVES, QueueControl, QueueStatus
from omni_web.jobs.store import Job, JobState, JobStore
from omni_web.jobs.worker import JobContext, JobRunner, JobWorker

__all__ = ["MOVES", "Job", "JobContext", "JobRunner", "JobState", "JobStore", "JobWorker", "QueueControl",
           "QueueStatus"]
