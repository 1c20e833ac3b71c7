"""Co-occurrence counting throughput, in tokens per second.

Usage: python bench/vectorizer.py [--repeat 3]

For Brown and gutenberg_us_10m (window 8, min_count 5, lowercased; the embedded corpus when
../shared/data is absent) it prints the throughput of ``transform`` (vocabulary known: what the
C tool's ``cooccur`` does) and of ``fit_transform`` (vocabulary and counts from one read), each
with one and with all cores. Two baselines: the same run's Python floor (reading the corpus and
``str.lower().split()`` of every line, which any pure-Python tokeniser must pay), and the
Stanford C tool's ``cooccur`` as measured on this kind of 2-core machine (1.27M tokens/s on Brown,
1.9M on gutenberg_us_10m, 1 thread; recorded in issue 2, not re-run here).
"""

from __future__ import annotations

import argparse

from _data import corpus
from _timing import seconds

import glovev_ext

C_TOOL_TOKENS_PER_SECOND = {"brown": 1.27e6, "gutenberg_us_10m": 1.9e6}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    for name in ("brown", "gutenberg_us_10m"):
        label, documents = corpus(name)
        fitted = glovev_ext.CooccurrenceVectorizer(progress=False).fit(documents)
        fitted.transform(documents)  # load the compiled kernels before timing
        tokens = fitted.n_tokens_
        floor = seconds(lambda: sum(len(line.lower().split()) for line in documents), args.repeat)
        print(f"{label}: {tokens:,} tokens, {len(fitted.vocabulary_):,} words; Python read+split floor "
              f"{tokens / floor / 1e6:.2f}M tokens/s")
        for n_jobs in (1, -1):
            fitted.set_params(n_jobs=n_jobs)
            elapsed = seconds(lambda: fitted.transform(documents), args.repeat)
            one_pass = glovev_ext.CooccurrenceVectorizer(progress=False, n_jobs=n_jobs)
            elapsed_one_pass = seconds(lambda: one_pass.fit_transform(documents), args.repeat)
            rate, rate_one_pass = tokens / elapsed, tokens / elapsed_one_pass
            line = (f"  n_jobs={n_jobs:>2}: transform {rate / 1e6:.2f}M tokens/s ({rate * floor / tokens:.2f} of "
                    f"the floor rate), fit_transform {rate_one_pass / 1e6:.2f}M tokens/s")
            if name in C_TOOL_TOKENS_PER_SECOND and label == name:
                line += f"; transform / C tool cooccur = {rate / C_TOOL_TOKENS_PER_SECOND[name]:.2f}"
            print(line)


if __name__ == "__main__":
    main()
