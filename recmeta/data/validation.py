"""Validation of a ratings frame: missing values, non-numeric ratings, duplicate pairs, bad
timestamps, each refused with the file, line, column and value, and the fix."""

from __future__ import annotations

from collections.abc import Callable, Mapping

import numpy as np
import pandas as pd


class DataError(ValueError):
    """Raised when ratings data are malformed; the message names the problem and the fix."""


def is_implicit(df: pd.DataFrame) -> bool:
    """True for an interaction frame (no ``rating`` column): every pair in it is relevant."""
    return "rating" not in df.columns


# ----------------------------------------------------------------- validation
def plain(x: object) -> object:
    """A numpy scalar as the Python value it holds (prints as ``1``, not ``np.int64(1)``); lists
    and tuples element by element."""
    if isinstance(x, list):
        return [plain(v) for v in x]
    if isinstance(x, tuple):
        return tuple(plain(v) for v in x)
    return x.item() if isinstance(x, np.generic) else x


def validate_ratings(
    df: pd.DataFrame,
    *,
    source: str = "ratings",
    implicit: bool = False,
    first_line: int | None = None,
    labels: Mapping[str, str] | None = None,
) -> pd.DataFrame:
    """Check a tidy ratings frame and return it with canonical dtypes.

    Rejected, each with a message that names the source, the line (``first_line`` is the file
    line of the first row; rows by index label otherwise), the column (``labels``: its name in
    the source), the bad value and the fix: an empty table, a missing ``user``, ``item`` or
    ``rating`` column, missing values, non-numeric ratings or timestamps, duplicate (user, item)
    pairs. Nothing is dropped or coerced silently. With ``implicit=True`` the frame has no
    ``rating`` column (implicit feedback) and none is asked for. Timestamps held as dates become
    whole seconds since 1970-01-01 UTC.
    """
    if not isinstance(df, pd.DataFrame):
        raise DataError(f"{source}: expected a pandas DataFrame, got {type(df).__name__}")
    labels = dict(labels or {})

    def where(pos: np.ndarray) -> str:
        if first_line is not None:
            return ", ".join(f"{first_line + int(k)}" for k in pos[:5])
        return ", ".join(repr(plain(df.index[int(k)])) for k in pos[:5])

    unit = "line" if first_line is not None else "row"

    def column(role: str) -> str:
        name = labels.get(role, role)
        return f"column {name!r}" + (f" (the {role})" if name != role else "")

    required = ("user", "item") if implicit else ("user", "item", "rating")
    missing = [c for c in required if c not in df.columns]
    if missing:
        raise DataError(
            f"{source}: missing column(s) {missing}; found {list(df.columns)}. "
            "Map your columns with from_frame(df, user=..., item=..., rating=...)"
            + (
                ""
                if "rating" not in missing or len(missing) > 1
                else "; for data without ratings (clicks, plays) pass rating=None"
            )
            + "."
        )
    if len(df) == 0:
        raise DataError(
            f"{source}: no ratings in it (the table is empty); at least one rating is needed."
        )
    cols = list(required) + (["timestamp"] if "timestamp" in df.columns else [])
    isna = df[cols].isna().to_numpy()
    if isna.any():
        rows = np.flatnonzero(isna.any(axis=1))
        first = cols[int(np.flatnonzero(isna[rows[0]])[0])]
        s = "s" if len(rows) > 1 else ""
        raise DataError(
            f"{source}, {unit} {where(rows[:1])}: {column(first)} is empty; {len(rows)} "
            f"{unit}{s} with a missing value ({unit}{s} {where(rows)}"
            f"{', ...' if len(rows) > 5 else ''}). Fill or remove them before loading: "
            "recmeta does not guess."
        )
    for col in [c for c in ("rating", "timestamp") if c in cols]:
        s = df[col]
        if col == "timestamp" and pd.api.types.is_datetime64_any_dtype(s):
            continue
        if pd.api.types.is_bool_dtype(s):
            raise DataError(
                f"{source}: {column(col)} holds True/False values, not numbers; "
                f"convert it explicitly (e.g. 1 for True) if that is meant."
            )
        if not pd.api.types.is_numeric_dtype(s):
            number = pd.to_numeric(s, errors="coerce")
            bad = np.flatnonzero(number.isna().to_numpy())
            example = "4 or 3.5" if col == "rating" else "881250949 (seconds)"
            if len(bad):
                k = int(bad[0])
                raise DataError(
                    f"{source}, {unit} {where(bad[:1])}: {column(col)} holds "
                    f"{plain(s.iloc[k])!r}, "
                    f"which is not a number{_others(bad, unit, where)}. A {col} must be a "
                    f"number (e.g. "
                    f"{example}): fix or remove those lines, or map the values to numbers first."
                )
            raise DataError(
                f"{source}: {column(col)} holds numbers written as text (e.g. "
                f"{plain(s.iloc[0])!r}); convert the column explicitly, e.g. with pd.to_numeric."
            )
    dup = df.duplicated(["user", "item"], keep=False).to_numpy()
    if dup.any():
        pos = np.flatnonzero(dup)
        groups = df.iloc[pos].groupby(["user", "item"], sort=False).indices
        shown = []
        for pair, members in list(groups.items())[:3]:
            values = [plain(v) for v in pair]
            shown.append(f"({', '.join(repr(v) for v in values)}) at {unit}s {where(pos[members])}")
        what = "interaction" if implicit else "rating"
        raise DataError(
            f"{source}: {len(pos)} {unit}s share a (user, item) pair, e.g. "
            f"{'; '.join(shown)}; keep one {what} per pair (e.g. the latest) before loading."
        )
    out = df[cols].reset_index(drop=True)
    if not implicit:
        out = out.astype({"rating": "float64"})
    if "timestamp" in cols:
        out["timestamp"] = _seconds(out["timestamp"], source, unit, where, column("timestamp"))
    return out


def _others(bad: np.ndarray, unit: str, where: Callable[[np.ndarray], str]) -> str:
    """``"; 3 such values (lines 4, 9, 12)"`` after the first bad value, or nothing."""
    if len(bad) < 2:
        return ""
    return f"; {len(bad)} such values ({unit}s {where(bad)}{', ...' if len(bad) > 5 else ''})"


def _seconds(
    ts: pd.Series, source: str, unit: str, where: Callable[[np.ndarray], str], label: str
) -> pd.Series:
    """Timestamps as int64 seconds; dates are converted, fractions of a second refused."""
    if pd.api.types.is_datetime64_any_dtype(ts):
        if getattr(ts.dt, "tz", None) is not None:
            ts = ts.dt.tz_convert("UTC").dt.tz_localize(None)
        ns = ts.astype("datetime64[ns]").astype("int64")
        ts = pd.Series(ns // 10**9 + (ns % 10**9) / 1e9, index=ts.index)
    if pd.api.types.is_float_dtype(ts):
        frac = np.flatnonzero(np.mod(ts.to_numpy(), 1) != 0)
        if len(frac):
            raise DataError(
                f"{source}, {unit} {where(frac[:1])}: {label} holds {plain(ts.iloc[frac[0]])!r}; "
                "timestamps must be whole numbers of seconds: round them explicitly if that is "
                "meant."
            )
    return ts.astype("int64")
