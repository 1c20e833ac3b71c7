"""Record the golden results: every case of cases.py computed from the saved models, written to results.json.

Run from the repository root, before a change that must leave the numbers as they are (issue 24)::

    python tests/data/golden/record.py

tests/test_golden_results.py then computes every case again and compares it with results.json to
1e-12. Record again only when a change of the numbers is meant (and say so in the commit). The
models themselves are made by fit.py.
"""

from __future__ import annotations

import json

import numpy as np

import glovev_ext
from cases import CASES, RESULTS, compute, load_models


def count_numbers(value) -> int:
    """How many numbers a record holds."""
    if isinstance(value, dict):
        return sum(count_numbers(item) for item in value.values())
    if isinstance(value, list):
        return sum(count_numbers(item) for item in value)
    return int(isinstance(value, float))


def main() -> None:
    models = load_models()
    cases = {name: compute(name, models) for name in CASES}
    RESULTS.write_text(json.dumps({"glovev_ext_version": glovev_ext.__version__, "numpy_version": np.__version__,
                                   "cases": cases}, indent=1) + "\n", encoding="utf-8")
    for name, record in cases.items():
        print(f"{name}: {count_numbers(record)} numbers")
    print(f"{len(cases)} cases, {count_numbers(cases)} numbers written to {RESULTS}")


if __name__ == "__main__":
    main()
