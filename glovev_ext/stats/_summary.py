"""The one rendering path of every result: a table (a DataFrame) and notes, as a statsmodels ``Summary``."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
from statsmodels.iolib.summary import Summary
from statsmodels.iolib.table import SimpleTable

COLUMNS = ("coef", "std err", "z", "P>|z|", "Conf. Int. Low", "Conf. Int. Upp.")
_SHOWN_DROPPED = 20


def parameter_frame(names: Sequence, estimates, std_errors, statistics, pvalues, intervals) -> pd.DataFrame:
    """The parameter table of one or several statistics, with statsmodels' column names."""
    intervals = np.asarray(intervals, dtype=float).reshape(len(names), 2)
    values = (estimates, std_errors, statistics, pvalues, intervals[:, 0], intervals[:, 1])
    return pd.DataFrame({column: np.asarray(value, dtype=float) for column, value in zip(COLUMNS, values)},
                        index=[str(name) for name in names])


def notes(first: Sequence[str], uncertainty: str, words: Sequence, dropped: Sequence) -> list[str]:
    """What a result rests on: ``first`` lines, the uncertainty it carries, the words it used and dropped."""
    lines = [*first, f"Uncertainty: {uncertainty}", f"Words used: {len(words)}; dropped: {len(dropped)}"]
    if dropped:
        lines.append("Dropped: " + ", ".join(map(str, dropped[:_SHOWN_DROPPED]))
                     + (" ..." if len(dropped) > _SHOWN_DROPPED else ""))
    return lines


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
