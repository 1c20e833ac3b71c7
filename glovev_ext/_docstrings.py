"""Parameter documentation written once and filled into every docstring that shares it.

A docstring names a shared entry by a placeholder alone on its line, ``{random_state}``, indented as
the entry's first line should be; :func:`fill_doc` replaces it with that entry of :data:`PARAMETERS`.
Lines after a placeholder, indented as its description, add what holds only for the function at
hand. Braces anywhere else (``{"auto", "delta"}``) are left alone, so no docstring needs the escaping
``str.format`` would. tests/test_docstrings.py checks that no entry is copied by hand again.
"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Callable
from typing import TypeVar

from ._checks import DEFAULT_SEED

_MISSING = """\
    Words out of the vocabulary or without a covariance: refused by an error that names them,
    or left out and named in the result's ``dropped``."""

# Each entry as numpydoc writes it: the parameter's line, then its description indented by four spaces.
PARAMETERS: dict[str, str] = {
    "alternative": """\
alternative : {"two-sided", "larger", "smaller"}, default="two-sided"
    The alternative hypothesis: the value differs from the null value, is larger, or is
    smaller.""",
    "confidence_level": """\
confidence_level : float, default=0.95
    Of the intervals.""",
    "method": """\
method : {"auto", "delta", "monte carlo"}, default="auto"
    How the words' uncertainty is propagated (see :func:`~glovev_ext.stats.estimate`):
    ``"auto"`` keeps the delta method where it agrees with Monte Carlo and says which it used.""",
    "missing": f"""\
missing : {{"raise", "drop"}}, default="raise"
{_MISSING}""",
    "n_draws": """\
n_draws : int, default=2000
    Monte Carlo draws of the words' vectors (for ``method="monte carlo"``, and for ``"auto"`` to
    judge the delta method by).""",
    "null_value": """\
null_value : float, default=0
    The value under the null hypothesis.""",
    "progress": """\
progress : bool, default=False
    Show a progress bar of the Monte Carlo draws (the numbers do not depend on it).""",
    "random_state": f"""\
random_state : None, int or numpy Generator, default={DEFAULT_SEED}
    Seed, or generator, of the random numbers. The default,
    :data:`~glovev_ext.stats.DEFAULT_SEED`, is the ``glovev`` commands' too, so the same call
    gives the same numbers; None takes fresh ones from the operating system.""",
    "scale": """\
scale : {"bounded", "linear"}, default="bounded"
    ``"bounded"``: intervals and tests of bounded statistics on ``atanh`` of the value mapped to
    (-1, 1) (Fisher's z for a cosine), so they stay inside the range; ``"linear"``: the
    paper's symmetric intervals.""",
    "use_t": """\
use_t : bool, default=True
    True: t reference distributions with Welch-Satterthwaite degrees of freedom from the
    words' ``|K_i| - D``; False: normal (the paper's).""",
}
# The options every statistic of words hands on to estimate, in the order the signatures list them.
PARAMETERS["estimate_options"] = "\n".join(PARAMETERS[name] for name in ("n_draws", "random_state", "use_t", "scale"))

_PLACEHOLDER = re.compile(r"^(?P<indent>[ \t]*)\{(?P<name>\w+)\}[ \t]*$", re.MULTILINE)

Documented = TypeVar("Documented", bound=Callable)


def fill_doc(function: Documented) -> Documented:
    """Decorator: replace each placeholder line of ``function``'s docstring by its entry of :data:`PARAMETERS`.

    A placeholder without an entry raises KeyError when the module is imported, so a misspelt name
    never reaches the documentation.
    """

    def entry(match: re.Match) -> str:
        name = match["name"]
        if name not in PARAMETERS:
            raise KeyError(f"{function.__qualname__}: no shared documentation of {name!r}; "
                           f"known: {', '.join(sorted(PARAMETERS))}")
        return textwrap.indent(PARAMETERS[name], match["indent"])

    if function.__doc__ is not None:  # None under python -OO
        function.__doc__ = _PLACEHOLDER.sub(entry, function.__doc__)
    return function
