"""The one rendering path of every result: a table (a DataFrame) and notes, as a statsmodels ``Summary``."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
from statsmodels.iolib.summary import Summary
from statsmodels.iolib.table import SimpleTable

from .words import NO_COVARIANCE, NOT_IN_VOCABULARY

COLUMNS = ("coef", "std err", "z", "P>|z|", "Conf. Int. Low", "Conf. Int. Upp.")
T_COLUMNS = ("coef", "std err", "t", "P>|t|", "Conf. Int. Low", "Conf. Int. Upp.", "df")
_SHOWN_DROPPED = 20


def parameter_frame(names: Sequence, estimates, std_errors, statistics, pvalues, intervals,
                    df=None) -> pd.DataFrame:
    """The parameter table of one or several statistics, with statsmodels' column names.

    With any finite degrees of freedom the statistic is a t (columns ``t``, ``P>|t|`` and ``df``,
    inf for a normal row), else a z.
    """
    intervals = np.asarray(intervals, dtype=float).reshape(len(names), 2)
    values = [estimates, std_errors, statistics, pvalues, intervals[:, 0], intervals[:, 1]]
    columns = COLUMNS
    if df is not None and np.isfinite(np.asarray(df, dtype=float)).any():
        columns, values = T_COLUMNS, [*values, df]
    return pd.DataFrame({column: np.asarray(value, dtype=float) for column, value in zip(columns, values)},
                        index=[str(name) for name in names])


def reference_line(df, bounds: np.ndarray, scale: str, df_column: bool = True) -> str:
    """What the intervals and tests rest on: the reference distribution and the scale.

    Several degrees of freedom are pointed to in the table's ``df`` column, or (``df_column``
    False, for a table without one) given as their range.
    """
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
