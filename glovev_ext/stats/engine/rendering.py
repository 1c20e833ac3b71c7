"""The one rendering path of every result: a table (a DataFrame) and notes, as a statsmodels ``Summary``."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
from statsmodels.iolib.summary import Summary
from statsmodels.iolib.table import SimpleTable

from .rule import ATANH, FROM_P, PLAIN
from .words import NO_COVARIANCE, NOT_IN_VOCABULARY

_SHOWN_DROPPED = 20
_KIND_ORDER = (PLAIN, ATANH, FROM_P)
_KIND_SUFFIX = {PLAIN: "", ATANH: " (atanh)", FROM_P: " (from p)"}
_P_HEADS = {"two-sided": "P>|{}|", "larger": "P>{}", "smaller": "P<{}"}
DRAWS_SD = "draws sd"


def parameter_frame(names: Sequence, estimates, std_errors, statistics, kinds, pvalues, intervals, df, alternative: str,
                    spreads=None) -> pd.DataFrame:
    """The parameter table of one or several statistics, each column what its head says.

    ``coef``, ``std err`` (the standard error the interval and test are built from), ``draws sd``
    (the Monte Carlo draws' spread, where given), the test statistic under a head naming what it is
    (``kinds``, :mod:`glovev_ext.stats.engine.rule`; one column per kind present, empty where a row's
    statistic is of another kind), the p-value under a head naming its tail for ``alternative``, the
    interval, and ``df`` when any row has a t reference (``t`` heads then, ``z`` otherwise).
    """
    m = len(names)
    df = np.broadcast_to(np.asarray(df, dtype=float), (m,))
    letter = "t" if np.isfinite(df).any() else "z"
    intervals = np.asarray(intervals, dtype=float).reshape(m, 2)
    kinds = np.asarray(kinds, dtype=object)
    statistics = np.asarray(statistics, dtype=float)
    columns = {"coef": estimates, "std err": std_errors}
    if spreads is not None:
        columns[DRAWS_SD] = spreads
    for kind in _KIND_ORDER:
        if (kinds == kind).any():
            columns[letter + _KIND_SUFFIX[kind]] = np.where(kinds == kind, statistics, np.nan)
    columns[_P_HEADS[alternative].format(letter)] = pvalues
    columns["Conf. Int. Low"], columns["Conf. Int. Upp."] = intervals[:, 0], intervals[:, 1]
    if letter == "t":
        columns["df"] = df
    return pd.DataFrame({column: np.asarray(value, dtype=float) for column, value in columns.items()},
                        index=[str(name) for name in names])


def column_lines(frame: pd.DataFrame, draws: str = "the Monte Carlo draws") -> list[str]:
    """What the heads of ``frame`` that are not statsmodels' own mean (``draws``: what a test from p inverts with)."""
    lines = []
    for column in frame.columns:
        if column.endswith(_KIND_SUFFIX[ATANH]):
            lines.append(f"{column}: the test statistic on atanh of the value mapped to (-1, 1): "
                         "(atanh(coef) - atanh(null)) / (std err x atanh's slope at coef)")
        elif column.endswith(_KIND_SUFFIX[FROM_P]):
            lines.append(f"{column}: the statistic whose tail probability is the p-value; the test inverts the "
                         f"interval, which uses {draws}, so there is no Wald statistic of its own")
        elif column == DRAWS_SD:
            lines.append(f"{DRAWS_SD}: the statistic's standard deviation over normal draws of the words' vectors "
                         "(Monte Carlo's standard error); std err is the delta method's, from which the interval and "
                         "test are built with the draws (docs/method.md 6.3 and 6.9)")
    return lines


def reference_line(df, bounds: np.ndarray, scale: str, df_column: bool = True, null_draws: int | None = None) -> str:
    """What the intervals and tests rest on: the reference distribution and the scale.

    Several degrees of freedom are pointed to in the table's ``df`` column, or (``df_column``
    False, for a table without one) given as their range. With ``null_draws``, the reference is the
    statistic over that many draws under the null (a pivot), not a t or normal distribution.
    """
    if null_draws is not None:
        return (f"Reference: (estimate - null) / std err over {null_draws} draws under the null and their mirror "
                "images, not a t or normal distribution; intervals: the estimate less std err times its quantiles")
    df = np.asarray(df, dtype=float)
    finite = df[np.isfinite(df)]
    if finite.size == 0:
        reference = "normal"
    elif finite.size == df.size == 1:
        reference = f"t with {finite[0]:.1f} degrees of freedom"
    elif df_column:
        reference = "t, degrees of freedom per row (df column)"
    else:
        reference = f"t, Welch-Satterthwaite degrees of freedom per row, {finite.min():.1f} to {finite.max():.1f}"
    bounded = np.isfinite(bounds).all(axis=1)
    if scale == "bounded" and bounded.any():
        ranges = ", ".join(dict.fromkeys(f"[{low:g}, {high:g}]" for low, high in bounds[bounded]))
        where = f"intervals and tests on atanh of the value mapped from its range {ranges} (they stay inside it)"
    else:
        where = "symmetric intervals on the statistic itself"
    return f"Reference: {reference}; {where}"


def notes(first: Sequence[str], uncertainty: str, words: Sequence, dropped: Sequence,
          dropped_noun: str = "word") -> list[str]:
    """What a result rests on: ``first`` lines, the uncertainty it carries, the words it used and dropped.

    ``dropped`` holds items named ``dropped_noun`` ("word", "pair", "question"), each with the reasons
    of its unusable words; the count splits those with a word out of the vocabulary from those whose
    words are all in it but lack a covariance.
    """
    line = f"Words used: {len(words)}; {_plural(len(dropped), dropped_noun)} dropped"
    if dropped:
        outside = sum(NOT_IN_VOCABULARY in str(item) for item in dropped)
        without = sum(NO_COVARIANCE in str(item) and NOT_IN_VOCABULARY not in str(item) for item in dropped)
        other = len(dropped) - outside - without
        whose = "" if dropped_noun == "word" else "with a word "
        parts = [f"{outside} {whose}{NOT_IN_VOCABULARY}" if outside else "",
                 f"{without} {whose}without a covariance" if without else "",
                 f"{other} for other reasons" if other else ""]
        line += " (" + ", ".join(part for part in parts if part) + ")"
    lines = [*first, f"Uncertainty: {uncertainty}", line]
    if dropped:
        lines.append("Dropped: " + ", ".join(map(str, dropped[:_SHOWN_DROPPED]))
                     + (" ..." if len(dropped) > _SHOWN_DROPPED else ""))
    return lines


def _plural(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def render(frame: pd.DataFrame, title: str, lines: Sequence[str]) -> Summary:
    """A statsmodels ``Summary`` showing ``frame`` (numbers to 4 significant digits) and the notes."""
    summary = Summary()
    cells = [[_cell(value) for value in row] for row in frame.itertuples(index=False)]
    summary.tables.append(SimpleTable(cells, headers=[str(c) for c in frame.columns],
                                      stubs=[str(i) for i in frame.index], title=title))
    summary.add_extra_txt(list(lines))
    return summary


def _cell(value) -> str:
    if isinstance(value, (bool, np.bool_)):
        return str(value)
    if isinstance(value, (int, np.integer)):
        return f"{value:d}"
    if isinstance(value, (float, np.floating)):
        return f"{value:.4g}"
    return str(value)
