"""GloVeVEstimator: GloVe training and GloVe-V covariances as a scikit-learn estimator."""

from __future__ import annotations

import logging
import os
import shutil
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from typing import NamedTuple

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils.validation import check_is_fitted, validate_data

from .._checks import DEFAULT_SEED, check_int, check_positive_float, parse_memory, resolve_n_jobs
from .._dask import check_backend, clone_sharing_client, connected
from .._memory import trim_heap
from .._temporaries import make_temporary_folder
from ..counting import check_cooccurrence
from ..counting.concentration import check_group_concentration
from ..glove import GloVeParameters, train_glove
from ..glove.device import check_device
from ..glove.trainer import check_training_params
from .device import DeviceWordFitter
from .factor import check_approximation, packed_size
from .passes import covariance_pass, threaded_runner
from .noise_scale import HalfComparison, NoiseScale, compare_half_rows, noise_scale_from
from .prior import GaussianPrior, free_row_posteriors, posterior_sweeps, row_optima, row_posteriors
from .refit import alternating_sweeps, check_point_estimate
from .store import CovarianceStore, CovarianceStoreWriter
from .wls import WordFitter, check_conditioning, fit_free_rows, free_row_vectors, residual_variances

logger = logging.getLogger(__name__)

_STORAGE_CHOICES = ("memory", "lazy")
DEFAULT_SWEEPS = {"alternating": 2, "posterior": 1}  # the point estimates that sweep, and their default sweeps


@dataclass(frozen=True)
class ConditionalFit:
    """Weighted-least-squares centre vectors of co-occurrence rows, given fitted contexts.

    Attributes
    ----------
    embedding : ndarray, shape (n, D)
        ``w`` of each row (NaN for rows with too few contexts).
    bias : ndarray, shape (n,)
        The row's bias, estimated with its vector.
    sigma2 : ndarray, shape (n,)
        Residual variance with ``|K| - D - 1`` degrees of freedom.
    covariance : CovarianceStore
        ``Cov(w)`` of each row, the bias profiled out.
    """

    embedding: np.ndarray
    bias: np.ndarray
    sigma2: np.ndarray
    covariance: CovarianceStore


class GloVeVEstimator(TransformerMixin, BaseEstimator):
    """GloVe embeddings with GloVe-V covariances, fitted on a co-occurrence matrix.

    ``fit`` trains GloVe with the Stanford C tool's algorithm (or takes already trained
    parameters) and then, by default, gives every centre vector its posterior mean and covariance
    under an empirical-Bayes Gaussian prior, holding the context vectors and biases fixed:
    ``Sigma_i = s2_i (H_i + s2_i P)^{-1}`` (docs/method.md section 6.12), so the reported vector is
    the one its covariance describes and every word has one. The paper's recipe
    (``point_estimate="trained"``) keeps the trained vectors and ``Sigma_i = s2_i H_i^{-1}``
    (sections 2 and 6); there, words with ``|K_i| <= D``, and words whose ``H_i`` is numerically
    singular, get no covariance and are flagged with the reason.

    Parameters
    ----------
    n_components : int, default=50
        Embedding dimension D; must be below the number of words.
    x_max, alpha : float, default=100.0, 0.75
        GloVe weighting function.
    epochs : int, default=25
        Training epochs.
    learning_rate : float, default=0.05
        AdaGrad's initial step.
    random_state : None, int, numpy Generator or RandomState, default=0
        Seeds training (and :func:`~glovev_ext.fit_corpus`'s random halves); the same seed gives the
        same fit bit for bit at any ``n_jobs``, so a fit with the defaults is reproducible. None
        seeds from the operating system's entropy: each fit then differs.
    n_jobs : int or None, default=-1
        Threads for training and covariances (None or 1: one; -1: all cores).
    max_memory : int, str or None, default=None
        Memory budget of training (bytes, or a size such as ``"600M"``): the entries of ``X`` go to
        a file in ``TMPDIR`` once and are read one block per thread at a time, so training holds
        its parameters and nothing per nonzero, with the same result as without a budget (see
        :func:`~glovev_ext.glove.train_glove`). With ``covariance_storage="memory"``, covariances
        that would take more than a quarter of the budget are written to a file in ``TMPDIR`` as
        they are computed and memory-mapped from it (the file is deleted at once; the mapping
        keeps it until the store is freed), with the same values. The matrix passed to ``fit``
        is not bounded by it (the vectorizer's ``max_memory`` keeps it on disk).
    covariance_storage : {"memory", "lazy"} or path, default="memory"
        Where the covariance factors live: in memory; computed for a word when first asked
        (nothing stored for words never queried; the store reads the matrix passed to ``fit``,
        not a copy of it, when that matrix is already canonical CSR); or written at fit time to
        this file (atomic, memory-mapped afterwards).
    covariance_dtype : {"float64", "float32"}, default="float64"
        dtype of the stored factors (float32 halves the store; every covariance is still returned,
        and used, in float64).
    covariance_approximation : int, float or None, default=None
        None keeps each word's covariance exactly. Otherwise each is kept compact, as its leading
        eigenpairs plus a diagonal holding the variances they leave out
        (:meth:`CovarianceStore.approximated`): an int is the number of eigenpairs ``k``, a float in
        (0, 1] the share of each word's variance they must hold (as scikit-learn's PCA reads
        ``n_components``). A word takes ``D (k + 1)`` numbers instead of ``D (D + 1) / 2`` (a word
        whose ``k`` saves nothing stays exact); every variance stays exact, and every result that
        uses an approximated covariance says so. How far standard errors move for a given ``k`` is
        measured by ``bench/compact_covariances.py`` (docs/method.md 6.15: at D = 300, ``k = 50``
        moves the median standard error by 1-2 %; at D = 100 the spectrum is flatter, and 90 % of
        the variance takes more than half the eigenpairs, which saves nothing: give ``k``).
    conditioning : {"exact", "paper"}, default="exact"
        ``"exact"``: ``H_i^{-1}`` from its Cholesky factor whenever its estimated condition number
        is at most 1e10 (the inverse is then accurate to about 1e-6 relative); a word above it gets
        no covariance. ``"paper"``: the GloVe-V paper's rule, a pseudo-inverse dropping eigenvalues
        below 1e-3 of the largest once ``cond(H_i) * eps > 1e-10``; it sets the directions of
        largest variance to zero, so intervals of those words under-cover (results say so), and
        is kept to reproduce the paper's numbers.
    point_estimate : {"posterior", "trained", "optimum", "alternating"}, default="posterior"
        The centre vectors the covariances describe (docs/method.md sections 6.6 and 6.12):
        ``"posterior"`` (below); the trained vectors (the paper's); each replaced by its weighted-least-squares optimum given the
        trained C, b, c, the point GloVe-V's model takes it to be; ``n_sweeps`` exact alternating
        sweeps (W given C, b, c, then C given W, b, c) after training, ending with the optimum (words
        without a covariance keep their trained vectors); ``"posterior"``: each vector's posterior
        mean under an empirical-Bayes Gaussian prior (``prior_strength``), after ``n_sweeps``
        regularised sweeps, with its posterior covariance, which every word gets (``prior_share_``
        says how much of it is the prior's). Not with lazy storage.
    n_sweeps : int or None, default=None
        Sweeps of ``point_estimate="alternating"`` (None: 2) or ``"posterior"`` (None: 1; 0 is
        allowed: the posterior given the trained C, b, c). ``n_sweeps_`` is the number run.
    prior_strength : float, default=1.0
        ``gamma`` of ``point_estimate="posterior"``: the prior's precision is ``gamma`` times the
        one the data give (the spread of frequent words' vectors less their noise).
    noise_scale : NoiseScale, optional
        ``point_estimate="posterior"``: a factor on each word's residual variance by its total
        co-occurrence (``noise_scale_`` of another fit, to carry a calibration over). Without it,
        the scale is calibrated when ``fit`` is given two halves of the corpus, and 1 (the model's
        own noise) otherwise.
    pretrained : GloVeParameters, or tuple (W, C, b, c), optional
        Already trained parameters; training is skipped.
    backend : {"threads", "dask"}, default="threads"
        Where training and the passes over the words run. ``"dask"`` runs the fit on one
        :doc:`Dask cluster <dask:deploying>` (``client``'s, or one started for the fit) and gives
        the same numbers as threads, bit for bit: training runs the blocks schedule with the
        entries held on the workers (:func:`~glovev_ext.glove.train_glove`); the posterior's passes
        (the prior, the halves' comparison, the sweeps and the posteriors) send blocks of rows to
        the workers, which send back the vectors and factors; with ``point_estimate="trained"`` or
        ``"optimum"`` the workers write their factors into the store file themselves, so
        ``covariance_storage`` must be a path they can reach (``"alternating"`` too, whose sweeps
        run there as the posterior's do). A pass to a file (either backend) that is interrupted
        resumes when the same fit is run again.
    client : dask.distributed.Client, str or None
        With ``backend="dask"``: a client, a scheduler address, or None for a local cluster of
        ``n_jobs`` worker processes.
    device : str or None, default=None
        None: everything on the CPU. A PyTorch device (``"cuda"``, or ``"cpu"`` for the same code on
        the processor; ``pip install 'glovev-ext[gpu]'``): training runs there in mini-batches
        (:func:`~glovev_ext.glove.train_glove`), and every pass that fits rows one at a time (the
        covariance pass, the prior's, the posteriors, the sweeps, the halves' comparison, and
        :meth:`transform` and :meth:`conditional_fit`) computes there the Gram matrices of the rows'
        weighted designs (``|K_i| D^2`` operations per row), 64 rows at a time, grouped by context
        count, and, where a row's bias is fixed, the Cholesky factors of their ``H_i`` (``D^3 / 3``)
        (``glovev_ext.covariance.device.DeviceWordFitter``). The rest of each row's fit
        (LAPACK's condition estimate from the factor, the conditioning rule, ``s2``, the optimum, the
        posterior's regularised factor) stays on the CPU, so the results equal the CPU path's up to
        the order of the sums. Lazy storage computes on the CPU. With a device, ``max_memory``
        bounds the covariances only (the device holds the entries), and ``backend`` must be
        ``"threads"``.
    batch_size : int or None, default=None
        Entries per training batch with ``device`` (:func:`~glovev_ext.glove.train_glove`).
    progress : bool, default=True
        Show progress bars.

    Attributes
    ----------
    embedding_ : ndarray, shape (V, D)
        Centre vectors W (the embeddings): the trained ones, or those of ``point_estimate``.
    context_embedding_ : ndarray, shape (V, D)
        Context vectors C.
    bias_, context_bias_ : ndarray, shape (V,)
        Centre and context biases.
    covariance_ : CovarianceStore
        ``covariance_[i]`` is ``Sigma_i`` (D x D).
    sigma2_ : ndarray, shape (V,)
        Residual variances ``s2_i`` (NaN without covariance).
    n_contexts_ : ndarray, shape (V,)
        ``|K_i|``.
    covariance_defined_ : ndarray of bool, shape (V,)
        Words with a covariance (``|K_i| > D``).
    singular_ : ndarray of bool, shape (V,)
        Words with more than D contexts whose ``H_i`` is numerically singular (no covariance).
    pseudo_inverse_ : ndarray of bool, shape (V,)
        Words on the pseudo-inverse branch (``conditioning="paper"`` only).
    condition_number_ : ndarray, shape (V,)
        LAPACK's estimate of the 1-norm condition number of each ``H_i`` (inf where it is singular,
        NaN with too few contexts or, with lazy storage, not computed yet).
    covariance_rank_ : ndarray of int, shape (V,)
        Rank kept: D, fewer on the pseudo-inverse branch, 0 without covariance (-1: lazy storage,
        not computed yet; these two arrays fill in as words are queried); with
        ``covariance_approximation``, the rank of the covariances before they were approximated.
    optimum_ : ndarray, shape (V, D)
        The weighted-least-squares optimum ``w_i*`` given C, b, c (not with lazy storage).
    optimum_distance_ : ndarray, shape (V,)
        Mahalanobis distance of ``w_i`` from ``w_i*`` under ``Sigma_i`` (the model assumes 0; not with
        lazy storage; 0 when the point estimate is the optimum or the posterior mean, which its
        covariance describes).
    prior_ : GaussianPrior or None
        The prior of ``point_estimate="posterior"`` (None otherwise).
    prior_share_ : ndarray, shape (V,) or None
        ``point_estimate="posterior"``: the share of each word's posterior precision that is the
        prior's, ``tr(s2_i P Sigma_i / s2_i) / D`` (0: the data alone; above 0.5 the prior dominates).
    noise_scale_ : NoiseScale or None
        ``point_estimate="posterior"``: the factor on each word's ``s2`` by its total co-occurrence
        (``sigma2_`` includes it; identity when not calibrated), also applied to new rows in
        :meth:`conditional_fit` at their own totals; calibrated on halves of groups, it caps each
        word's degrees of freedom at ``n_groups - 1``, and with the halves' concentrations over the
        groups it also follows each row's (docs/method.md 6.21). None otherwise.
    group_concentration_ : ndarray of shape (V,) or None
        Each word's concentration over the groups of ``X``'s text, ``sum_g c_g^2 / (sum_g c_g)^2``
        (``X.group_concentration``, set by :func:`~glovev_ext.fit_corpus` with groups: 1 when one
        group holds every occurrence), at which ``noise_scale_`` scales its row; None without.
    n_sweeps_ : int
        Sweeps run after training (0 unless ``point_estimate`` is ``"alternating"`` or ``"posterior"``).
    training_costs_ : ndarray
        Cost per training epoch (empty when ``pretrained`` was given).
    fit_seconds_ : dict
        Wall time of the fit's two stages: ``train`` (checking the input included) and ``covariances``.
    words_ : ndarray of str objects or None
        The words, when the input matrix carried them (a ``CooccurrenceMatrix``).
    word_counts_ : ndarray of int64 or None
        How often each word occurs in the corpus, when the input matrix carried it (the
        ``CooccurrenceMatrix`` of :class:`~glovev_ext.CooccurrenceVectorizer` does).
    n_features_in_ : int
        V.

    Examples
    --------
    >>> import glovev_ext
    >>> docs = glovev_ext.load_default_corpus(max_documents=2000)
    >>> X = glovev_ext.CooccurrenceVectorizer(progress=False).fit_transform(docs)
    >>> model = glovev_ext.GloVeVEstimator(n_components=10, epochs=5, random_state=0, progress=False).fit(X)
    >>> model.covariance_[0].shape
    (10, 10)
    """

    def __init__(self, n_components: int = 50, *, x_max: float = 100.0, alpha: float = 0.75, epochs: int = 25,
                 learning_rate: float = 0.05, random_state=DEFAULT_SEED, n_jobs: int | None = -1,
                 max_memory: int | str | None = None,
                 covariance_storage: str | os.PathLike = "memory", covariance_dtype: str = "float64",
                 covariance_approximation: int | float | None = None,
                 conditioning: str = "exact", point_estimate: str = "posterior", n_sweeps: int | None = None,
                 prior_strength: float = 1.0, noise_scale: NoiseScale | None = None,
                 pretrained: GloVeParameters | Sequence[np.ndarray] | None = None,
                 backend: str = "threads", client=None, device: str | None = None, batch_size: int | None = None,
                 progress: bool = True):
        self.n_components = n_components
        self.x_max = x_max
        self.alpha = alpha
        self.epochs = epochs
        self.learning_rate = learning_rate
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.max_memory = max_memory
        self.covariance_storage = covariance_storage
        self.covariance_dtype = covariance_dtype
        self.covariance_approximation = covariance_approximation
        self.conditioning = conditioning
        self.point_estimate = point_estimate
        self.n_sweeps = n_sweeps
        self.prior_strength = prior_strength
        self.noise_scale = noise_scale
        self.pretrained = pretrained
        self.backend = backend
        self.client = client
        self.device = device
        self.batch_size = batch_size
        self.progress = progress

    def __sklearn_clone__(self):
        # scikit-learn deep-copies parameters; a Dask client must be shared instead.
        return clone_sharing_client(self)

    def fit(self, X, y=None, *, halves: tuple | list | None = None,
            n_groups: int | None = None) -> GloVeVEstimator:
        """Train GloVe on ``X`` (unless ``pretrained``) and compute every word's covariance.

        Parameters
        ----------
        X : sparse matrix or array, shape (V, V)
            Non-negative co-occurrence matrix (a ``CooccurrenceMatrix`` also gives ``words_`` and
            ``word_counts_``).
        y : None
            Ignored.
        halves : (matrix, matrix) or list of them, optional
            ``point_estimate="posterior"``: the co-occurrence matrices of two random halves of the
            corpus's documents, or of the groups they come in (books, authors: the unit the
            intervals then describe resampling, docs/method.md 6.16), in ``X``'s vocabulary (``X``
            is their sum); or a list of such pairs, one per random halving, which the calibration
            pools (docs/method.md 6.20). When ``X`` and the halves are
            :class:`~glovev_ext.CooccurrenceMatrix` objects with ``group_concentration``, the
            scale also follows each row's concentration over the groups of its text
            (docs/method.md 6.21). The noise scale
            ``noise_scale_`` is calibrated on them before the final posteriors
            (docs/method.md 6.13); :func:`~glovev_ext.fit_corpus` passes them.
        n_groups : int, optional
            With ``halves`` of whole groups: how many groups they split (None: each document is its
            own group). ``G`` groups say only so much about how groups vary, so each word's reference
            degrees of freedom are then at most ``G - 1`` (``noise_scale_.n_groups``, carried to
            :meth:`conditional_fit`; docs/method.md 6.16).

        Returns
        -------
        self
        """
        started = time.perf_counter()
        checked = self._check_params()
        dim, n_jobs = checked[0], checked[-1]
        matrix = validate_data(self, X, accept_sparse="csr", dtype=np.float64, reset=True)
        if matrix.shape[0] < 2:
            # In words about the matrix, keeping the "1 sample" that scikit-learn's checks look for.
            raise ValueError(f"the co-occurrence matrix has 1 word (1 sample, shape={matrix.shape}); "
                             "GloVe needs at least 2")
        matrix = check_cooccurrence(matrix)
        n_words = matrix.shape[0]
        if dim >= n_words:
            raise ValueError(f"n_components={dim} must be smaller than the number of words ({n_words})")
        halves = self._checked_halves(halves, matrix, n_groups)
        self.group_concentration_ = check_group_concentration(getattr(X, "group_concentration", None), n_words,
                                                              "X.group_concentration")
        if self.backend == "dask":
            with connected(self.client, n_jobs) as client:  # one cluster for every stage of the fit
                return self._fit_checked(X, matrix, halves, checked, started, client)
        return self._fit_checked(X, matrix, halves, checked, started, None)

    def _fit_checked(self, X, matrix: sp.csr_matrix, halves: _Halves | None, checked: tuple, started: float,
                     client) -> GloVeVEstimator:
        """:meth:`fit` once its inputs and parameters (``checked``, :meth:`_check_params`) are checked; ``client`` is
        the Dask client of ``backend="dask"``."""
        words = getattr(X, "words", None)
        dim, x_max, n_sweeps, storage, factor_dtype, n_jobs = checked
        n_words = matrix.shape[0]
        if self.pretrained is None:
            parameters = train_glove(matrix, dim, epochs=self.epochs, learning_rate=self.learning_rate,
                                     x_max=x_max, alpha=self.alpha, random_state=self.random_state,
                                     n_jobs=self.n_jobs, max_memory=None if self.device else self.max_memory,
                                     backend=self.backend, client=client, device=self.device,
                                     batch_size=self.batch_size, progress=self.progress)
        else:
            parameters = _check_pretrained(self.pretrained, n_words, dim)
        if self.point_estimate == "alternating":
            parameters = alternating_sweeps(matrix, parameters, n_sweeps, x_max, self.alpha, self.conditioning,
                                            n_jobs, client=client, device=self.device)
        elif self.point_estimate == "posterior" and n_sweeps:
            parameters = posterior_sweeps(matrix, parameters, n_sweeps, self.prior_strength, x_max, self.alpha, n_jobs,
                                          self.progress, client=client, device=self.device)
        self.n_sweeps_ = n_sweeps if self.point_estimate in DEFAULT_SWEEPS else 0
        self.embedding_ = parameters.center_vectors
        self.context_embedding_ = parameters.context_vectors
        self.bias_ = parameters.center_biases
        self.context_bias_ = parameters.context_biases
        self.training_costs_ = parameters.costs
        self.words_ = None if words is None else np.asarray(list(words), dtype=object)
        counts = getattr(X, "counts", None)
        self.word_counts_ = None if counts is None else np.array(counts, dtype=np.int64)

        trained = time.perf_counter()
        fitter = WordFitter(matrix, self.context_embedding_, self.context_bias_, x_max, self.alpha, self.conditioning)
        if storage == "lazy":
            sigma2 = residual_variances(fitter, self.embedding_, self.bias_)
            self.covariance_ = CovarianceStore.lazy(fitter, self.embedding_, self.bias_, sigma2, words=self.words_)
        else:
            with self._store_on_disk(storage, n_words, dim, factor_dtype) as storage:
                self.covariance_ = self._compute_covariances(fitter, storage, factor_dtype, n_jobs, halves, client)
                self.covariance_rank_ = np.array(self.covariance_.rank)  # of the covariances, before any approximation
                if self.covariance_approximation is not None:
                    self.covariance_ = self.covariance_.approximated(
                        self.covariance_approximation, path=None if storage == "memory" else storage, n_jobs=n_jobs)
        self.sigma2_ = np.asarray(self.covariance_.sigma2)
        self.n_contexts_ = np.asarray(self.covariance_.n_contexts)
        self.covariance_defined_ = self.covariance_.defined
        if storage == "lazy":
            self.covariance_rank_ = self.covariance_.rank  # fills in as words are queried
        self.condition_number_ = self.covariance_.condition
        self.fit_seconds_ = {"train": trained - started, "covariances": time.perf_counter() - trained}
        if storage == "lazy":
            logger.info("GloVe-V: %d of %d words have a covariance (computed when queried)",
                        int(self.covariance_defined_.sum()), n_words)
        elif self.point_estimate != "posterior":  # the posterior's pass logs its own summary
            logger.info("GloVe-V: %d of %d words have a covariance (%d numerically singular, %d on the "
                        "pseudo-inverse branch)", int(self.covariance_defined_.sum()), n_words,
                        int(self.singular_.sum()), int(self.pseudo_inverse_.sum()))
        return self

    @property
    def singular_(self) -> np.ndarray:
        """Words with more contexts than dimensions but a numerically singular ``H_i`` (no covariance), read from
        ``covariance_`` (a lazy store finds them as they are queried)."""
        check_is_fitted(self, "covariance_")
        return (self.n_contexts_ > self.embedding_.shape[1]) & ~self.covariance_.defined

    @property
    def pseudo_inverse_(self) -> np.ndarray:
        """Words on the pseudo-inverse branch, read from ``covariance_`` (so lazy storage fills it in)."""
        check_is_fitted(self, "covariance_")
        return self.covariance_.pseudo_inverse

    def transform(self, X) -> np.ndarray:
        """Weighted-least-squares centre vectors of co-occurrence rows, given the fitted contexts.

        Each row is a word's co-occurrences with the fitted vocabulary; its bias is estimated
        with its vector. See :meth:`conditional_fit` for biases and covariances.

        Parameters
        ----------
        X : sparse matrix or array, shape (n, V)

        Returns
        -------
        ndarray, shape (n, D)

        Raises
        ------
        ValueError
            For a row with ``D + 1`` or fewer contexts, or (``conditioning="exact"``) a numerically
            singular ``H``: the vector is not identified. With ``point_estimate="posterior"`` the
            rows' posterior means under the fitted prior, and only rows with fewer than 2 contexts
            raise.

        Notes
        -----
        With ``backend="dask"`` the rows are fitted on the cluster in blocks and only the vectors
        come back.
        """
        check_is_fitted(self, "covariance_")
        rows = self._validated_rows(X)
        if self.point_estimate == "posterior":
            concentration = check_group_concentration(getattr(X, "group_concentration", None), rows.shape[0],
                                                      "X.group_concentration")
            embedding = self._conditional_fit(rows, concentration).embedding
            short = np.flatnonzero(np.isnan(embedding).any(axis=1))
            if short.size:
                raise ValueError(f"{short.size} rows have fewer than 2 contexts, so their bias takes all the data and "
                                 f"their vector is the prior's mean; row {short[0]} is the first")
            return embedding
        if self.backend == "dask":
            from ._dask import dask_transform
            embedding, n_contexts = dask_transform(self.client, rows, self.context_embedding_, self.context_bias_,
                                                   self.x_max, self.alpha, self.conditioning,
                                                   n_workers=resolve_n_jobs(self.n_jobs))
        else:
            fitter = WordFitter(rows, self.context_embedding_, self.context_bias_, self.x_max, self.alpha,
                                self.conditioning)
            embedding, n_contexts = free_row_vectors(DeviceWordFitter.of(fitter, self.device, None))
        short = np.flatnonzero(n_contexts <= self.embedding_.shape[1] + 1)
        if short.size:
            raise ValueError(f"{short.size} rows have too few contexts to estimate a vector; row {short[0]} has "
                             f"{n_contexts[short[0]]}, and n_components + 1 = {self.n_components + 1} are needed")
        singular = np.flatnonzero(np.isnan(embedding).any(axis=1))
        if singular.size:
            raise ValueError(f"{singular.size} rows have a numerically singular H (their contexts do not place the "
                             f"vector along every direction), the first row {singular[0]}; conditioning='paper' "
                             "gives them the pseudo-inverse's vector")
        return embedding

    def conditional_fit(self, X) -> ConditionalFit:
        """Vectors, biases, residual variances and covariances of new co-occurrence rows.

        With ``point_estimate="posterior"``, each row's posterior under the fitted prior (its bias
        free): every row with two contexts or more gets a vector and a covariance.

        Parameters
        ----------
        X : sparse matrix or array, shape (n, V)

        Returns
        -------
        ConditionalFit
        """
        check_is_fitted(self, "covariance_")
        rows = self._validated_rows(X)
        return self._conditional_fit(rows, check_group_concentration(getattr(X, "group_concentration", None),
                                                                     rows.shape[0], "X.group_concentration"))

    def _check_params(self) -> tuple:
        """Every parameter that can be checked without data (:func:`~glovev_ext.check_fit_params` calls it for
        ``fit_corpus`` and ``glovev fit``, before any work).

        Returns ``(n_components, x_max, n_sweeps, storage, factor_dtype, n_jobs)``, validated.
        """
        dim = check_int(self.n_components, "n_components", minimum=1)
        x_max = check_positive_float(self.x_max, "x_max")
        if self.pretrained is None:
            check_training_params(self.epochs, self.learning_rate, self.alpha)
        parse_memory(self.max_memory)
        check_conditioning(self.conditioning)
        if self.conditioning == "paper" and self.point_estimate == "posterior":
            raise ValueError("conditioning='paper' (the GloVe-V paper's pseudo-inverse of H_i) belongs to the paper's "
                             "recipe, whose covariance is s2 H_i^-1; the posterior's covariance needs no such rule: "
                             "use point_estimate='trained' with conditioning='paper' for the paper's numbers")
        check_point_estimate(self.point_estimate)
        if self.n_sweeps is None:
            n_sweeps = DEFAULT_SWEEPS.get(self.point_estimate, 0)
        else:
            n_sweeps = check_int(self.n_sweeps, "n_sweeps", minimum=0 if self.point_estimate == "posterior" else 1)
        check_positive_float(self.prior_strength, "prior_strength")
        if self.noise_scale is not None:
            if not isinstance(self.noise_scale, NoiseScale):
                raise TypeError(f"noise_scale must be a NoiseScale (another fit's noise_scale_) or None, got "
                                f"{type(self.noise_scale).__name__}")
            if self.point_estimate != "posterior":
                raise ValueError("noise_scale scales the residual variances of point_estimate='posterior'; "
                                 f"point_estimate={self.point_estimate!r} keeps the model's own noise")
        storage = self._check_storage()
        if storage == "lazy" and self.point_estimate != "trained":
            raise ValueError(f"point_estimate={self.point_estimate!r} replaces every vector by a fit of its row, which "
                             "lazy storage does not compute: use covariance_storage='memory' or a path, or "
                             "point_estimate='trained' (the paper's recipe)")
        factor_dtype = np.dtype(self.covariance_dtype)
        if factor_dtype not in (np.float32, np.float64):
            raise ValueError(f"covariance_dtype must be 'float64' or 'float32', got {self.covariance_dtype!r}")
        if self.covariance_approximation is not None:
            check_approximation(self.covariance_approximation, dim)
            if storage == "lazy":
                raise ValueError("covariance_approximation makes stored covariances compact; lazy storage stores "
                                 "none: use covariance_storage='memory' or a path")
        n_jobs = resolve_n_jobs(self.n_jobs)
        check_backend(self.backend, self.client)
        check_device(self.device)
        if self.device is not None and self.backend == "dask":
            raise ValueError(f"device={self.device!r} trains on one device in this process; backend='dask' runs "
                             "the fit on a cluster: choose one")
        if self.batch_size is not None:
            if self.device is None:
                raise ValueError("batch_size is for training on a device (device='cuda' or 'cpu')")
            check_int(self.batch_size, "batch_size", minimum=1)
        if self.backend == "dask" and self.point_estimate != "posterior" and storage in _STORAGE_CHOICES:
            raise ValueError(f"with point_estimate={self.point_estimate!r} the dask backend writes the factors into a "
                             "store file its workers share: give covariance_storage a file path")
        return dim, x_max, n_sweeps, storage, factor_dtype, n_jobs

    def _checked_halves(self, halves, matrix: sp.csr_matrix, n_groups) -> _Halves | None:
        """The two halves as CSR matrices of ``matrix``'s shape, once the recipe can use them, and their groups."""
        if halves is None:
            if n_groups is not None:
                raise ValueError("n_groups says how many groups the halves split; give it with halves")
            return None
        if n_groups is not None:
            n_groups = check_int(n_groups, "n_groups", minimum=2)
        if self.point_estimate != "posterior":
            raise ValueError("halves calibrate the noise scale of point_estimate='posterior'; "
                             f"point_estimate={self.point_estimate!r} keeps the model's own noise")
        if self.noise_scale is not None:
            raise ValueError("give fit halves to calibrate the noise scale, or the estimator a noise_scale, not both")
        if isinstance(halves, tuple | list) and not halves:
            raise ValueError("halves is empty: give two co-occurrence matrices, or a list of such pairs")
        # a list (or tuple) of pairs is several halvings; two matrices are one
        several = isinstance(halves, tuple | list) and all(isinstance(pair, tuple | list) for pair in halves)
        halvings = list(halves) if several else [halves]
        checked = []
        concentrations = []
        for h, pair in enumerate(halvings):
            name = f"halves[{h}]" if several else "halves"
            if not isinstance(pair, tuple | list) or len(pair) != 2:
                count = len(pair) if isinstance(pair, tuple | list) else type(pair).__name__
                raise ValueError(f"{name} must be two co-occurrence matrices (a pair), got {count}")
            concentrations.append(tuple(
                check_group_concentration(getattr(half, "group_concentration", None), matrix.shape[0],
                                          f"{name}[{k}].group_concentration") for k, half in enumerate(pair)))
            pair = tuple(check_cooccurrence(half, name=f"{name}[{k}]") for k, half in enumerate(pair))
            for k, half in enumerate(pair):
                if half.shape != matrix.shape:
                    raise ValueError(f"{name}[{k}] has shape {half.shape}; the halves must be in X's vocabulary, "
                                     f"shape {matrix.shape}")
            checked.append(pair)
        return _Halves(tuple(checked), n_groups, tuple(concentrations))

    def _fitter_options(self) -> dict:
        return {"context_vectors": self.context_embedding_, "context_biases": self.context_bias_,
                "x_max": self.x_max, "alpha": self.alpha}

    def _validated_rows(self, X) -> sp.csr_matrix:
        rows = sp.csr_matrix(validate_data(self, X, accept_sparse="csr", dtype=np.float64, reset=False))
        if (rows.data < 0).any():
            raise ValueError("Negative values in data: X holds negative co-occurrence values")
        rows.eliminate_zeros()
        return rows

    def _conditional_fit(self, rows: sp.csr_matrix, concentration: np.ndarray | None = None) -> ConditionalFit:
        if self.point_estimate == "posterior":
            fitter = DeviceWordFitter.of(WordFitter(rows, self.context_embedding_, self.context_bias_, self.x_max,
                                                    self.alpha), self.device, None)
            vectors, biases, sigma2, store = free_row_posteriors(fitter, self.prior_, self._fallback_sigma2,
                                                                 noise_scale=self.noise_scale_,
                                                                 concentration=concentration,
                                                                 n_jobs=resolve_n_jobs(self.n_jobs))
            return ConditionalFit(embedding=vectors, bias=biases, sigma2=sigma2, covariance=store)
        fitter = WordFitter(rows, self.context_embedding_, self.context_bias_, self.x_max, self.alpha,
                            self.conditioning)
        fits = fit_free_rows(DeviceWordFitter.of(fitter, self.device, None))
        dim = self.embedding_.shape[1]
        with CovarianceStoreWriter(len(fits), dim, sum(fit.factor is not None for fit in fits)) as writer:
            writer.per_word.n_contexts[:] = [fit.n_contexts for fit in fits]
            writer.per_word.dof[:] = writer.per_word.n_contexts - dim - 1
            writer.per_word.condition[:] = [fit.condition for fit in fits]
            for k, fit in enumerate(fits):
                if fit.factor is not None:
                    writer.add(k, fit.factor)
        return ConditionalFit(embedding=np.array([f.optimum for f in fits]).reshape(len(fits), dim),
                              bias=np.array([f.bias for f in fits]), sigma2=writer.per_word.sigma2,
                              covariance=writer.store)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        tags.input_tags.pairwise = True
        tags.input_tags.positive_only = True
        tags.transformer_tags.preserves_dtype = ["float64"]
        return tags

    def _check_storage(self):
        storage = self.covariance_storage
        if isinstance(storage, str) and storage in _STORAGE_CHOICES:
            return storage
        if isinstance(storage, (str, os.PathLike)):
            return os.fspath(storage)
        raise ValueError(f"covariance_storage must be 'memory', 'lazy' or a file path, got {storage!r}")

    @contextmanager
    def _store_on_disk(self, storage: str, n_words: int, dim: int, factor_dtype: np.dtype) -> Iterator[str]:
        """``storage``, or under a budget that in-memory covariances would take more than a quarter of, a file in a
        temporary folder (TMPDIR): the store is memory-mapped from it and the file deleted once it is (the
        mapping keeps it until the store is freed)."""
        needed = n_words * packed_size(dim) * np.dtype(factor_dtype).itemsize
        budget = parse_memory(self.max_memory)
        if storage != "memory" or budget is None or needed <= budget // 4:
            yield storage
            return
        folder = make_temporary_folder("covariances")
        logger.info("max_memory=%s: the covariances (%.0f MiB) are written to a file in %s, memory-mapped",
                    self.max_memory, needed / 2**20, folder)
        try:
            yield os.path.join(folder, "covariances.glovev")
        finally:
            shutil.rmtree(folder, ignore_errors=True)

    def _compute_covariances(self, fitter: WordFitter, storage: str, factor_dtype: np.dtype,
                             n_jobs: int, halves: _Halves | None, client) -> CovarianceStore:
        self.prior_, self.prior_share_, self.noise_scale_ = None, None, None
        if self.point_estimate == "posterior":
            return self._posterior_covariances(fitter, storage, factor_dtype, n_jobs, halves, client)
        if client is not None:
            from ._dask import dask_runner
            runner = dask_runner(client, n_workers=n_jobs)
        else:
            runner = threaded_runner(n_jobs)
        at_optimum = self.point_estimate != "trained"
        result = covariance_pass(fitter, self.embedding_, self.bias_, runner=runner,
                                 path=None if storage == "memory" else storage, factor_dtype=factor_dtype,
                                 words=self.words_, progress=self.progress, at_optimum=at_optimum,
                                 device=self.device)
        self.optimum_, self.optimum_distance_ = result.optimum, result.distance
        if at_optimum:
            defined = result.store.defined
            self.embedding_ = self.embedding_.copy()
            self.embedding_[defined] = result.optimum[defined]
        return result.store

    def _posterior_covariances(self, fitter: WordFitter, storage: str, factor_dtype: np.dtype,
                               n_jobs: int, halves: _Halves | None, client) -> CovarianceStore:
        fitter = DeviceWordFitter.of(fitter, self.device, self.bias_)
        optima = row_optima(fitter, self.bias_, n_jobs, self.progress, client=client)
        own = optima.sigma2[np.isfinite(optima.sigma2)]
        self._fallback_sigma2 = float(np.median(own)) if own.size else np.nan
        if halves is not None:
            self.noise_scale_ = self._calibrated_scale(halves, optima.prior(self.prior_strength), n_jobs, client)
        else:
            self.noise_scale_ = self.noise_scale if self.noise_scale is not None else NoiseScale.identity()
        if self.max_memory is not None and halves is None:  # with halves, each comparison has handed it back
            trim_heap()  # what the prior's pass freed goes back before the store is built
        posteriors = row_posteriors(fitter, self.bias_, self.prior_strength, n_jobs, optima=optima,
                                    noise_scale=self.noise_scale_, concentration=self.group_concentration_,
                                    factor_dtype=factor_dtype,
                                    words=self.words_, path=None if storage == "memory" else storage,
                                    progress=self.progress, client=client)
        self.embedding_ = posteriors.mean
        self.optimum_, self.optimum_distance_ = posteriors.optimum, np.zeros(len(posteriors.mean))
        self.prior_, self.prior_share_ = posteriors.prior, posteriors.prior_share
        logger.info("GloVe-V posterior: prior from %d frequent words (strength %g); the prior dominates %d of %d "
                    "words (share of precision above 0.5)", posteriors.prior.n_rows, self.prior_strength,
                    int((posteriors.prior_share > 0.5).sum()), len(posteriors.prior_share))
        return posteriors.covariance

    def _calibrated_scale(self, halves: _Halves, prior: GaussianPrior, n_jobs: int, client) -> NoiseScale:
        """The noise scale from each halving's first comparison, pooled, and the first halving's refinement."""
        comparisons = [self._compare_halves(pair, prior, None, n_jobs, client, concentrations)
                       for pair, concentrations in zip(halves.matrices, halves.concentrations)]
        first = noise_scale_from(comparisons[0])
        pooled = first if len(comparisons) == 1 else noise_scale_from(HalfComparison.joined(comparisons))
        if first.is_identity:  # too few words in one halving to refine with: the pooled first comparison as it is
            scale = pooled
        else:  # the statistic does not fall in proportion: compare again
            logger.info("GloVe-V noise scale, first comparison: %s", first)
            scale = first.refined(self._compare_halves(halves.matrices[0], prior, first, n_jobs, client,
                                                       halves.concentrations[0]))
            if len(comparisons) > 1:
                scale = pooled.corrected(first, scale)
        scale = replace(scale, n_groups=halves.n_groups, n_halvings=len(comparisons))
        logger.info("GloVe-V noise scale from %d random halving(s) (%d words in both halves of the first): %s",
                    len(comparisons), comparisons[0].total.size, scale)
        return scale

    def _compare_halves(self, halves: tuple, prior: GaussianPrior, noise_scale: NoiseScale | None, n_jobs: int,
                        client, concentrations: tuple) -> HalfComparison:
        comparison = compare_half_rows(halves, self._fitter_options(), prior, self._fallback_sigma2,
                                       noise_scale=noise_scale, n_jobs=n_jobs, client=client, device=self.device,
                                       concentrations=concentrations, translation="estimate")
        if self.max_memory is not None:
            trim_heap()  # the halves' fits go back before the next pass allocates its own
        return comparison


class _Halves(NamedTuple):
    """``fit``'s checked halves, one pair per halving, how many groups they split (None: documents), and each
    half's rows' concentrations over its groups (a pair per halving, None where not given)."""

    matrices: tuple
    n_groups: int | None
    concentrations: tuple


def _check_pretrained(pretrained, n_words: int, dim: int) -> GloVeParameters:
    """Validate supplied (W, C, b, c) against the matrix, naming the part that does not fit."""
    if isinstance(pretrained, GloVeParameters):
        parts = (pretrained.center_vectors, pretrained.context_vectors, pretrained.center_biases,
                 pretrained.context_biases)
    else:
        parts = tuple(pretrained)
        if len(parts) != 4:
            raise ValueError(f"pretrained must be GloVeParameters or (W, C, b, c), got {len(parts)} arrays")
    names = ("centre vectors W", "context vectors C", "centre biases b", "context biases c")
    shapes = ((n_words, dim), (n_words, dim), (n_words,), (n_words,))
    checked = []
    for part, name, shape in zip(parts, names, shapes):
        array = np.asarray(part, dtype=np.float64)
        if array.shape != shape:
            raise ValueError(f"pretrained {name} have shape {array.shape}; this matrix and n_components={dim} "
                             f"need {shape}")
        if not np.isfinite(array).all():
            raise ValueError(f"pretrained {name} hold NaN or infinite values")
        checked.append(np.ascontiguousarray(array))
    return GloVeParameters(*checked, costs=np.empty(0))
