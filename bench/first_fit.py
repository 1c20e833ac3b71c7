"""What the first ``glovev fit`` after an install pays for compiling the numba kernels.

Usage: python bench/first_fit.py

Runs ``glovev fit`` on the embedded corpus three times with one fresh numba cache directory
(``NUMBA_CACHE_DIR``), as a fresh install has: the first run compiles every kernel and caches it,
the later ones load them. Prints each run's wall time and the first run's extra time over the
faster of the later two (the aim: at most 10 s).
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

GLOVEV = Path(sys.executable).with_name("glovev")


def fit_seconds(cache: str, output: str) -> float:
    start = time.perf_counter()
    subprocess.run([str(GLOVEV), "fit", "--output", output, "--quiet"], check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                   env={**os.environ, "NUMBA_CACHE_DIR": cache})
    return time.perf_counter() - start


def main() -> None:
    with tempfile.TemporaryDirectory() as work:
        cache = os.path.join(work, "numba_cache")
        walls = [fit_seconds(cache, os.path.join(work, f"model_{k}")) for k in range(3)]
    print("glovev fit on the embedded corpus, one fresh numba cache: " + ", ".join(f"{w:.1f} s" for w in walls))
    print(f"first run (compiles the kernels) - fastest later run (loads them): {walls[0] - min(walls[1:]):.1f} s")


if __name__ == "__main__":
    main()
