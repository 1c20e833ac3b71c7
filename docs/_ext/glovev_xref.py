"""Resolve a Python cross-reference the way Python resolves the name, to the page that documents the object.

Every public object has one API page, under the name a user imports it by (``glovev_ext.fit_corpus``,
``glovev_ext.stats.similarity``); docstrings name objects as their own module sees them
(``:func:`estimate```, ``:class:`~glovev_ext.stats.Statistic```). When Sphinx finds no page under
the name written, this looks the name up in the namespace of the module (and class) whose docstring
holds it, and links to the page of the object found, if the object has one; an attribute that
instances carry (listed in the class's numpydoc "Attributes" section) links to its class's page. A
name whose object has no page stays unresolved, and the nitpicky build reports it.
"""

from __future__ import annotations

import importlib
import inspect
import warnings

from numpydoc.docscrape import ClassDoc
from sphinx.application import Sphinx


def _import(path: str):
    """The object a dotted path names (a module, then attributes), or None."""
    with warnings.catch_warnings():  # a name kept for one release answers with a DeprecationWarning
        warnings.simplefilter("ignore")
        return _import_quietly(path)


def _import_quietly(path: str):
    parts = path.split(".")
    for split in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:split]))
        except ImportError:
            continue
        try:
            for attribute in parts[split:]:
                obj = getattr(obj, attribute)
        except AttributeError:
            return None
        return obj
    return None


def _documented(env) -> dict[int, str]:
    """The documented name of each documented object, by the object's identity."""
    cache = getattr(env, "_glovev_documented", None)
    if cache is None or len(cache[0]) != len(env.domains["py"].objects):
        objects = env.domains["py"].objects
        names: dict[int, str] = {}
        for name, entry in objects.items():
            if entry.objtype in ("module", "data", "attribute"):
                continue  # shared values (strings, numbers) would alias each other
            obj = _import(name)
            if obj is not None:
                names.setdefault(id(obj), name)
        cache = (dict(objects), names)
        env._glovev_documented = cache
    return cache[1]


def _scopes(node) -> list[str]:
    module, cls = node.get("py:module"), node.get("py:class")
    scopes = []
    if module and cls:
        scopes.append(f"{module}.{cls}")
    if module:
        scopes.append(module)
    scopes.append("")
    return scopes


def _resolve(app: Sphinx, env, node, contnode):
    if node.get("refdomain") != "py":
        return None
    target = node["reftarget"].lstrip(".~")
    objects = env.domains["py"].objects
    names = _documented(env)
    for scope in _scopes(node):
        parts = (f"{scope}.{target}" if scope else target).split(".")
        # the longest prefix that is a documented object, then the attributes after it
        for split in range(len(parts), 0, -1):
            obj = _import(".".join(parts[:split]))
            if obj is None:
                continue
            documented = names.get(id(obj))
            if documented is None:
                continue
            canonical = ".".join([documented, *parts[split:]])
            if canonical in objects:
                return env.domains["py"].resolve_xref(env, node["refdoc"], app.builder, node["reftype"], canonical,
                                                      node, contnode)
            break
    return _resolve_to_attributes_section(app, env, node, contnode, target)


def _resolve_to_attributes_section(app: Sphinx, env, node, contnode, target: str):
    """An attribute set on instances has no entry of its own: link to the class whose Attributes list it."""
    if node["reftype"] not in ("attr", "obj"):
        return None
    names = _documented(env)
    owner_path, _, attribute = target.rpartition(".")
    for scope in _scopes(node):
        path = ".".join(part for part in (scope, owner_path) if part)
        owner = _import(path) if path else None
        if not inspect.isclass(owner) or id(owner) not in names:
            continue
        listed = [name for parameter in ClassDoc(owner, config={"show_class_members": False})["Attributes"]
                  for name in parameter.name.replace(" ", "").split(",")]
        if attribute in listed:
            return env.domains["py"].resolve_xref(env, node["refdoc"], app.builder, "class", names[id(owner)], node,
                                                  contnode)
    return None


def setup(app: Sphinx):
    app.connect("missing-reference", _resolve)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
