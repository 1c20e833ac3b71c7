"""One statistic from several independently fitted models: equality, pairwise differences, trend.

Corpora split by period, genre or source are fitted separately, so the GloVe-V estimates of the
same statistic from each are independent: their joint covariance is diagonal. On that:

- :meth:`ModelComparison.equality`: Welch's heterogeneous-variance test that the k values are
  equal (Welch 1951): ``F = Q / (k - 1) / (1 + 2 (k - 2) / (k^2 - 1) sum h_i)`` with
  ``Q = sum w_i (z_i - z_w)^2``, ``w_i = 1 / se_i^2``, ``h_i = (1 - w_i / W)^2 / nu_i``, on
  ``(k - 1, (k^2 - 1) / (3 sum h_i))`` degrees of freedom; with every ``nu_i`` infinite (normal
  references) it is Cochran's ``Q`` on ``chi2(k - 1)``. ``z_i`` and ``se_i`` are on the results'
  scale (atanh of the bounded value, as every interval of the library), and ``se_i`` is the error
  each result's own test and interval use (:attr:`ModelComparison.std_errors`): for a Monte Carlo
  result on the bounded scale the delta method's, not the draws' spread (docs/method.md 7.2).
- :meth:`ModelComparison.pairwise`: every difference, with a named ``multipletests`` correction.
- :meth:`ModelComparison.trend`: the inverse-variance weighted least-squares slope over an ordered
  covariate (decade, year), ``b = sum a_i x_i`` with ``a_i = w_i (t_i - t_w) / sum w_j (t_j - t_w)^2``:
  a contrast of the values, so its variance is ``1 / sum w_i (t_i - t_w)^2`` exactly.

Contrasts take Welch-Satterthwaite degrees of freedom from the models' own.

**Fits under one prior are not independent.** Posteriors under the same prior (the default
recipe's sub-corpora, :func:`~glovev_ext.fit_subcorpora`, all under the pooled fit's prior) share
the prior's part of their errors. When every result carries a
``PriorLink`` to one prior, the covariance of the k values is
``(v_i + v_j - Var(t_i - t_j)) / 2`` off the diagonal, with ``Var(t_i - t_j)`` from
``difference_variances`` on the test scale, and every comparison
uses it: the equality test is then the Wald statistic of the k - 1 differences with the last value
(for a diagonal covariance Cochran's ``Q``), its p-value the share of the same statistic at draws
of the fits under the null (``null_draws``: one truth, each fit's
shrinkage and noise), which carry what the linearisation misses for rare words. Treated as
independent, the equality of one cosine in two random halves of the embedded corpus rejected 0-2 %
of pairs of words seen fewer than 1,000 times at a nominal 5 % (docs/method.md 6.14).

**Why the delta method's error for Monte Carlo results.** A Monte Carlo result's ``std_error`` is
the spread of its draws, which a bounded statistic caps: where ``method="auto"`` chose Monte Carlo
(a word whose covariance is comparable to its vector) it is 0.7-1.0 of the delta method's, and the
true spread of the estimate between refits lies between the two. A result never tests with it on the
bounded scale: its interval is the delta method's on atanh joined with the draws' percentile
interval, and its test rejects only when both do (docs/method.md 6.3). Weighing the models by the
draws' spread made the equality of one cosine in two random halves of a corpus reject 5-10 % of
pairs at a nominal 5 %, more than the plain delta-method z; with each result's own error it rejects
no more than that z (docs/method.md 7.2, ``bench/equality_split_half.py``).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from itertools import combinations

import numpy as np
import pandas as pd
from statsmodels.iolib.summary import Summary
from statsmodels.stats.contrast import ContrastResults

from ..._checks import DEFAULT_SEED, check_int
from ..._docstrings import fill_doc
from ..engine.rendering import render
from ..engine.intervals import PIVOT, UNION, scale_derivative, to_scale, welch_satterthwaite
from ..engine.results import MONTE_CARLO, InferenceResult, ResultFamily
from ..engine.rule import NULL_DRAWS
from ..engine.shared_prior import common_prior, difference_variances, null_draws

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class ModelComparison:
    """The same statistic estimated on k independently fitted models.

    Attributes
    ----------
    family : ResultFamily
        One row per model (named by its label), with a diagonal covariance.
    covariate : ndarray or None
        An ordered covariate of the models (e.g. the decade), for :meth:`trend`.
    difference_variances : ndarray, shape (k, k), or None
        For models that are posteriors under one prior: ``Var(z_i - z_j)`` on the test scale (atanh of
        a bounded value), the prior's shared part taken out (``difference_variances``),
        which the equality test uses; the family's covariance then holds the same on the values' scale
        off its diagonal. None for independent models (a diagonal covariance).
    links : tuple of PriorLink or None
        For models under one prior: each result's link to it.
    n_draws : int
    random_state : None, int or numpy Generator
        Of :attr:`null_draws`.
    """

    family: ResultFamily
    covariate: np.ndarray | None = None
    difference_variances: np.ndarray | None = None
    links: tuple | None = field(default=None, repr=False)
    n_draws: int = 2000
    random_state: object = field(default=DEFAULT_SEED, repr=False)

    @cached_property
    def null_draws(self) -> np.ndarray | None:
        """For models under one prior: the values on the test scale at ``n_draws`` draws of the k fits'
        estimates under the null that one truth underlies them all
        (``null_draws``), from which :meth:`equality` takes its p-value.
        None for independent models, and where the draws cannot be made (an unpickled result). Draws at a
        bound of the statistic (a cosine of exactly 1, infinite on atanh) are left out; if every draw
        is, None. With t references (``use_t``), each fit's noise of a word is drawn from t on that word's
        degrees of freedom, so a calibration on few groups (at most ``G - 1``) reaches this test too."""
        if self.difference_variances is None:
            return None
        drawn = null_draws(self.links, self.n_draws, self.random_state,
                           use_t=bool(np.isfinite(self.family.df).any()))
        if drawn is None:
            return None
        scaled = to_scale(drawn, self.family.bounds, self.family.scale)
        finite = np.isfinite(scaled).all(axis=1)
        if not finite.all():
            logger.warning("%d of %d null draws of %s reach a bound of the statistic and are left out",
                           np.count_nonzero(~finite), finite.size, self.family.name)
        return scaled[finite] if finite.any() else None

    @property
    def shared_prior(self) -> bool:
        """Whether the models are posteriors under one prior, whose shared part the comparisons take out."""
        return self.difference_variances is not None

    @property
    def std_errors(self) -> np.ndarray:
        """Each model's standard error as its own test and interval use it, which the comparisons weigh by.

        For Monte Carlo results whose intervals use their draws, the delta method's: their
        ``std_error`` is the spread of the draws, which a bounded statistic caps, while their intervals
        and tests are built from the delta method's error (docs/method.md 6.3, 7.2;
        :attr:`InferenceResult.tested_std_error <glovev_ext.stats.InferenceResult.tested_std_error>`).
        """
        return self.family.tested_std_errors

    @property
    def labels(self) -> tuple:
        """The models' names."""
        return self.family.names

    @property
    def statistic(self) -> str:
        """What was estimated (the first result's name)."""
        return self.family.name

    def equality(self) -> ContrastResults:
        """Welch's test that the k values are equal (Cochran's Q when every reference is normal).

        Returns
        -------
        statsmodels ContrastResults
            ``F`` test (``fvalue``, ``df_num``, ``df_denom``, ``pvalue``), or with normal references a
            ``chi2`` test (``statistic``, ``df_denom`` = k - 1, ``pvalue``).

        For models under one prior with :attr:`null_draws`, the ``chi2`` test's statistic is the Wald
        statistic of the differences and its ``pvalue`` the share of the null draws' statistics at
        least as large (``null_distribution`` says how many); its ``chi2(k - 1)`` reference is only
        the large-sample limit.

        Notes
        -----
        The values are weighed by :attr:`std_errors`, the errors of each result's own Wald test: for
        Monte Carlo results on the bounded scale the delta method's on atanh, not the draws' spread,
        which understates how far the estimate moves between corpora and made the test reject 5-10 %
        of unchanged cosines at a nominal 5 % (docs/method.md 7.2). No draws enter: the results' own
        tests add a percentile half, which has no counterpart for k values, and the draws of two
        results made with the same ``random_state`` are not independent.
        """
        family = self.family
        k = len(family)
        values = to_scale(family.estimates, family.bounds, family.scale)
        variances = (self.std_errors * scale_derivative(family.estimates, family.bounds, family.scale)) ** 2
        weights = 1.0 / variances
        if self.difference_variances is None:
            differences = np.add.outer(variances, variances)
            np.fill_diagonal(differences, 0.0)
        else:
            differences = self.difference_variances
        q = _wald_of_differences(values, differences)
        if self.null_draws is not None:
            drawn = _wald_of_differences(self.null_draws, differences)
            test = _DrawnWaldTest(statistic=q, distribution="chi2", df_denom=k - 1)
            test.pvalue = np.asarray((1.0 + np.count_nonzero(drawn >= q)) / (1.0 + drawn.size))
            test.null_distribution = f"{drawn.size} draws of the fits under one truth"
            return test
        with np.errstate(divide="ignore"):
            h = float(np.where(np.isfinite(family.df), (1 - weights / weights.sum()) ** 2 / family.df, 0.0).sum())
        if h == 0.0:
            return ContrastResults(statistic=q, distribution="chi2", df_denom=k - 1)
        f = q / (k - 1) / (1 + 2 * (k - 2) / (k**2 - 1) * h)
        return ContrastResults(F=f, df_num=k - 1, df_denom=(k**2 - 1) / (3 * h))

    def pairwise(self, correction: str | None = "holm", alternative: str = "two-sided") -> ResultFamily:
        """Every difference ``value[i] - value[j]`` (i before j), adjusted by ``multipletests(method=correction)``.

        A difference is a Wald test with the errors of :attr:`std_errors`; where every model has Monte
        Carlo draws on the bounded scale it also asks the draws of the difference (each model's draws
        paired with other random numbers than the other's), as a single result does. For models under
        one prior with :attr:`null_draws`, the differences are of the values on the test scale (atanh of
        a bounded value), tested against those draws as :meth:`equality` is, so for two models the two
        tests agree (docs/method.md 6.19).

        Parameters
        ----------
        correction : str or None, default="holm"
            A ``statsmodels.stats.multitest.multipletests`` method, or None for raw p-values.
        alternative : {"two-sided", "larger", "smaller"}
        """
        pairs = list(combinations(range(len(self.family)), 2))
        weights = np.zeros((len(pairs), len(self.family)))
        for row, (i, j) in enumerate(pairs):
            weights[row, i], weights[row, j] = 1.0, -1.0
        names = [f"{self.labels[i]} - {self.labels[j]}" for i, j in pairs]
        if self.null_draws is not None:
            differences = self._null_contrasts(weights, names,
                                               f"pairwise differences of {self._on_test_scale(self.statistic)}",
                                               alternative)
        else:
            differences = self.linear(weights, names, f"pairwise differences of {self.statistic}", alternative)
        return differences if correction is None else differences.correct(correction)

    def trend(self, covariate: Sequence[float] | None = None, alternative: str = "two-sided") -> InferenceResult:
        """The inverse-variance weighted slope of the values over ``covariate`` (per unit of it), tested against 0.

        The weights are ``1 / se_i^2`` with the errors of :attr:`std_errors`. For models under one prior with
        :attr:`null_draws`, the slope is of the values on the test scale (atanh of a bounded value, weighed by
        their errors there), tested against those draws as :meth:`equality` is (docs/method.md 6.19).

        Parameters
        ----------
        covariate : sequence of float, optional
            One value per model; the comparison's own ``covariate`` by default.
        alternative : {"two-sided", "larger", "smaller"}
        """
        t = self.covariate if covariate is None else np.asarray(covariate, dtype=np.float64)
        if t is None:
            raise ValueError("trend() needs a covariate: pass one, or give compare_models a covariate")
        if t.shape != (len(self.family),):
            raise ValueError(f"the covariate needs one value per model ({len(self.family)}), got shape {t.shape}")
        drawn = self.null_draws is not None
        family = self.family
        errors = self.std_errors * (scale_derivative(family.estimates, family.bounds, family.scale) if drawn else 1.0)
        w = 1.0 / errors**2
        centred = t - (w * t).sum() / w.sum()
        spread = (w * centred**2).sum()
        if spread <= 0:
            raise ValueError("the covariate takes a single value: no trend can be estimated")
        if drawn:
            name = (f"trend of {self._on_test_scale(self.statistic)} per unit of the covariate (inverse-variance "
                    "weighted)")
            return self._null_contrasts((w * centred / spread)[None], [name], name, alternative)[0]
        name = f"trend of {self.statistic} per unit of the covariate (inverse-variance weighted)"
        return self.linear((w * centred / spread)[None], [name], name, alternative)[0]

    def _on_test_scale(self, statistic: str) -> str:
        """``statistic`` named on the scale the comparisons under one prior test it (atanh where bounded)."""
        family = self.family
        bounded = family.scale == "bounded" and np.isfinite(family.bounds).all()
        return f"atanh({statistic})" if bounded and (family.bounds == (-1.0, 1.0)).all() else (
            f"{statistic} on atanh of its range" if bounded else statistic)

    def _null_contrasts(self, weights: np.ndarray, names: Sequence[str], name: str,
                        alternative: str) -> ResultFamily:
        """Contrasts ``weights @ z`` of the values on the test scale (each row of ``weights`` summing to 0) under one
        prior, tested against the equality test's own reference: the statistic ``(c^T z - null) / se`` over the
        :attr:`null_draws`, symmetrised (docs/method.md 6.19). For two models, ``pairwise()``'s two-sided p-value is
        then ``equality()``'s to within 2.5 / n_draws (the equality test counts ``(1 + m) / (1 + n)``, the pivot
        interpolates the mirrored draws' share).

        ``se^2 = -c^T D c / 2`` with ``D`` the :attr:`difference_variances` (exact for contrasts).
        """
        family = self.family
        weights = np.atleast_2d(np.asarray(weights, dtype=np.float64))
        z = to_scale(family.estimates, family.bounds, family.scale)
        covariance = -0.5 * weights @ self.difference_variances @ weights.T
        errors = np.sqrt(np.clip(np.diag(covariance), 0.0, None))
        with np.errstate(divide="ignore", invalid="ignore"):
            pivots = np.where(errors > 0, (self.null_draws @ weights.T) / errors, 0.0)
        n = len(self.null_draws)
        return ResultFamily.of(
            name, names, weights @ z, covariance, method=NULL_DRAWS,
            method_reason=(f"tested against {n} draws of the fits under one truth (the equality test's reference), "
                           f"on the scale every interval of the statistic is formed on "
                           f"({self._on_test_scale(self.statistic)})"),
            uncertainty=family.uncertainty, words=family.words, dropped=family.dropped,
            dropped_noun=family.dropped_noun, draws=np.concatenate([pivots, -pivots]), draws_interval=PIVOT,
            scale="linear", alternative=alternative)

    def linear(self, weights: np.ndarray, names: Sequence[str], name: str,
               alternative: str = "two-sided") -> ResultFamily:
        """``weights @ values`` with their covariance; Welch-Satterthwaite df from each model's df (and share
        of the variance its test uses, :attr:`std_errors`)."""
        combined = self.family.linear(weights, names, name, alternative)
        contributions = (np.atleast_2d(weights) ** 2 * self.std_errors**2).T
        return combined.replace(df=welch_satterthwaite(contributions, self.family.df))

    def summary_frame(self, *, confidence_level: float = 0.95) -> pd.DataFrame:
        """Each model's value with its interval (and covariate, if any)."""
        frame = self.family.summary_frame(confidence_level=confidence_level)
        if self.covariate is not None:
            frame.insert(0, "covariate", self.covariate)
        return frame

    def summary(self, *, confidence_level: float = 0.95) -> Summary:
        """A statsmodels ``Summary``: each model, the equality test, and the trend when there is a covariate."""
        test = self.equality()
        if test.distribution == "F":
            line = (f"Equality of the {len(self.family)} values (Welch): F = {float(test.fvalue):.3f} on "
                    f"({test.df_num:g}, {test.df_denom:.1f}) df, p = {float(test.pvalue):.4g}")
        elif hasattr(test, "null_distribution"):
            line = (f"Equality of the {len(self.family)} values (Wald of the differences): chi2 = "
                    f"{float(test.statistic):.3f}, p = {float(test.pvalue):.4g} from {test.null_distribution}")
        else:
            line = (f"Equality of the {len(self.family)} values (Cochran's Q): chi2 = {float(test.statistic):.3f} "
                    f"on {test.df_denom} df, p = {float(test.pvalue):.4g}")
        lines = [line]
        if self.covariate is not None:
            slope = self.trend()
            low, high = slope.conf_int(confidence_level=confidence_level)
            lines.append(f"Trend per unit of the covariate: {slope.estimate:.4g} [{low:.4g}, {high:.4g}], "
                         f"p = {slope.pvalue:.4g}")
        lines += [("The models are posteriors under one prior: the part of their errors it makes common is taken "
                   "out of every comparison" if self.shared_prior
                   else "The models were fitted separately, so their estimates are independent"),
                  f"Uncertainty: {self.family.uncertainty}"]
        return render(self.summary_frame(confidence_level=confidence_level),
                      f"{self.statistic} across {len(self.family)} models", lines)

    def __str__(self) -> str:
        return str(self.summary())


@fill_doc
def compare_models(results: Mapping[str, InferenceResult] | Sequence[InferenceResult], *,
                   labels: Sequence[str] | None = None, covariate: Sequence[float] | None = None,
                   n_draws: int = 2000, random_state=DEFAULT_SEED) -> ModelComparison:
    """Compare one statistic estimated on several independently fitted models.

    Parameters
    ----------
    results : dict or sequence of InferenceResult
        The same statistic from each model (e.g. ``{"1850s": kv_1850.weat_test(...), ...}``), each
        from a separate fit of separate text. Results of posteriors under one prior (the default
        recipe's :func:`~glovev_ext.fit_subcorpora`) are correlated through it, which the comparison
        accounts for when every result carries its ``prior_link`` (every delta-method or Monte Carlo
        result of an embedding with a ``prior``); otherwise they are taken as independent.
    labels : sequence of str, optional
        Names of the models (the dict's keys by default, else ``"model 1"``, ...).
    covariate : sequence of float, optional
        An ordered covariate of the models (decade, year) for :meth:`ModelComparison.trend`.
    n_draws : int, default=2000
        For models under one prior: draws of the fits under the null, which calibrate the equality
        test (:attr:`ModelComparison.null_draws`, made when the test is first asked for).
    {random_state}
        Only those null draws use it.

    Returns
    -------
    ModelComparison
    """
    check_int(n_draws, "n_draws", minimum=2)
    if isinstance(results, Mapping):
        labels = list(results) if labels is None else list(labels)
        results = list(results.values())
    results = list(results)
    labels = [f"model {k + 1}" for k in range(len(results))] if labels is None else [str(x) for x in labels]
    if len(results) < 2:
        raise ValueError(f"comparing models needs at least two results, got {len(results)}")
    if len(labels) != len(results) or len(set(labels)) != len(labels):
        raise ValueError(f"need {len(results)} distinct labels, got {labels}")
    if len({r.scale for r in results}) > 1:
        raise ValueError("the results were formed on different scales (bounded and linear): estimate them alike")
    errors = np.array([r.draws_std_error if r.method == MONTE_CARLO else r.std_error for r in results])
    tested = np.array([r.tested_std_error for r in results])
    for shown in (errors, tested):
        if not (np.isfinite(shown) & (shown > 0)).all():
            raise ValueError(f"every result needs a positive standard error, got {shown.tolist()}")
    if covariate is not None:
        covariate = np.asarray(covariate, dtype=np.float64)
        if covariate.shape != (len(results),) or not np.isfinite(covariate).all():
            raise ValueError(f"the covariate needs one finite value per model ({len(results)})")
    draws = [r.draws for r in results]
    shared = common_prior([r.prior_link for r in results])
    # draws of fits under one prior would need the prior's part drawn in common: the rows are Wald tests then
    joint_draws = not shared and all(r.method == MONTE_CARLO and d is not None for r, d in zip(results, draws)) \
        and len({len(d) for d in draws}) == 1
    delta = np.array([r.delta_std_error for r in results])
    method = " / ".join(sorted({r.method for r in results}))  # draws join the intervals only when all have them
    kinds = {r.draws_interval for r in results}  # how the results' intervals use their draws
    # Without draws for every model the family's rows are Wald tests alone: they take each result's own
    # error (ModelComparison.std_errors), not a Monte Carlo result's spread of draws.
    family = ResultFamily.of(results[0].name, labels, np.array([r.estimate for r in results]),
                             np.diag((errors if joint_draws else tested) ** 2), method=method,
                          uncertainty=results[0].uncertainty,
                          words=tuple(dict.fromkeys(w for r in results for w in r.words)),
                          dropped=tuple(dict.fromkeys(d for r in results for d in r.dropped)),
                          dropped_noun=results[0].dropped_noun,
                          draws=_independent_columns(draws) if joint_draws else None,
                          df=np.array([r.df for r in results]), bounds=np.array([r.bounds for r in results]),
                          scale=results[0].scale,
                          method_reason="; ".join(dict.fromkeys(r.method_reason for r in results if r.method_reason)),
                          delta_covariance=np.diag(np.where(np.isfinite(delta), delta, tested) ** 2) if joint_draws
                          else None,
                          draws_interval=next(iter(kinds)) if len(kinds) == 1 else UNION)
    differences = links = None
    if shared:
        links = tuple(r.prior_link for r in results)
        family, differences = _with_shared_prior(family, links)
    return ModelComparison(family, covariate, differences, links, n_draws, random_state)


def _with_shared_prior(family: ResultFamily, links: list) -> tuple[ResultFamily, np.ndarray | None]:
    """The family with the covariances its shared prior makes, and ``Var(t_i - t_j)`` on the test scale.

    Off the diagonal the covariance is ``(v_i + v_j - Var(x_i - x_j)) / 2`` on the values' own scale
    (which pairwise differences and the trend use); the equality test uses the differences' variances
    on the test scale (atanh of a bounded value), formed there. The covariance need not be positive
    semi-definite: each fit's own variance ``v_i`` is mostly the prior's part at its own estimate, while
    a difference sees only the fits' own noise, so ``Var(x_i - x_j)`` can fall below
    ``(sqrt(v_i) - sqrt(v_j))^2``; only differences of the values are tested with it (forcing it
    positive made the equality of rare words' cosines reject 1 % at a nominal 5 % by simulation).
    An estimate at a bound (no test-scale gradient) leaves the family as independent.
    """
    derivatives = scale_derivative(family.estimates, family.bounds, family.scale)
    if not (np.isfinite(derivatives) & (derivatives > 0)).all():
        return family, None
    variances = np.diag(family.covariance)
    linear, scaled = difference_variances(links, np.vstack([np.ones(len(links)), derivatives]))
    covariance = (np.add.outer(variances, variances) - linear) / 2.0
    np.fill_diagonal(covariance, variances)
    return family.replace(covariance=covariance), scaled


class _DrawnWaldTest(ContrastResults):
    """A Wald statistic whose p-value is the share of null draws at least as large: its printout says so, and that
    ``chi2(df_denom)`` is only the large-sample limit (statsmodels' would print a chi2 test)."""

    def summary(self, xname=None, alpha=0.05, title=None) -> str:
        """The test in one line, naming where its p-value comes from (the parameters are statsmodels')."""
        return (f"<Wald test, p-value from {self.null_distribution} (chi2({int(self.df_denom)}) only in the "
                f"large-sample limit): statistic={float(self.statistic):.4g}, p-value={float(self.pvalue):.4g}>")

    def __str__(self) -> str:
        return self.summary()


def _wald_of_differences(values: np.ndarray, differences: np.ndarray) -> float | np.ndarray:
    """``d^T K^-1 d`` for the differences ``d_i = z_i - z_k`` of each value with the last (of each row of values).

    ``differences`` holds ``Var(z_i - z_j)``, so ``K_ij = Cov(d_i, d_j) = (Var(z_i - z_k) + Var(z_j - z_k)
    - Var(z_i - z_j)) / 2``. For independent values it is Cochran's ``Q = sum w_i (z_i - z_w)^2``. A
    difference with no variance (a word both fits return at the prior's mean) counts only when it is not zero.
    """
    last = differences[:-1, -1]
    variance = (last[:, None] + last[None, :] - differences[:-1, :-1]) / 2.0
    gaps = np.atleast_2d(values)[:, :-1] - np.atleast_2d(values)[:, -1:]
    solution, *_ = np.linalg.lstsq(variance, gaps.T, rcond=None)
    unexplained = np.abs(gaps.T - variance @ solution).max(axis=0) > 1e-10 * max(1.0, np.abs(values).max())
    # a difference the covariance says cannot vary, and yet it does, is infinitely far from 0
    out = np.where(unexplained, np.inf, np.maximum((gaps.T * solution).sum(axis=0), 0.0))
    return float(out[0]) if np.ndim(values) == 1 else out


def _independent_columns(draws: Sequence[np.ndarray]) -> np.ndarray:
    """The models' draws side by side, model k's shifted by k places so that no row pairs draws of one deviate.

    Draws of separately fitted models are independent only if they were drawn from different random
    numbers: two results made with the same ``random_state`` share their normal deviates, row by row
    (on the split halves of docs/method.md 7.2 a cosine's draws in the two halves correlate 0.2-0.9),
    and the draws of a difference would then spread far less than the difference does. Each model's
    draws are i.i.d., so a shift keeps each one's distribution and pairs rows made from different deviates.
    """
    return np.column_stack([np.roll(np.asarray(d), k) for k, d in enumerate(draws)])
