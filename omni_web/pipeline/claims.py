"""The output names command-line conversions claimed, so the same convert finds its own files again.

A web UI job keeps the name it claimed in its request (the job store); a ``convert`` run has no
job, so its claim is kept here, one entry per request and output folder, in a small JSON file of
the data root. Running the exact same convert again (same book, model, voice and settings) gets
the same name back and resumes into the same files; another voice, model or setting claims a new
name through :func:`~omni_web.pipeline.outputs.claim_output_name`, so it never writes over them.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from omni_web.book import Book
from omni_web.catalog import CatalogEntry
from omni_web.files import locked, write_atomic
from omni_web.pipeline.outputs import claim_output_name
from omni_web.pipeline.request import ConvertRequest

__all__ = ["OutputClaims", "work_key"]

log = logging.getLogger(__name__)

# Where the server is and how many requests are in flight change nothing in the audio.
_NOT_WORK = ("output_name", "api_url", "concurrency")


def work_key(request: ConvertRequest, output_root: Path) -> str:
    """A digest of what a request asks for and where its files go (its name aside)."""
    fields = {name: value for name, value in request.to_dict().items() if name not in _NOT_WORK}
    fields["output_root"] = str(Path(output_root).resolve())
    return hashlib.sha256(json.dumps(fields, sort_keys=True).encode()).hexdigest()[:32]


@dataclass(frozen=True, slots=True)
class OutputClaims:
    """The claims file (``state/output-names.json``); every read and write holds its lock."""

    path: Path

    def name_for(
        self,
        request: ConvertRequest,
        output_root: Path,
        book: Book,
        entry: CatalogEntry,
        *,
        claimed: Iterable[str] = (),
    ) -> str:
        """The name this request claimed before, else a new one no file, claim or job holds.

        ``claimed`` are names other jobs hold (the web UI's, from the job store).
        """
        key, root = work_key(request, output_root), str(Path(output_root).resolve())
        with self._locked():
            claims = self._read()
            for claim in claims:
                if claim.get("key") == key and claim.get("name"):
                    return str(claim["name"])
            here = {str(c["name"]) for c in claims if c.get("name") and c.get("output_root") == root}
            name = claim_output_name(output_root, book, entry, request.voice, layout=request.output_layout,
                                     metadata=request.metadata, claimed={*claimed, *here})
            claims.append({"key": key, "name": name, "book": str(request.book_path), "output_root": root})
            self._write(claims)
        return name

    def names(self) -> set[str]:
        """Every name claimed here (a UI job must not pick one of them)."""
        with self._locked():
            return {str(c["name"]) for c in self._read() if c.get("name")}

    def _locked(self) -> contextlib.AbstractContextManager[None]:
        # Two converts started at once must not both claim the same free name.
        return locked(self.path)

    def _read(self) -> list[dict[str, Any]]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return []
        except (OSError, ValueError) as exc:
            # Losing the claims only costs a numbered copy on the next run, never a file.
            log.warning("Ignoring unreadable output-name claims %s: %s", self.path, exc)
            return []
        claims = data.get("claims") if isinstance(data, dict) else None
        return [c for c in claims if isinstance(c, dict)] if isinstance(claims, list) else []

    def _write(self, claims: list[dict[str, Any]]) -> None:
        write_atomic(self.path, json.dumps({"claims": claims}, indent=1))
