"""Delivery: a finished book → the library. Layout, metadata sidecars, Audiobookshelf, OPDS shelf.

Delivery is a step after the book, never a condition of it: the pipeline asks :mod:`.layout`
where files go, and a finished job is handed to :mod:`.audiobookshelf` afterwards; a failed
delivery is recorded on the job with a retry, the book stays done. Import the submodules directly
(``omni_web.deliver.layout``): this package re-exports nothing, so the pipeline can import the
layout without pulling in the HTTP client.
"""
