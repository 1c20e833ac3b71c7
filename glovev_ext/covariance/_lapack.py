"""LAPACK's Cholesky factorisation and condition estimate, called from compiled code without the GIL.

scipy's Python wrappers of ``dpotrf`` hold the GIL while LAPACK runs, so the threads of a covariance
pass queued on every word's Cholesky factorisation (two threads factorised no faster than one,
measured in ``bench/covariance.py``'s set-up). Here the same LAPACK routines, the ones scipy ships
(``scipy.linalg.cython_lapack``), are linked into a numba kernel that releases the GIL; the symbols
are registered by name, so the compiled kernel stays in numba's on-disk cache.
"""

from __future__ import annotations

import llvmlite.binding as llvm
import numpy as np
from numba import njit, types
from numba.extending import get_cython_function_address

for _routine in ("dpotrf", "dpocon"):
    llvm.add_symbol(f"glovev_ext_{_routine}", get_cython_function_address("scipy.linalg.cython_lapack", _routine))

_POINTER = types.voidptr
# Fortran calling convention: every argument by address.
_dpotrf = types.ExternalFunction("glovev_ext_dpotrf", types.void(*[_POINTER] * 5))
_dpocon = types.ExternalFunction("glovev_ext_dpocon", types.void(*[_POINTER] * 9))
_LOWER = 76  # ord("L")


def lapack_buffers(dim: int) -> tuple[np.ndarray, np.ndarray]:
    """The integer and float work arrays :func:`cholesky_condition` needs for a D x D matrix."""
    return np.empty(dim + 3, dtype=np.int32), np.empty(3 * dim + 2, dtype=np.float64)


@njit(nogil=True, cache=True)
def factor_condition(hessian, lower, out, ints, doubles):  # pragma: no cover - compiled
    """LAPACK's estimate of the 1-norm condition number of ``hessian`` from its lower Cholesky factor ``lower``
    (computed elsewhere, e.g. on a device), as :func:`cholesky_condition` gives it after factorising.

    ``out`` (C-ordered D x D) receives the factor in the layout :func:`cholesky_condition` leaves
    (``out.T`` is ``lower``). Returns ``1 / rcond`` from ``dpocon`` (inf where the estimate failed).
    """
    dim = hessian.shape[0]
    norm = 0.0
    for j in range(dim):
        total = 0.0
        for i in range(dim):
            total += abs(hessian[j, i])
            out[j, i] = lower[i, j]
        norm = max(norm, total)
    ints[0], ints[1], ints[2] = _LOWER, dim, 0
    doubles[0], doubles[1] = norm, 0.0
    _dpocon(ints[0:].ctypes, ints[1:].ctypes, out.ctypes, ints[1:].ctypes, doubles[0:].ctypes, doubles[1:].ctypes,
            doubles[2:].ctypes, ints[3:].ctypes, ints[2:].ctypes)
    if ints[2] != 0 or not doubles[1] > 0.0:
        return np.inf
    return 1.0 / doubles[1]


@njit(nogil=True, cache=True)
def cholesky_condition(hessian, out, ints, doubles):  # pragma: no cover - compiled
    """Cholesky factor of a symmetric positive definite ``hessian`` and LAPACK's estimate of its 1-norm condition.

    ``out`` (C-ordered D x D) receives a copy of ``hessian`` factorised in place: ``out.T`` holds the
    lower factor ``L`` (``H = L L^T``) in its lower triangle; its strict upper triangle is left
    as ``H``'s. ``ints`` and ``doubles`` are :func:`lapack_buffers`. Returns ``(info, condition)``:
    LAPACK's ``dpotrf`` status (0: factorised; k > 0: the leading minor of order k is not
    positive) and ``1 / rcond`` from ``dpocon`` (inf when the factorisation or the estimate failed).
    """
    dim = hessian.shape[0]
    norm = 0.0
    for j in range(dim):  # H is symmetric: the 1-norm is the largest absolute row sum as well
        total = 0.0
        for i in range(dim):
            value = hessian[j, i]
            out[j, i] = value
            total += abs(value)
        norm = max(norm, total)
    # A C-ordered symmetric matrix is its own Fortran-ordered transpose: LAPACK's lower triangle is
    # the upper triangle of ``out`` as numpy sees it.
    ints[0], ints[1], ints[2] = _LOWER, dim, 0
    doubles[0], doubles[1] = norm, 0.0
    _dpotrf(ints[0:].ctypes, ints[1:].ctypes, out.ctypes, ints[1:].ctypes, ints[2:].ctypes)
    info = ints[2]
    if info != 0:
        return info, np.inf
    _dpocon(ints[0:].ctypes, ints[1:].ctypes, out.ctypes, ints[1:].ctypes, doubles[0:].ctypes, doubles[1:].ctypes,
            doubles[2:].ctypes, ints[3:].ctypes, ints[2:].ctypes)
    if ints[2] != 0 or not doubles[1] > 0.0:
        return 0, np.inf
    return 0, 1.0 / doubles[1]
