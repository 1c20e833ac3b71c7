"""Parameter checks shared by the public classes, with messages that name the parameter, and the seed
``random_state`` falls back to."""

from __future__ import annotations

import math
import numbers
import os

import numpy as np

# The seed the statistics, the figures, fit_corpus and every glovev command (--random-state) draw from when given
# no random_state, so that the same call gives the same answer in Python and on the command line. random_state=None
# still asks numpy for fresh entropy, as the samplers whose draws are pooled across calls (kv.draw, draw_values) do
# by default: a default seed would hand out the same draw every time.
DEFAULT_SEED = 0


def check_int(value: object, name: str, minimum: int) -> int:
    """Return ``value`` as an int, or raise naming ``name`` if it is not an integer >= minimum."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an integer, got {value!r} of type {type(value).__name__}")
    if value < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {value}")
    return int(value)


def check_positive_float(value: object, name: str) -> float:
    """Return ``value`` as a float, or raise naming ``name`` if it is not finite and > 0."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {value!r} of type {type(value).__name__}")
    value = float(value)
    if not math.isfinite(value) or value <= 0.0:
        raise ValueError(f"{name} must be a finite number > 0, got {value}")
    return value


def resolve_n_jobs(n_jobs: int | None) -> int:
    """Number of threads for ``n_jobs`` with scikit-learn's meaning (None is 1, -1 is all cores)."""
    if n_jobs is None:
        return 1
    n_jobs = check_int(n_jobs, "n_jobs", minimum=-(10**9))
    if n_jobs == 0:
        raise ValueError("n_jobs must not be 0 (use None or 1 for one thread, -1 for all cores)")
    cores = os.cpu_count() or 1
    return n_jobs if n_jobs > 0 else max(1, cores + 1 + n_jobs)


def as_generator(random_state: object) -> np.random.Generator:
    """A numpy Generator from None, an int seed, a Generator, or a legacy RandomState."""
    if isinstance(random_state, np.random.RandomState):
        return np.random.default_rng(random_state.randint(0, 2**63 - 1, dtype=np.int64))
    if isinstance(random_state, bool) or not (
            random_state is None or isinstance(random_state, (numbers.Integral, np.random.Generator,
                                                               np.random.BitGenerator, np.random.SeedSequence))):
        raise TypeError("random_state must be None, an int, a numpy Generator or RandomState, "
                        f"got {type(random_state).__name__}")
    return np.random.default_rng(random_state)


_MEMORY_UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}


def parse_memory(value: int | str | None, name: str = "max_memory") -> int | None:
    """Bytes of a memory budget given as an int, or a string such as ``"600M"``, ``"1.5G"``, ``"4096"``.

    Parameters
    ----------
    value : int, str or None
        Bytes, or a number followed by K, M, G or T (powers of 1024, case-insensitive, an optional
        trailing B); None passes through.
    name : str, default="max_memory"
        The parameter's name, for the error messages.

    Returns
    -------
    int or None

    Raises
    ------
    TypeError
        If ``value`` is neither an int, a string nor None.
    ValueError
        If the string does not parse, or the budget is below 1 byte.
    """
    if value is None:
        return None
    if isinstance(value, str):
        text = value.strip().upper().removesuffix("B")
        unit = text[-1:] if text[-1:] in _MEMORY_UNITS else ""
        try:
            number = float(text[:len(text) - len(unit)])
        except ValueError:
            raise ValueError(f"{name} must be bytes or a size such as '600M' or '2G', got {value!r}") from None
        if not number >= 1 / _MEMORY_UNITS[unit] or number == float("inf"):
            raise ValueError(f"{name} must be at least 1 byte, got {value!r}")
        return int(number * _MEMORY_UNITS[unit])
    return check_int(value, name, minimum=1)
