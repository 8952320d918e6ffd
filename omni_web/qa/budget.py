"""A token budget on every request: ``max_new_tokens`` sized to the chunk's text.

A model that misses its end token decodes until its limit: sglang-omni measured 0.34 % of Qwen3-TTS
requests running to 2,048 tokens (164 s of audio), holding a batch slot 10-30 times longer than
their chunk needs. So once a job knows its model's tokens per text unit (from the accepted takes'
``X-Completion-Tokens``, per voice), every request carries ``margin`` times what its text needs
plus a few seconds' worth, never above the catalog's limit. Before the job has learnt the rate
(its first two takes) requests carry the catalog's value, as they always did.

A take that stops at its budget (finish reason ``length``) is retaken once with twice the budget
(capped at the limit); stopping again, it is flagged (see :class:`~omni_web.qa.takes.ChunkQa`).
"""

from __future__ import annotations

import math
import threading
from collections import deque

import numpy as np

__all__ = ["TokenBudget"]


class TokenBudget:
    """Learns tokens per text unit and per second of audio from accepted takes; thread-safe."""

    def __init__(
        self,
        limit: int | None,
        *,
        margin: float = 2.0,
        pad_s: float = 2.0,
        min_samples: int = 2,
        window: int = 200,
    ) -> None:
        self.limit = limit  # the catalog's ceiling (None: no budget is sent)
        self._margin = margin
        self._pad_s = pad_s
        self._min = min_samples
        self._per_unit: dict[str, deque[float]] = {}
        self._per_s: deque[float] = deque(maxlen=window)
        self._window = window
        self._lock = threading.Lock()

    def learn(self, voice: str, *, units: int, tokens: int | None, duration_s: float) -> None:
        """Record an accepted take's generated tokens (skipped when the server did not say)."""
        if not tokens or units <= 0 or duration_s <= 0:
            return
        with self._lock:
            self._per_unit.setdefault(voice, deque(maxlen=self._window)).append(tokens / units)
            self._per_s.append(tokens / duration_s)

    def needed(self, voice: str, units: int) -> float | None:
        """Tokens the text needs at the voice's median rate (None before it is known)."""
        with self._lock:
            rates = list(self._per_unit.get(voice, ()))
        if len(rates) < self._min or units <= 0:
            return None
        return units * float(np.median(rates))

    def for_text(self, voice: str, units: int) -> int | None:
        """``max_new_tokens`` for a first take of a text of ``units`` (None: the catalog's value)."""
        if self.limit is None:
            return None
        needed = self.needed(voice, units)
        if needed is None:
            return None
        with self._lock:
            per_s = float(np.median(list(self._per_s))) if self._per_s else 0.0
        return min(self.limit, math.ceil(self._margin * needed + self._pad_s * per_s))

    def larger(self, sent: int | None) -> int | None:
        """The budget of a retake after a take stopped at ``sent`` (None: it had the catalog's)."""
        if sent is None or self.limit is None or sent >= self.limit:
            return None
        return min(self.limit, 2 * sent)
