"""Import stub: `get_schedule()`, read by the real `OmniScheduler.request_kv_capacity_error` for
the hint in its KV-capacity message (the engine's `mem_fraction_static`).

The contract stub pipeline sets the value (`set_schedule`) from the resolved pipeline config
before it calls that function.
"""

import types

__all__ = ["get_schedule", "set_schedule"]

_schedule = types.SimpleNamespace(mem_fraction_static=None)


def set_schedule(**fields):
    _schedule.__dict__.update(fields)


def get_schedule():
    return _schedule
