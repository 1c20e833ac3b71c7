"""Stage 1, text -> counts: corpora, the co-occurrence vectorizer and the co-occurrence matrix type.

The numba kernels that split, hash and count (``_token_kernel``, ``_window_kernel``) and the
threaded counter (``_counter``) are private to this stage; the merge of partial matrices
(:mod:`.partial_sums`) is imported from its module.
"""

from .._deprecation import moved_names
from .concentration import group_concentration
from .corpus import LineCorpus, default_corpus_manifest_path, default_corpus_path, load_default_corpus
from .groups import DocumentGroups, default_corpus_groups, groups_by_file, read_groups
from .matrix import CooccurrenceMatrix, check_cooccurrence
from .vectorizer import CooccurrenceVectorizer

__all__ = [
    "CooccurrenceMatrix",
    "CooccurrenceVectorizer",
    "DocumentGroups",
    "LineCorpus",
    "check_cooccurrence",
    "default_corpus_groups",
    "default_corpus_manifest_path",
    "default_corpus_path",
    "group_concentration",
    "groups_by_file",
    "load_default_corpus",
    "read_groups",
]

__getattr__ = moved_names(__name__, {"partial_sums": ("PartialSums",)})
