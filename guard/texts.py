"""The texts a JSON value holds: what an agent's contract gives the model to say."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence

__all__ = ["texts_in"]


def texts_in(value: object) -> Iterator[str]:
    """Every string and number in a JSON value, keys included (a request flow's state names and
    labels, "cake: 35" gives both): as given side of the grounding check, a text too many is
    harmless, one too few stops a figure the agent was given."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, bool) or value is None:
        return
    elif isinstance(value, int | float):
        yield str(value)
    elif isinstance(value, Mapping):
        for key, item in value.items():
            yield str(key)
            yield from texts_in(item)
    elif isinstance(value, Sequence):
        for item in value:
            yield from texts_in(item)
