"""Readers and writers for other tools' file formats (installed as ``glovev_ext.adapters``).

- :mod:`.stanford`: the Stanford GloVe C tool's ``vocab.txt``, ``cooccurrence.bin``, ``vectors.bin`` and
  ``-model 0`` text, and :func:`load_glove_folder` from a folder of its output to GloVe-V.
- :mod:`.glovev_release`: the GloVe-V authors' release layout (safetensors chunks).
- :mod:`.word2vec`: word2vec / GloVe vectors through gensim, covariances saved beside them.
"""

from .glovev_release import load_glovev_release, read_approx_info, release_variances, write_glovev_release
from .stanford import (GloVeFileError, load_glove_folder, read_cooccurrence, read_vectors_bin, read_vectors_text,
                       read_vocab, write_cooccurrence, write_vectors_bin, write_vectors_text, write_vocab)
from .word2vec import load_word2vec_with_covariances, save_word2vec_with_covariances

__all__ = [
    "GloVeFileError",
    "load_glove_folder",
    "load_glovev_release",
    "read_approx_info",
    "release_variances",
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
