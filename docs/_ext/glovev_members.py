"""Which inherited members a class page shows, and how.

- Members a class inherits from scikit-learn (``get_params``, ``set_output``, the metadata-routing
  requests) are left to scikit-learn's documentation, which the page's "Bases" line links to.
- Members :class:`~glovev_ext.KeyedVectorsWithVariance` inherits from gensim are listed and each
  gets an entry with its first paragraph and the gensim name it comes from: gensim publishes no
  inventory an offline build can link to, and its docstrings are not all valid reStructuredText.
"""

from __future__ import annotations

import inspect

from sphinx.application import Sphinx

_LEFT_TO_THEIR_OWN_DOCUMENTATION = ("sklearn.", "scipy.")
_SUMMARISED = ("gensim.",)


def _defining_class(owner, name: str):
    for cls in inspect.getmro(owner):
        if name in vars(cls):
            return cls
    return None


def _owner(app: Sphinx, what: str, name: str):
    """The class a member named ``name`` (a full dotted name) belongs to, or None."""
    if what not in ("method", "attribute", "property", "class"):
        return None
    owner_name, _, _ = name.rpartition(".")
    module_name, _, class_name = owner_name.rpartition(".")
    try:
        module = __import__(module_name, fromlist=[class_name])
        owner = getattr(module, class_name)
    except (ImportError, AttributeError, ValueError):
        return None
    return owner if inspect.isclass(owner) else None


def skip_member(app: Sphinx, what: str, name: str, obj, skip: bool, options):
    if skip:
        return None
    module = getattr(obj, "__module__", None) or ""
    if isinstance(obj, (property, classmethod, staticmethod)):
        module = getattr(getattr(obj, "fget", None) or getattr(obj, "__func__", None), "__module__", "") or ""
    if module.startswith(_LEFT_TO_THEIR_OWN_DOCUMENTATION):
        return True
    return None


def drop_type_docstring(app: Sphinx, what: str, name: str, obj, options, lines: list[str]) -> None:
    """A constant (a tuple, a string, a number) is described on its page, not by its type's docstring."""
    if what == "data" and lines and not isinstance(obj, type) and lines[0].strip() == (
            (type(obj).__doc__ or "").strip().splitlines() or [""])[0].strip():
        lines[:] = []


def summarise_inherited(app: Sphinx, what: str, name: str, obj, options, lines: list[str]) -> None:
    owner = _owner(app, what, name)
    if owner is None:
        return
    member = name.rpartition(".")[2]
    source = _defining_class(owner, member)
    if source is None or not source.__module__.startswith(_SUMMARISED):
        return
    first_paragraph = []
    for line in lines:
        if not line.strip():
            if first_paragraph:
                break
            continue
        first_paragraph.append(line.strip())
    lines[:] = [*first_paragraph, "",
                f"Inherited from gensim: ``{source.__module__}.{source.__qualname__}.{member}`` in gensim's "
                "documentation."]


def setup(app: Sphinx):
    app.connect("autodoc-skip-member", skip_member)
    app.connect("autodoc-process-docstring", summarise_inherited, priority=100)  # before numpydoc reads it
    app.connect("autodoc-process-docstring", drop_type_docstring, priority=100)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
