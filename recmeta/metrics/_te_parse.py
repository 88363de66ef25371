"""The compiled reader of TREC files: whitespace-separated fields, parsed from the file's bytes.

:func:`parse_trec` reads a qrels or run file (a ``uint8`` array, usually a memory map) in one
pass, as trec_eval's ``get_qrels.c`` and ``get_trec_results.c`` split it: fields are separated by
ASCII whitespace (C's ``isspace``), blank lines and lines whose first field starts with ``#`` are
skipped. Id fields are interned to integer codes: one open-addressing table for every id
column, slots by splitmix64's finalizer (Steele et al. 2014); a key of up to 8 bytes is compared
as one integer, a longer one by its FNV-1a hash, then by its bytes, kept in a buffer of their
own. Numeric fields are checked against Python's ``float`` grammar less NaN and ``_``
separators, and converted here when one rounding gives the exact result (Clinger 1990: at most
2**53 as an integer mantissa, a power of ten at most 1e22), else left to Python (``float``) by
their position. The messages are composed by :mod:`._trec_files` from the codes returned here.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ._te_codes import (
    EMPTY,
    FIELD_COUNT,
    ID,
    NOT_A_NUMBER,
    NUMBER,
    S_COLUMN,
    S_END,
    S_ERROR,
    S_GOT,
    S_LINE,
    S_ROWS,
    S_SLOW,
    S_START,
)
from ._te_parts import _JIT

_FNV_OFFSET = np.uint64(14695981039346656037)
_FNV_PRIME = np.uint64(1099511628211)
_MIX = np.uint64(0x9E3779B97F4A7C15)
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)
_POW10 = np.array([10.0**k for k in range(23)])
_EXACT = 1 << 53


#: byte classes: 0 in a field, 1 a separator (C's isspace), 2 the end of a line
_CLASS = np.zeros(256, dtype=np.uint8)
_CLASS[[9, 11, 12, 13, 32]] = 1
_CLASS[10] = 2


@njit(**_JIT)
def _lower(c):
    return c + 32 if 65 <= c <= 90 else c


@njit(**_JIT)
def _is_word(data, a, b, word):
    if b - a != len(word):
        return False
    for i in range(b - a):
        if _lower(data[a + i]) != word[i]:
            return False
    return True


_INF = np.frombuffer(b"inf", np.uint8).copy()
_INFINITY = np.frombuffer(b"infinity", np.uint8).copy()


@njit(**_JIT)
def _number(data, a, b):
    """(kind, value) of ``data[a:b]``: kind 0 converted, 1 valid but left to Python, 2 not a
    number (``[+-]? (d+ [. d*] | . d+) ([eE] [+-]? d+)? | [+-]? inf(inity)?``)."""
    i = a
    negative = False
    if data[i] == 43 or data[i] == 45:  # + -
        negative = data[i] == 45
        i += 1
    if i < b and _lower(data[i]) == 105:  # i
        if _is_word(data, i, b, _INF) or _is_word(data, i, b, _INFINITY):
            return 0, -np.inf if negative else np.inf
        return 2, 0.0
    mantissa = 0
    digits = 0  # significant digits in mantissa
    seen = 0  # digits of any kind
    scale = 0  # power of ten the mantissa is multiplied by
    while i < b and 48 <= data[i] <= 57:
        if digits or data[i] != 48:
            if digits < 18:
                mantissa = mantissa * 10 + (data[i] - 48)
            else:
                scale += 1
            digits += 1
        seen += 1
        i += 1
    if i < b and data[i] == 46:  # .
        i += 1
        while i < b and 48 <= data[i] <= 57:
            if digits or data[i] != 48:
                if digits < 18:
                    mantissa = mantissa * 10 + (data[i] - 48)
                    scale -= 1
                digits += 1
            else:
                scale -= 1
            seen += 1
            i += 1
    if not seen:
        return 2, 0.0
    if i < b and (data[i] == 101 or data[i] == 69):  # e E
        i += 1
        sign = 1
        if i < b and (data[i] == 43 or data[i] == 45):
            sign = -1 if data[i] == 45 else 1
            i += 1
        if i == b:
            return 2, 0.0
        power = 0
        while i < b and 48 <= data[i] <= 57:
            if power < 100000:
                power = power * 10 + (data[i] - 48)
            i += 1
        scale += sign * power
    if i != b:
        return 2, 0.0
    if digits > 18 or mantissa > _EXACT or scale > 22 or scale < -22:
        return (0, -0.0 if negative else 0.0) if mantissa == 0 else (1, 0.0)
    value = float(mantissa)
    value = value * _POW10[scale] if scale >= 0 else value / _POW10[-scale]
    return 0, -value if negative else value


@njit(**_JIT)
def _hash(data, a, b, column):
    """A key of up to 8 bytes is its own hash (bytes, length and column, one to one); a
    longer one is hashed with FNV-1a (the bytes are then compared)."""
    n = b - a
    if n <= 8:
        h = np.uint64(0)
        for i in range(n):
            h |= np.uint64(data[a + i]) << np.uint64(8 * i)
        return h, np.uint64(n | column << 48)
    h = _FNV_OFFSET
    for i in range(a, b):
        h = (h ^ np.uint64(data[i])) * _FNV_PRIME
    return h, np.uint64(n | column << 48)


@njit(**_JIT)
def _slot(word, tag, mask):
    """The table slot of a key: splitmix64's finalizer (Steele et al. 2014) of its hash."""
    z = word ^ (tag * _MIX)
    z = (z ^ (z >> np.uint64(30))) * _MIX1
    z = (z ^ (z >> np.uint64(27))) * _MIX2
    return np.int64((z ^ (z >> np.uint64(31))) & np.uint64(mask))


@njit(**_JIT)
def _same(data, a, b, other, c, d):
    """``data[a:b] == other[c:d]``."""
    if b - a != d - c:
        return False
    for i in range(b - a):
        if data[a + i] != other[c + i]:
            return False
    return True


@njit(**_JIT)
def _grown(array, size):
    """``array`` in a new buffer of ``size`` rows (its rows first)."""
    out = np.empty((size,) + array.shape[1:], dtype=array.dtype)
    out[: array.shape[0]] = array
    return out


@njit(**_JIT)
def _scan(data, kinds, more, slot, state, codes, values, status, last, bad, slow, keys, prev):
    """The lines from ``state`` (byte, row, line, keys, slow numbers, bytes of the keys) on,
    until the end (0), a field-count error (1), or a line that needs more room in a buffer
    (2: ``state`` is left at that line's start, with the key bytes it needs). The buffers are
    never reallocated here: a loop that may reassign its arrays ran about twice slower.
    ``keys`` holds the table of ids and its buffers, in :func:`parse_trec`'s order."""
    table, key_start, key_end, key_column, key_code = keys[0], keys[1], keys[2], keys[3], keys[4]
    key_hash, key_tag, key_off, kbuf, per_column = keys[5], keys[6], keys[7], keys[8], keys[9]
    ncols = kinds.shape[0]
    starts = np.empty(ncols, dtype=np.int64)
    ends = np.empty(ncols, dtype=np.int64)
    n = data.shape[0]
    pos, row, line, n_keys, n_slow = state[0], state[1], state[2], state[3], state[4]
    mask = table.shape[0] - 1
    while pos < n:
        line += 1
        begin = pos
        got = 0
        while True:
            while pos < n and _CLASS[data[pos]] == 1:
                pos += 1
            if pos >= n or data[pos] == 10:
                break
            a = pos
            while pos < n and _CLASS[data[pos]] == 0:
                pos += 1
            if got < ncols:
                starts[got] = a
                ends[got] = pos
            got += 1
        stop = pos
        pos += 1  # past the newline
        if got == 0 or data[starts[0]] == 35:  # blank line, or a comment (#)
            continue
        if got != ncols and not (more and got > ncols):
            status[S_ERROR] = FIELD_COUNT
            status[S_LINE] = line
            status[S_GOT] = got
            status[S_START] = begin
            status[S_END] = stop
            return 1
        slow_at_line = n_slow
        for c in range(ncols):
            kind = kinds[c]
            a = starts[c]
            b = ends[c]
            if kind == NUMBER:
                k = slot[c]
                how, value = _number(data, a, b)
                values[k, row] = value
                if how == 1:
                    if n_slow == slow.shape[0]:
                        state[0], state[1], state[2] = begin, row, line - 1
                        state[3], state[4] = n_keys, slow_at_line
                        return 2
                    slow[n_slow, 0] = k
                    slow[n_slow, 1] = row
                    slow[n_slow, 2] = a
                    slow[n_slow, 3] = b
                    n_slow += 1
                elif how == 2 and bad[k, 0] < 0:
                    bad[k, 0] = line
                    bad[k, 1] = a
                    bad[k, 2] = b
                    bad[k, 3] = c
            elif kind == ID:
                k = slot[c]
                if prev[k, 2] >= 0 and _same(data, a, b, data, prev[k, 0], prev[k, 1]):
                    codes[k, row] = prev[k, 2]
                    continue
                word, tag = _hash(data, a, b, k)
                h = _slot(word, tag, mask)
                j = table[h]
                while j >= 0:  # the hash, then the bytes (kept apart: they stay in cache)
                    if (
                        key_hash[j] == word
                        and key_tag[j] == tag
                        and (b - a <= 8 or _same(data, a, b, kbuf, key_off[j], key_off[j + 1]))
                    ):
                        break
                    h = (h + 1) & mask
                    j = table[h]
                if j < 0:
                    j = n_keys
                    top = key_off[j] + b - a
                    full = 2 * (j + 1) >= table.shape[0] or j + 2 >= key_start.shape[0]
                    if full or top > kbuf.shape[0]:
                        state[0], state[1], state[2] = begin, row, line - 1
                        state[3], state[4], state[5] = n_keys, slow_at_line, top
                        return 2
                    n_keys += 1
                    kbuf[key_off[j] : top] = data[a:b]
                    key_off[j + 1] = top
                    key_start[j] = a
                    key_end[j] = b
                    key_column[j] = k
                    key_hash[j] = word
                    key_tag[j] = tag
                    key_code[j] = per_column[k]
                    per_column[k] += 1
                    table[h] = j
                code = key_code[j]
                codes[k, row] = code
                prev[k, 0] = a
                prev[k, 1] = b
                prev[k, 2] = code
        for c in range(ncols):
            last[c, 0] = starts[c]
            last[c, 1] = ends[c]
        row += 1
    state[0], state[1], state[2], state[3], state[4] = pos, row, line, n_keys, n_slow
    return 0


@njit(**_JIT)
def _rehash(key_hash, key_tag, n_keys, size):
    table = np.full(size, -1, dtype=np.int64)
    for i in range(n_keys):
        g = _slot(key_hash[i], key_tag[i], size - 1)
        while table[g] >= 0:
            g = (g + 1) & (size - 1)
        table[g] = i
    return table


@njit(**_JIT)
def parse_trec(data, kinds, more):
    """Parse ``data`` into columns by ``kinds`` (one per field: ``SKIP``, ``ID``, ``NUMBER`` of
    :mod:`._te_codes`); ``more`` allows fields after the last (a run's).

    Returns (status, codes, values, key_start, key_end, key_column, last, slow):
    ``status`` (slots ``S_*``: error code, line number, fields found, the line's or field's
    byte range, the field's column, rows read, numbers left to Python); ``codes[k, i]`` the
    code of row i's k-th id field, ``values[k, i]`` its k-th number; key j is
    ``data[key_start[j]:key_end[j]]`` of id column ``key_column[j]``, with code = its rank among
    that column's keys; ``last[c]`` the byte range of field c on the last row; ``slow`` rows
    (number slot, row, start, end) of the numbers Python converts. On a field-count error the
    parse stops there; on a bad number it goes on (a later field-count error comes first) and
    reports the bad number of the lowest numeric column, first line."""
    ncols = kinds.shape[0]
    n_id = 0
    n_num = 0
    slot = np.full(ncols, -1, dtype=np.int64)
    for c in range(ncols):
        if kinds[c] == ID:
            slot[c] = n_id
            n_id += 1
        elif kinds[c] == NUMBER:
            slot[c] = n_num
            n_num += 1
    cap = data.shape[0] // (2 * ncols) + 1  # a row takes at least 2 bytes a field
    codes = np.empty((n_id, cap), dtype=np.int32)
    values = np.empty((n_num, cap), dtype=np.float64)
    status = np.zeros(8, dtype=np.int64)
    last = np.zeros((ncols, 2), dtype=np.int64)
    bad = np.full((max(n_num, 1), 4), -1, dtype=np.int64)  # line, start, end, column
    slow = np.empty((64, 4), dtype=np.int64)
    size = 1024
    table = np.full(size, -1, dtype=np.int64)
    key_start = np.empty(size // 2, dtype=np.int64)
    key_end = np.empty(size // 2, dtype=np.int64)
    key_column = np.empty(size // 2, dtype=np.int64)
    key_code = np.empty(size // 2, dtype=np.int64)  # rank among its column's keys
    key_hash = np.empty(size // 2, dtype=np.uint64)  # a short key's bytes, a long one's hash
    key_tag = np.empty(size // 2, dtype=np.uint64)  # length and column
    key_off = np.zeros(size // 2 + 1, dtype=np.int64)  # key j: kbuf[key_off[j]:key_off[j + 1]]
    kbuf = np.empty(1 << 14, dtype=np.uint8)
    per_column = np.zeros(max(n_id, 1), dtype=np.int64)
    prev = np.full((max(n_id, 1), 3), -1, dtype=np.int64)  # previous row's start, end, code
    state = np.zeros(6, dtype=np.int64)  # byte, row, line, keys, slow numbers, key bytes
    while True:
        ids = (table, key_start, key_end, key_column, key_code, key_hash, key_tag, key_off)
        keys = ids + (kbuf, per_column)
        how = _scan(
            data,
            kinds,
            more,
            slot,
            state,
            codes,
            values,
            status,
            last,
            bad,
            slow,
            keys,
            prev,
        )
        if how != 2:
            break
        n_keys = state[3]
        if state[4] == slow.shape[0]:
            slow = _grown(slow, 2 * slow.shape[0])
        if 2 * (n_keys + 1) >= table.shape[0]:
            size *= 2
            table = _rehash(key_hash, key_tag, n_keys, size)
        if n_keys + 2 >= key_start.shape[0]:
            room = 2 * key_start.shape[0]
            key_start = _grown(key_start, room)
            key_end = _grown(key_end, room)
            key_column = _grown(key_column, room)
            key_code = _grown(key_code, room)
            key_hash = _grown(key_hash, room)
            key_tag = _grown(key_tag, room)
            key_off = _grown(key_off, room + 1)
        if state[5] > kbuf.shape[0]:
            kbuf = _grown(kbuf, 2 * state[5])
    n_keys = state[3]
    n_slow = state[4]
    row = state[1]
    if how == 1:
        return status, codes, values, key_start, key_end, key_column, last, slow
    status[S_ROWS] = row
    status[S_SLOW] = n_slow
    if row == 0:
        status[S_ERROR] = EMPTY
    for k in range(n_num):
        if bad[k, 0] >= 0:
            status[S_ERROR] = NOT_A_NUMBER
            status[S_LINE] = bad[k, 0]
            status[S_START] = bad[k, 1]
            status[S_END] = bad[k, 2]
            status[S_COLUMN] = bad[k, 3]
            break
    return (
        status,
        codes,
        values,
        key_start[:n_keys].copy(),
        key_end[:n_keys].copy(),
        key_column[:n_keys].copy(),
        last,
        slow[:n_slow].copy(),
    )
