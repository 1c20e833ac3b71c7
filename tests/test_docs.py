"""The examples in the public docstrings run and print what they say."""

from __future__ import annotations

import doctest

import pytest

import glovev_ext.counting.vectorizer
import glovev_ext.covariance.estimator
import glovev_ext.pipeline


@pytest.mark.parametrize("module", [glovev_ext.counting.vectorizer, glovev_ext.covariance.estimator,
                                    glovev_ext.pipeline],
                         ids=lambda m: m.__name__)
def test_docstring_examples(module):
    failures, attempted = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert attempted > 0 and failures == 0
