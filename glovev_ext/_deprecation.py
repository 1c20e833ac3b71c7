"""Names of glovev-ext 0.2 kept working for one release, each with a DeprecationWarning that says the new one.

- :func:`keywords_moved_to_objects`: keyword arguments that are now parameters of an object the
  function takes (``fit_corpus(corpus, epochs=5)`` -> ``fit_corpus(corpus, estimator=GloVeVEstimator(epochs=5))``);
- :func:`moved_names`: names a package exported in 0.2 (``from glovev_ext.covariance import
  pack_lower``), now imported from their modules only (``glovev_ext.covariance.factor``);
- :func:`warn_renamed`: any other old spelling, in the function that still takes it.
"""

from __future__ import annotations

import functools
import importlib
import inspect
import os
import sys
import warnings
from collections.abc import Callable, Collection, Mapping

REMOVED_IN = "0.4"


def stacklevel_outside_package() -> int:
    """The ``stacklevel`` of ``warnings.warn``, called by the caller of this function, that names the first frame
    outside glovev_ext: the user's line, however many of the package's wrappers lie between."""
    package = os.path.dirname(os.path.abspath(__file__))
    frame, level = sys._getframe(1), 1  # level 1: the function that calls warnings.warn
    while frame.f_back is not None:
        name = frame.f_code.co_filename
        if not ("importlib" in name and "_bootstrap" in name):  # frames warnings.warn does not count either
            if not os.path.abspath(name).startswith(package):
                break
            level += 1
        frame = frame.f_back
    return level


def warn_renamed(old: str, new: str) -> None:
    """Warn that ``old`` is now ``new`` and goes in the next release."""
    warnings.warn(f"{old} is deprecated and will be removed in glovev-ext {REMOVED_IN}; use {new}",
                  DeprecationWarning, stacklevel=stacklevel_outside_package())


def keywords_moved_to_objects(**moved: tuple[type, Collection[str]]) -> Callable:
    """Decorator: accept the old keywords of parameters that now belong to objects the function takes.

    ``moved`` maps the name of each object parameter to the object's class and the old keywords that
    are now its parameters (one keyword may go to several objects). Old keywords build the objects,
    ``cls(**keywords)``, with a warning that spells the call with them; beside an object they would
    build, they are a TypeError, since which of the two is meant cannot be told.
    """

    def decorate(function: Callable) -> Callable:
        signature = inspect.signature(function)
        old_names = {name for _, names in moved.values() for name in names}

        @functools.wraps(function)
        def wrapper(*args, **kwargs):
            old = {name: kwargs.pop(name) for name in list(kwargs) if name in old_names}
            if not old:
                return function(*args, **kwargs)
            bound = signature.bind_partial(*args, **kwargs)
            built = {}
            for parameter, (cls, names) in moved.items():
                keywords = {name: value for name, value in old.items() if name in names}
                if not keywords:
                    continue
                if bound.arguments.get(parameter) is not None:
                    raise TypeError(f"{function.__qualname__}() got {parameter}= together with "
                                    f"{', '.join(f'{name}=' for name in keywords)} of the old spelling; set them "
                                    f"on the {cls.__name__} instead")
                built[parameter] = cls, keywords
            calls = ", ".join(f"{parameter}={cls.__name__}({', '.join(f'{k}={v!r}' for k, v in keywords.items())})"
                              for parameter, (cls, keywords) in built.items())
            warn_renamed(f"{function.__qualname__}({', '.join(f'{name}=' for name in old)})",
                         f"{function.__qualname__}(..., {calls})")
            for parameter, (cls, keywords) in built.items():
                bound.arguments[parameter] = cls(**keywords)
            return function(*bound.args, **bound.kwargs)

        return wrapper

    return decorate


def moved_names(package: str, moved: Mapping[str, Collection[str]],
                renamed: Mapping[str, str] | None = None) -> Callable[[str], object]:
    """The module ``__getattr__`` of a package that no longer exports the names ``moved`` lists by module.

    ``moved`` maps each submodule (relative to ``package``; ``""``: the package itself) to the names
    the package exported before that it holds; each still imports from the package, with a warning
    naming the import to write instead. ``renamed`` maps an old name to the new name it now has
    there. Any other name is an AttributeError, as without the hook.
    """
    modules = {name: f"{package}.{module}" if module else package for module, names in moved.items() for name in names}
    renamed = dict(renamed or {})

    def __getattr__(name: str):
        if name not in modules:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        new = renamed.get(name, name)
        warn_renamed(f"{package}.{name}", f"from {modules[name]} import {new}")
        return getattr(importlib.import_module(modules[name]), new)

    return __getattr__
