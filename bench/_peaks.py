"""Exact peak resident memory of a stage: the kernel's high-water mark, read and reset."""

from __future__ import annotations


def peak_since_last_call() -> int:
    """Bytes: this process's peak resident set since the last call (or its start); the peak is then reset.

    Reads ``VmHWM`` from /proc/self/status and writes ``5`` to /proc/self/clear_refs (Linux), which
    resets it, and resets ``ru_maxrss`` with it.
    """
    with open("/proc/self/status", encoding="ascii") as status:
        peak = next(int(line.split()[1]) * 1024 for line in status if line.startswith("VmHWM:"))
    with open("/proc/self/clear_refs", "w", encoding="ascii") as clear:
        clear.write("5")
    return peak
