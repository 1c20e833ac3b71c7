"""Software prefetch hints for numba kernels whose memory accesses are random but known ahead."""

from __future__ import annotations

from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

_CACHE_LINE = 64


def _emit_prefetch(builder, pointer) -> None:
    i8p = ir.IntType(8).as_pointer()
    i32 = ir.IntType(32)
    prefetch = builder.module.declare_intrinsic(
        "llvm.prefetch", fnty=ir.FunctionType(ir.VoidType(), [i8p, i32, i32, i32]))
    # read/write = 1 (the kernels write what they fetch), locality = 3 (keep), data cache = 1.
    builder.call(prefetch, [builder.bitcast(pointer, i8p), ir.Constant(i32, 1), ir.Constant(i32, 3),
                            ir.Constant(i32, 1)])


@intrinsic
def prefetch_row(typingctx, array, row):
    """Ask the CPU to start fetching every cache line of ``array[row]`` (2-D, C-contiguous)."""
    if not (isinstance(array, types.Array) and array.ndim == 2 and array.layout == "C"):
        return None

    def codegen(context, builder, signature, args):
        arr = context.make_array(signature.args[0])(context, builder, args[0])
        n_cols = builder.extract_value(arr.shape, 1)
        row_index = context.cast(builder, args[1], signature.args[1], types.intp)
        base = builder.bitcast(builder.gep(arr.data, [builder.mul(row_index, n_cols)]),
                               ir.IntType(8).as_pointer())
        itemsize = context.get_abi_sizeof(context.get_data_type(signature.args[0].dtype))
        n_bytes = builder.mul(n_cols, ir.Constant(n_cols.type, itemsize))
        with cgutils.for_range_slice(builder, ir.Constant(n_cols.type, 0), n_bytes,
                                     ir.Constant(n_cols.type, _CACHE_LINE)) as (offset, _):
            _emit_prefetch(builder, builder.gep(base, [offset]))
        return context.get_dummy_value()

    return types.none(array, row), codegen


@intrinsic
def prefetch_item(typingctx, array, index):
    """Ask the CPU to start fetching the cache line holding ``array[index]`` (1-D, C-contiguous)."""
    if not (isinstance(array, types.Array) and array.ndim == 1 and array.layout == "C"):
        return None

    def codegen(context, builder, signature, args):
        arr = context.make_array(signature.args[0])(context, builder, args[0])
        position = context.cast(builder, args[1], signature.args[1], types.intp)
        _emit_prefetch(builder, builder.gep(arr.data, [position]))
        return context.get_dummy_value()

    return types.none(array, index), codegen
