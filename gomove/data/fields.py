"""Field readers of the compact flat layout (gomove.data.flat), shared by every compiled engine.

A candidate's levels are one record of ``width`` bits in a bitstream of uint64 words
(``Records.words``, little-endian: record c holds bits c * width .. (c + 1) * width - 1),
read by ``record``:

- bits 0 .. code_bits - 1: the code of the candidate's combination of narrow-group
  levels (the groups of fewer than 256 levels, Coulom's tactical ones); the code's
  column of ``Records.narrow`` holds those levels, a byte a group (narrow group i
  in row i);
- then every wide group's level (shapes, 3x3 patterns) in bit_length(levels) bits.

A group is read through a field, int64[4] ``(kind, word, shift, mask)``: kind 0, a
narrow group, ``narrow[word, code]`` (shift 0, mask 255); kind 1, a wide group,
``(record >> shift) & mask`` (``field_level``; ``narrow_level`` and ``wide_level``
take a record already read, for kernels that read every group of a candidate).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from llvmlite import ir
from numba import njit, prange, types
from numba.extending import intrinsic

NARROW, WIDE = 0, 1  # a field's kind


class Records(NamedTuple):
    """Every candidate's levels as the kernels read them (module docstring)."""

    words: np.ndarray  # uint64[ceil(C * width / 64) + 1]: the bitstream, one spare word
    width: int  # bits a record
    mask: np.uint64  # the low ``width`` bits set
    narrow: np.ndarray  # uint8[G8, K]: narrow group i's level of code k at [i, k]
    code_mask: int  # the low code_bits set (0: no narrow group, no code)


# The readers index a Records by position (words, width, mask, narrow, code_mask), so a
# plain tuple of the same fields reads as well: numba's parallel loops cannot take a
# named tuple nested in another (``plain``).


@njit(cache=True, inline="always")
def plain(r: Records) -> tuple:
    """r as a plain tuple, for the parallel kernels (see above)."""
    return (r.words, r.width, r.mask, r.narrow, r.code_mask)


@njit(cache=True, inline="always")
def held(field: np.ndarray) -> tuple:
    """field as a tuple of its four ints, for a kernel to read before its loops: values
    held in registers, where a field array's entries would be read again after every
    store of the loop (the compiler cannot tell the arrays apart)."""
    return (field[0], field[1], field[2], field[3])


def width_mask(width: int) -> np.uint64:
    """The low ``width`` bits of a uint64 set (width 0..64)."""
    return np.uint64((1 << width) - 1)


@intrinsic
def _load_u64(typingctx, arr, byte):  # noqa: ARG001 (numba's intrinsic signature)
    """The 8 bytes of arr's buffer from byte offset ``byte`` as one uint64 (this
    machine's byte order, little-endian on every platform numba serves), by one load
    that need not be aligned."""
    sig = types.uint64(arr, byte)

    def codegen(context, builder, sig, args):  # noqa: ARG001
        ary = context.make_array(sig.args[0])(context, builder, args[0])
        base = builder.bitcast(ary.data, ir.IntType(8).as_pointer())
        ptr = builder.bitcast(builder.gep(base, [args[1]]), ir.IntType(64).as_pointer())
        return builder.load(ptr, align=1)

    return sig, codegen


@njit(cache=True, inline="always")
def record_bits(r: Records, c: int) -> np.uint64:
    """Candidate c's record in the low ``width`` bits, the next record's bits above them
    (what narrow_level and wide_level read masks them off: one operation less a read).

    One unaligned 8-byte load from the record's first byte, shifted by its first bit
    within that byte: a record of up to 57 bits (MAX_WIDTH) lies inside those 8 bytes,
    and the stream's spare word keeps the last load inside the buffer. Fewer
    operations than two aligned words joined (about 0.65 ns a candidate instead of
    0.89 in MM's scaling loop)."""
    bit = c * np.int64(r[1])
    return _load_u64(r[0], bit >> 3) >> np.uint64(bit & 7)


@njit(cache=True, inline="always")
def record(r: Records, c: int) -> np.uint64:
    """Candidate c's record: ``width`` bits from bit c * width of the bitstream."""
    return record_bits(r, c) & r[2]


@njit(cache=True, inline="always")
def narrow_level(r: Records, rec: np.uint64, field: np.ndarray) -> int:
    """A narrow group's level of the record rec (field: kind NARROW)."""
    # unsigned indices: no test for a negative one (numba's wraparound) a candidate
    return np.int64(r[3][np.uint64(field[1]), rec & np.uint64(r[4])])


@njit(cache=True, inline="always")
def wide_level(rec: np.uint64, field: np.ndarray) -> int:
    """A wide group's level of the record rec (field: kind WIDE)."""
    return np.int64(rec >> np.uint64(field[2])) & field[3]


@njit(cache=True, inline="always")
def record_level(r: Records, rec: np.uint64, field: np.ndarray) -> int:
    """The level of the group read through field in the record rec (record_bits)."""
    if field[0] == NARROW:
        return narrow_level(r, rec, field)
    return wide_level(rec, field)


@njit(cache=True, inline="always")
def field_level(r: Records, field: np.ndarray, c: int) -> int:
    """Candidate c's level of the group read through field (module docstring)."""
    return record_level(r, record_bits(r, c), field)


@njit(parallel=True, cache=True)
def field_max(r: Records, field: np.ndarray, n: int) -> int:
    """The largest level of a group over the n candidates (0 with none)."""
    top = 0
    for c in prange(n):
        top = max(top, field_level(r, field, c))
    return top


@njit(cache=True)
def pack_records(
    recs: np.ndarray, width: int, carry: np.uint64, carry_bits: int
) -> tuple[np.ndarray, np.uint64, int]:
    """Append records (uint64[n], each below 2**width) to a bitstream whose last
    carry_bits bits (< 64, in carry) are not yet written: the full words they fill,
    and the new carry and its bit count (gomove.data.store writes words, keeps the carry)."""
    total = carry_bits + recs.shape[0] * width
    out = np.zeros(total // 64, dtype=np.uint64)
    acc = np.uint64(carry)  # (a Python int would type as int64, and int64 | uint64 as float64)
    nbits = carry_bits
    k = 0
    wd = np.uint64(width)
    for i in range(recs.shape[0]):
        v = recs[i]
        acc |= v << np.uint64(nbits)
        nbits += width
        if nbits >= 64:
            out[k] = acc
            k += 1
            nbits -= 64
            # the bits of v that did not fit (none when it ended on the word's last bit)
            acc = (v >> (wd - np.uint64(nbits))) if nbits > 0 else np.uint64(0)
    return out, np.uint64(acc), nbits
