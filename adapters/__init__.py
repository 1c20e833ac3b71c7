"""Readers and writers for other tools' file formats (installed as ``glovev_ext.adapters``).

- :mod:`.stanford`: the Stanford GloVe C tool's ``vocab.txt``, ``cooccurrence.bin``, ``vectors.bin`` and
  ``-model 0`` text, and :func:`load_glove_folder` from a folder of its output to GloVe-V.
- :mod:`.glovev_release`: the GloVe-V authors' release layout (safetensors chunks).
- :mod:`.word2vec`: word2vec / GloVe vectors through gensim, covariances saved beside them.

The package exports the functions a user reads, writes and loads with, and the error they raise;
the release loader's helpers are imported from :mod:`.glovev_release`.
"""

import importlib
import warnings

from .glovev_release import load_glovev_release, write_glovev_release
from .stanford import (GloVeFileError, load_glove_folder, read_cooccurrence, read_vectors_bin, read_vectors_text,
                       read_vocab, write_cooccurrence, write_vectors_bin, write_vectors_text, write_vocab)
from .word2vec import load_word2vec_with_covariances, save_word2vec_with_covariances

__all__ = [
    "GloVeFileError",
    "load_glove_folder",
    "load_glovev_release",
    "load_word2vec_with_covariances",
    "read_cooccurrence",
    "read_vectors_bin",
    "read_vectors_text",
    "read_vocab",
    "save_word2vec_with_covariances",
    "write_cooccurrence",
    "write_glovev_release",
    "write_vectors_bin",
    "write_vectors_text",
    "write_vocab",
]

# Exported in 0.2; the package's own hook, since adapters use glovev_ext's public names only.
_MOVED = {"read_approx_info": "glovev_release", "release_variances": "glovev_release"}


def __getattr__(name: str):
    if name not in _MOVED:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    module = f"{__name__}.{_MOVED[name]}"
    warnings.warn(f"{__name__}.{name} is deprecated and will be removed in glovev-ext 0.4; use from {module} import "
                  f"{name}", DeprecationWarning, stacklevel=2)
    return getattr(importlib.import_module(module), name)
