"""Sphinx configuration of the glovev-ext site (build: see CONTRIBUTING.md).

The build reaches no network: the intersphinx inventories are the files in ``_intersphinx/``
(see its README.md), and the tutorials run in their quick mode on the embedded corpus.
"""

from __future__ import annotations

import os
import sys
import warnings
from pathlib import Path

import glovev_ext

DOCS = Path(__file__).resolve().parent
ROOT = DOCS.parent
sys.path.insert(0, str(DOCS / "_ext"))

project = "glovev-ext"
author = "glovev-ext developers"
copyright = "glovev-ext developers"  # noqa: A001 - Sphinx's name
release = glovev_ext.__version__
version = ".".join(release.split(".")[:2])

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.intersphinx",
    "numpydoc",
    "myst_parser",
    "sphinx_gallery.gen_gallery",
    "sphinxarg.ext",
    "glovev_xref",
    "glovev_members",
    "glovev_gallery",
]

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
templates_path = ["_templates"]
exclude_patterns = ["_build", "_intersphinx", "tutorials/*.ipynb", "tutorials/*.md5",
                    "tutorials/*.py", "tutorials/*.zip", "tutorials/*.pickle", "**/README.md"]
# Every cross-reference must resolve (sphinx-build -W turns a miss into an error).
nitpicky = True

# numpydoc reads gensim's docstrings to mangle signatures, and some are not numpydoc: not ours to fix.
warnings.filterwarnings("ignore", message=r"(?s).*site-packages/gensim/", category=UserWarning)

# -- API reference ---------------------------------------------------------------------------------
autosummary_generate = True
autosummary_imported_members = False
autodoc_typehints = "none"  # the numpydoc sections give every parameter's type
autodoc_default_options = {"member-order": "groupwise"}
numpydoc_attributes_as_param_list = True
numpydoc_show_class_members = False  # the autosummary class template lists the members
numpydoc_class_members_toctree = False
# The types in Parameters and Returns link to their pages: the names below, and no other word.
numpydoc_xref_param_type = True
numpydoc_xref_ignore = "all"


def _public_classes() -> dict[str, str]:
    """Each public class by its name, to the name its page is under (glovev_ext's, else its stage's)."""
    pages: dict[str, str] = {}
    for module_name in ("glovev_ext", "glovev_ext.counting", "glovev_ext.glove", "glovev_ext.covariance",
                        "glovev_ext.stats", "glovev_ext.adapters"):
        module = sys.modules.get(module_name) or __import__(module_name, fromlist=["__all__"])
        for name in module.__all__:
            if isinstance(getattr(module, name), type):
                pages.setdefault(name, f"{module_name}.{name}")
    return pages


numpydoc_xref_aliases = {
    **_public_classes(),
    "ndarray": "numpy.ndarray",
    "DataFrame": "pandas.DataFrame",
    "pandas.DataFrame": "pandas.DataFrame",
    "Series": "pandas.Series",
    "csr_matrix": "scipy.sparse.csr_matrix",
    "scipy.sparse.csr_matrix": "scipy.sparse.csr_matrix",
    "ContrastResults": "statsmodels.stats.contrast.ContrastResults",
    "Summary": "statsmodels.iolib.summary.Summary",
    "Client": "distributed.Client",
    "dask.distributed.Client": "distributed.Client",
    "Path": "pathlib.Path",
    "KeyedVectors": "gensim.models.keyedvectors.KeyedVectors",
}
numpydoc_validation_checks = set()
add_module_names = False

# -- Markdown --------------------------------------------------------------------------------------
myst_heading_anchors = 3
myst_ref_domains = ["std", "py"]

# -- Intersphinx: local inventories, no download ---------------------------------------------------
_INVENTORIES = DOCS / "_intersphinx"
intersphinx_mapping = {
    "python": ("https://docs.python.org/3.11/", str(_INVENTORIES / "python-3.11.2.inv")),
    "numpy": ("https://numpy.org/doc/2.4/", str(_INVENTORIES / "numpy-2.4.inv")),
    "gensim": ("https://radimrehurek.com/gensim/", str(_INVENTORIES / "gensim-4.4.0.inv")),
    "scipy": ("https://docs.scipy.org/doc/scipy-1.10.1/", str(_INVENTORIES / "scipy-1.10.1.inv")),
    "sklearn": ("https://scikit-learn.org/1.2/", str(_INVENTORIES / "scikit-learn-1.2.1.inv")),
    "statsmodels": ("https://www.statsmodels.org/v0.13.5/", str(_INVENTORIES / "statsmodels-0.13.5.inv")),
    "pandas": ("https://pandas.pydata.org/pandas-docs/version/1.5.3/", str(_INVENTORIES / "pandas-1.5.3.inv")),
    "dask": ("https://docs.dask.org/en/2022.12.1/", str(_INVENTORIES / "dask-2022.12.1.inv")),
    "distributed": ("https://distributed.dask.org/en/2022.12.1/", str(_INVENTORIES / "distributed-2022.12.1.inv")),
}
intersphinx_timeout = 1

# -- Gallery: the tutorials, in their quick mode ---------------------------------------------------
# GLOVEV_TUTORIAL_QUICK=0 in the environment runs them on the full data, as `python tutorials/NN.py` does.
os.environ.setdefault("GLOVEV_TUTORIAL_QUICK", "1")
os.environ.setdefault("GLOVEV_TUTORIAL_OUTPUT", str(DOCS / "_build" / "tutorial-output"))
os.environ.setdefault("MPLBACKEND", "Agg")
# The tutorials run two at a time, each in a process of its own; their shared model is fitted here first, so that
# they all load it and none fits it while another is saving it.
sys.path.insert(0, str(ROOT / "tutorials"))
import _common  # noqa: E402 - reads the environment set above when imported

_common.fitted_model()
sphinx_gallery_conf = {
    "parallel": 2,
    "examples_dirs": str(ROOT / "tutorials"),
    "gallery_dirs": "tutorials",
    "filename_pattern": r"[/\\]\d\d_",  # run every tutorial
    "ignore_pattern": r"_common\.py",  # their shared module, not an example
    "within_subsection_order": "FileNameSortKey",
    "download_all_examples": False,
    "remove_config_comments": True,
    "show_memory": False,
    "show_signature": False,
    "capture_repr": (),
    "image_scrapers": ("matplotlib",),
    "matplotlib_animations": False,
    "plot_gallery": "True",
    "abort_on_example_error": True,
}

# -- HTML ------------------------------------------------------------------------------------------
html_theme = "pydata_sphinx_theme"
html_title = f"glovev-ext {release}"
html_theme_options = {
    "navbar_align": "left",
    "show_toc_level": 2,
    "navigation_with_keys": False,
    "secondary_sidebar_items": ["page-toc"],
}
html_context = {"default_mode": "auto"}  # the theme's script logs an error when it is not set
html_favicon = "_static/favicon.svg"  # without one, the browser asks the server for a missing /favicon.ico
html_static_path: list[str] = []
html_show_sourcelink = False
html_copy_source = False

