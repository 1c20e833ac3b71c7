"""What the checks of a model folder cost: loading with every file's digest checked, against 0.3's pickle (issue 51).

Usage: python bench/model_load.py [--model DIR] [--corpus embedded|gutenberg_us_10m|gutenberg_us_31m]
                                  [--n-components 50] [--epochs 25] [--tile-gb 3] [--repeat 5]
                                  [--workdir DIR]

Reads a saved model (``glovev fit``'s folder) or fits the corpus with the default recipe. In the
same run it writes the same embedding in the format of glovev-ext 0.3 (gensim's pickle beside
memory-mappable arrays, ``kv.save``), and for each it times, on warm files (the page cache holds
them, as after a first query): ``load_model`` (memory-mapped; the new format checks every file's
SHA-256), ``load_model`` of the 0.3 folder (``allow_pickle=True``: no checks), the load followed by
one ``similarity_test``, and a plain SHA-256 of the folder's bytes on one thread (the baseline the
checks cannot beat on one core). With ``--tile-gb`` the model's covariance store is repeated to at
least that many GB (a multi-GB store, as of a large vocabulary at D = 300) and the same is timed.
Prints the seconds (the best of ``--repeat``) and the ratios to 0.3's load and to the plain digest.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import tempfile
from pathlib import Path

import numpy as np
from _data import corpus
from _timing import seconds

import glovev_ext


def folder_bytes(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.iterdir() if p.is_file())


def plain_digest(folder: Path) -> None:
    for path in sorted(folder.iterdir()):
        with open(path, "rb") as stream:
            digest = hashlib.sha256()
            while chunk := stream.read(1 << 24):
                digest.update(chunk)


def save_as_0_3(kv: glovev_ext.KeyedVectorsWithVariance, metadata: dict, folder: Path) -> None:
    folder.mkdir()
    kv.save(str(folder / "vectors.kv"), sep_limit=1 << 16)
    (folder / "metadata.json").write_text(json.dumps(metadata, indent=1, default=str), encoding="utf-8")


def tiled(kv: glovev_ext.KeyedVectorsWithVariance, gigabytes: float) -> glovev_ext.KeyedVectorsWithVariance:
    """``kv`` with its words repeated (suffixed by the copy's number) until its store holds ``gigabytes``."""
    store = kv.covariance_store
    copies = max(1, int(np.ceil(gigabytes * 1e9 / store._factors.nbytes)))
    rows = np.tile(np.arange(len(kv)), copies)
    words = [f"{word}_{copy}" if copy else word for copy in range(copies) for word in kv.index_to_key]
    big = glovev_ext.KeyedVectorsWithVariance(kv.vector_size, 0, dtype=kv.vectors.dtype)
    glovev_ext.KeyedVectorsWithVariance.add_vectors(big, words, np.tile(np.asarray(kv.vectors), (copies, 1)))
    big.covariance_store = store.take(kv.covariance_rows[rows], words=words)
    big.covariance_rows = np.arange(len(words), dtype=np.int64)
    big.prior = kv.prior
    return big


def measure(name: str, kv, metadata: dict, workdir: Path, repeat: int) -> None:
    new, old = workdir / f"{name}_new", workdir / f"{name}_0_3"
    glovev_ext.save_model(new, kv, metadata)
    save_as_0_3(kv, metadata, old)
    words = [w for w in ("man", "woman") if w in kv.key_to_index] or kv.index_to_key[:2]
    for folder in (new, old):
        plain_digest(folder)  # into the page cache
    t_new = seconds(lambda: glovev_ext.load_model(new), repeat)
    t_old = seconds(lambda: glovev_ext.load_model(old, allow_pickle=True), repeat)
    q_new = seconds(lambda: glovev_ext.load_model(new)[0].similarity_test(*words, method="delta"), repeat)
    q_old = seconds(lambda: glovev_ext.load_model(old, allow_pickle=True)[0].similarity_test(*words, method="delta"),
                    repeat)
    t_hash = seconds(lambda: plain_digest(new), repeat)
    size = folder_bytes(new)
    print(f"{name}: {len(kv):,} words, D={kv.vector_size}, folder {size / 1e6:,.1f} MB (0.3's: "
          f"{folder_bytes(old) / 1e6:,.1f} MB)")
    print(f"  load_model, checked: {t_new:.3f} s; 0.3's pickle, unchecked: {t_old:.3f} s; ratio {t_new / t_old:.2f}")
    print(f"  load and one similarity_test: {q_new:.3f} s against {q_old:.3f} s; ratio {q_new / q_old:.2f}")
    print(f"  plain SHA-256 of the folder on one thread: {t_hash:.3f} s ({size / t_hash / 1e9:.2f} GB/s); "
          f"checked load / plain digest {t_new / t_hash:.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", help="a saved model folder (default: fit --corpus)")
    parser.add_argument("--corpus", default="embedded", choices=("embedded", "gutenberg_us_10m", "gutenberg_us_31m"))
    parser.add_argument("--n-components", type=int, default=50)
    parser.add_argument("--epochs", type=int, default=25)
    parser.add_argument("--tile-gb", type=float, default=3.0, help="also time a store of at least this many GB (0: no)")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--workdir", default=None, help="where the folders are written (default: TMPDIR)")
    args = parser.parse_args()
    print(f"hash threads: up to {min(4, os.cpu_count() or 1)} of {os.cpu_count()} cores")
    if args.model:
        kv, metadata = glovev_ext.load_model(args.model, mmap=None)
        name = Path(args.model).name
    else:
        name, documents = corpus(args.corpus) if args.corpus != "embedded" else (
            "embedded", glovev_ext.load_default_corpus())
        fitted = glovev_ext.fit_corpus(documents, glovev_ext.CooccurrenceVectorizer(),
                                       glovev_ext.GloVeVEstimator(n_components=args.n_components, epochs=args.epochs),
                                       groups=glovev_ext.default_corpus_groups() if name == "embedded" else None)
        kv, metadata = fitted.keyed_vectors, fitted.metadata
    with tempfile.TemporaryDirectory(dir=args.workdir) as workdir:
        measure(name, kv, metadata, Path(workdir), args.repeat)
        if args.tile_gb > 0:
            big = tiled(kv, args.tile_gb)
            measure(f"{name} tiled", big, metadata, Path(workdir), max(1, args.repeat // 2))


if __name__ == "__main__":
    main()
