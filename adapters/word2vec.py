"""word2vec and GloVe text or binary vectors through gensim's own readers, with covariances beside them.

The vectors go to ``path`` in the format gensim writes (word2vec text or binary, or GloVe's text
without header); the covariances of the same words go to ``path + ".covariance"`` in
glovev-ext's covariance store format, and are matched back by word when loading.
"""

from __future__ import annotations

import os

import numpy as np

from glovev_ext import KeyedVectorsWithVariance
from glovev_ext.covariance import CovarianceStore

COVARIANCE_SUFFIX = ".covariance"


def save_word2vec_with_covariances(path: str | os.PathLike, kv: KeyedVectorsWithVariance, *, binary: bool = False,
                                   write_header: bool = True) -> None:
    """Write vectors with gensim's ``save_word2vec_format`` and the covariances beside them.

    Parameters
    ----------
    path : path
    kv : KeyedVectorsWithVariance
    binary : bool
        word2vec binary instead of text.
    write_header : bool
        False writes GloVe's headerless text format.
    """
    kv.save_word2vec_format(os.fspath(path), binary=binary, write_header=write_header)
    kv.aligned_covariance_store().save(os.fspath(path) + COVARIANCE_SUFFIX)


def load_word2vec_with_covariances(path: str | os.PathLike, *, binary: bool = False, no_header: bool = False,
                                   mmap: bool = True, datatype=np.float64) -> KeyedVectorsWithVariance:
    """Read vectors with gensim's ``load_word2vec_format`` and attach the covariances saved beside them.

    ``datatype`` defaults to float64 (gensim's own default, float32, would round text vectors);
    word2vec binary files hold float32 whatever it is.

    Raises
    ------
    FileNotFoundError
        If ``path + ".covariance"`` is missing.
    """
    kv = KeyedVectorsWithVariance.load_word2vec_format(os.fspath(path), binary=binary, no_header=no_header,
                                                       datatype=datatype)
    kv.attach_covariances(CovarianceStore.load(os.fspath(path) + COVARIANCE_SUFFIX, mmap=mmap))
    return kv
