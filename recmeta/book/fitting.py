"""Fitting the scale benchmark's growth laws: ``seconds ≈ c · users^a · items^b · ratings^g``.

:func:`fit_growth` turns the records of ``benchmarks/scale.py`` into the fits of
``recmeta/book/cost_fits.py``, which :mod:`recmeta.book.costs` reads to estimate a chapter
before it runs; :func:`power_fit` is its least-squares fit on logarithms.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import pandas as pd

__all__ = ["power_fit", "fit_growth", "OWN_FIT_SIZES"]


def power_fit(y: np.ndarray, *xs: np.ndarray) -> dict:
    """Least squares of ``log y`` on ``[1, log x1, log x2, ...]``: ``y ≈ c · x1^a1 · x2^a2``.

    Returns ``coef`` (log c first), ``se`` (their standard errors; NaN without residual degrees
    of freedom), ``factor`` (the residuals as factors, measured / fitted), ``n`` and ``dof``.
    """
    y = np.asarray(y, dtype=float)
    X = np.column_stack([np.ones(len(y)), *[np.log(np.asarray(x, dtype=float)) for x in xs]])
    ly = np.log(y)
    coef, *_ = np.linalg.lstsq(X, ly, rcond=None)
    resid = ly - X @ coef
    dof = len(y) - X.shape[1]
    se = (
        np.sqrt(np.diag(resid @ resid / dof * np.linalg.inv(X.T @ X)))
        if dof > 0
        else np.full(X.shape[1], np.nan)
    )
    return {"coef": coef, "se": se, "factor": np.exp(resid), "n": len(y), "dof": dof}


def _ok(records: pd.DataFrame) -> pd.DataFrame:
    return records[(records["status"] == "ok") & (records["cpu_s"] > 0)]


#: sizes a phase needs for exponents of its own (four coefficients and two residual degrees of
#: freedom)
OWN_FIT_SIZES = 6


def fit_growth(records: Iterable[dict], family: dict[str, str]) -> dict[str, dict]:
    """The growth of every phase in the scale benchmark's ``records`` (CPU seconds).

    Keys: ``run:<system>`` for each roster system, ``evaluate``, ``tests``, ``curve``. A phase
    measured at :data:`OWN_FIT_SIZES` sizes or more gets its own exponents of users, items and
    ratings. A system of ``family`` (measured on the small and real sizes only, not on the
    large ones that separate the exponents) borrows the exponents of ``family[system]`` and
    fits its constant on its own sizes; so does any other phase measured at fewer sizes. The
    last record of each (size, phase, system) counts; records that did not finish are left out.
    """
    df = pd.DataFrame(list(records))
    df["system"] = df["system"].fillna("")
    df = df.drop_duplicates(["size", "phase", "system"], keep="last")
    names = {"metrics": "evaluate", "tests": "tests", "curve": "curve"}
    out: dict[str, dict] = {}

    def own(g: pd.DataFrame) -> dict | None:
        ok = _ok(g)
        if len(ok) < OWN_FIT_SIZES:
            return None
        f = power_fit(ok["cpu_s"], ok["users"], ok["items"], ok["ratings"])
        a, b, c = (float(x) for x in f["coef"][1:])
        return {
            "log_c": float(f["coef"][0]),
            "a": a,
            "b": b,
            "g": c,
            "low": float(f["factor"].min()),
            "high": float(f["factor"].max()),
            "n": int(f["n"]),
            "largest": int(ok["ratings"].max()),
            "via": "",
        }

    groups = [
        (f"run:{s}", df[(df["phase"] == "runs") & (df["system"] == s)])
        for s in dict.fromkeys(df.loc[df["phase"] == "runs", "system"])
    ]
    groups += [(names[p], df[df["phase"] == p]) for p in names if (df["phase"] == p).any()]
    for key, g in groups:
        fitted = None if key.removeprefix("run:") in family else own(g)
        if fitted:
            out[key] = fitted
    for key, g in groups:
        if key in out:
            continue
        system = key.removeprefix("run:")
        rep = out.get(f"run:{family.get(system, '')}")
        if rep is None:
            raise ValueError(
                f"{key}: measured at {len(_ok(g))} sizes, fewer than the "
                f"{OWN_FIT_SIZES} its own exponents need, and no measured family "
                f"representative in {family}"
            )
        ok = _ok(g)
        log_resid = (
            np.log(ok["cpu_s"].to_numpy(float))
            - rep["a"] * np.log(ok["users"].to_numpy(float))
            - rep["b"] * np.log(ok["items"].to_numpy(float))
            - rep["g"] * np.log(ok["ratings"].to_numpy(float))
        )
        log_c = float(log_resid.mean())
        factor = np.exp(log_resid - log_c)
        out[key] = {
            "log_c": log_c,
            "a": rep["a"],
            "b": rep["b"],
            "g": rep["g"],
            "low": float(factor.min()),
            "high": float(factor.max()),
            "n": int(len(ok)),
            "largest": int(ok["ratings"].max()),
            "via": family[system],
        }
    return dict(sorted(out.items()))
