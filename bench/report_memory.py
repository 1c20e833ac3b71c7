"""Peak resident memory of queries like the fit report's, on a saved model read as `glovev fit` reads it.

Usage: python bench/report_memory.py MODEL_FOLDER

The model is loaded memory-mapped (``load_model``), then three queries run in turn, as the fit
report makes them: delta-method intervals of the cosines of 2,000 random pairs of words with a
covariance (seed 0), Spearman's rho with WordSim-353 over 500 draws, and the nearest neighbours of
six probe words with their intervals. For each, the script prints the exact peak of the process's
resident set during the query (``VmHWM``, reset between queries) and, at its end, how much of the
model folder's files is resident in the process (``Rss`` of their mappings in /proc/self/smaps).
The covariance store lets go of the pages of each factor it reads; before it did, a few hundred
factors read at D = 300 held a gigabyte of the file (the kernel maps a whole 2 MiB folio around
each row read), and this script's second column showed it.

For issue 26's D=300 model: ``glovev fit ../shared/data/gutenberg_us_10m --n-components 300 --epochs 1
--point-estimate trained --no-noise-calibration --covariance-dtype float32 --max-memory 1G --output m300``.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
from _peaks import peak_since_last_call
from gensim.test.utils import datapath

from glovev_ext import load_model

PROBES = ("man", "woman", "doctor", "river", "gold", "happy")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model", help="a saved model's folder")
    args = parser.parse_args()
    folder = Path(args.model).resolve()
    peak_since_last_call()
    kv, _ = load_model(folder)
    print(f"{folder}: {len(kv):,} words, D={kv.vector_size}; loading peaked at {peak_since_last_call() / 2**20:,.0f} "
          "MiB")
    keys = [key for key in kv.index_to_key if kv.has_covariance(key)]
    chosen = np.random.default_rng(0).choice(len(keys), (2000, 2))
    pairs = [(keys[a], keys[b]) for a, b in chosen if a != b]
    probes = [word for word in PROBES if kv.has_covariance(word)]
    queries = {
        f"{len(pairs):,} cosines' intervals": lambda: kv.similarity_tests(pairs, method="delta").conf_int(),
        "WordSim-353, 500 draws": lambda: kv.evaluate_word_pairs_with_uncertainty(
            datapath("wordsim353.tsv"), n_draws=500, random_state=0, missing="drop"),
        f"neighbours of {len(probes)} words": lambda: [
            kv.similarity_tests([(word, other) for other, _ in kv.most_similar(word, topn=20)
                                 if kv.has_covariance(other)][:5], random_state=0) for word in probes],
    }
    print(f"{'query':<28} {'peak MiB':>9} {'model files resident at its end, MiB':>38}")
    for title, query in queries.items():
        query()
        print(f"{title:<28} {peak_since_last_call() / 2**20:>9,.0f} {_resident_mib(folder):>38,.0f}")


def _resident_mib(folder: Path) -> float:
    """MiB of this process's mappings of files in ``folder`` that are resident."""
    resident, inside = 0, False
    with open("/proc/self/smaps", encoding="utf-8", errors="replace") as smaps:
        for line in smaps:
            fields = line.split()
            if fields and "-" in fields[0] and not fields[0].endswith(":"):
                inside = len(fields) > 5 and Path(fields[5]).parent == folder
            elif inside and fields and fields[0] == "Rss:":
                resident += int(fields[1])
    return resident / 1024


if __name__ == "__main__":
    main()
