"""Krichene & Rendle (2020), §6: reading a :class:`~.movielens.RealStudy`, and its tables
beside the paper's (Fig. 5, Tables 3–4), the tie rules and the several-items study.

The wide views the claims read are cached per study object (a study is evaluated under several
tie rules and by many claims).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd

from ...sampled import TIE_RULES, pairwise_agreement, summarise
from .movielens import MultiStudy, RealStudy
from .paper import PAPER, TABLE3, TABLE3_ESTIMATORS, TABLE4, TABLE4_ESTIMATORS

__all__ = [
    "exact_by_rule",
    "exact_means",
    "fig5_frame",
    "independent_change",
    "multi_table",
    "rank_frame",
    "reliable_counts",
    "repetitions_wide",
    "sampled_means",
    "shares",
    "table3_frame",
    "table4_frame",
    "worst_bucket",
]


_WIDE: dict[tuple[Any, ...], tuple[Any, Any]] = {}


def _by_identity(obj: Any, key: tuple[Any, ...], build: Callable[[], Any]) -> Any:
    """Cache ``build()`` for the object ``obj`` (kept alive and checked by identity)."""
    full = (id(obj), *key)
    hit = _WIDE.get(full)
    if hit is not None and hit[0] is obj:
        return hit[1]
    if len(_WIDE) > 64:
        _WIDE.clear()
    value = build()
    _WIDE[full] = (obj, value)
    return value


def repetitions_wide(
    study: RealStudy, metric: str, estimator: str, shared: bool = True
) -> pd.DataFrame:
    """Repetitions × systems of one metric and estimator, under the study's tie rule."""
    source = study.sim if shared else study.sim_independent

    def build() -> pd.DataFrame:
        return study.sampled(shared=shared).pivot_table(
            index=["metric", "estimator", "repetition"],
            columns="system",
            values="value",
            sort=False,
        )

    wide = _by_identity(source, ("wide", study.ties, shared), build)
    return wide.loc[(metric, estimator)][list(study.systems)]


def exact_means(study: RealStudy) -> pd.DataFrame:
    """:meth:`RealStudy.exact_means` under the study's tie rule, cached."""
    return _by_identity(study.exact, ("means", study.ties), study.exact_means)


def shares(study: RealStudy, shared: bool = True) -> pd.DataFrame:
    """Per pair, metric and estimator, the share of repetitions ordering the pair as the exact
    metric does (:func:`recmeta.sampled.pairwise_agreement`)."""
    ex = exact_means(study).stack().rename("value").reset_index()
    return pairwise_agreement(study.sampled(shared=shared), ex)


def worst_bucket(ranks: np.ndarray, n: np.ndarray, buckets: int = 10) -> np.ndarray:
    """Whether each rank lies in the last of ``buckets`` equal buckets of the user's list
    (relative rank above 1 − 1/buckets). Our reading of Fig. 5's "worst bucket", whose width
    the paper's text does not give."""
    return np.asarray(ranks, dtype=float) > (1.0 - 1.0 / buckets) * np.asarray(n, dtype=float)


def table3_frame(study: RealStudy, ties: str | None = None) -> pd.DataFrame:
    """Table 3 beside ours: rows (metric, system, source ∈ paper/ours), columns exact and each
    estimator, cells "mean ± sd" in percent (the paper on ML-1M, ours on the study's data)."""
    rule = ties or study.ties
    ex = study.exact_means(rule)
    summ = summarise(study.sampled(rule)).set_index(["metric", "system", "estimator"])
    rows = []
    for metric in study.metrics:
        for sy in study.systems:
            ours = {"exact": f"{100 * ex.loc[metric, sy]:.2f}"}
            for e in study.estimators:
                mean, sd = summ.loc[(metric, sy, e), ["mean", "sd"]]
                ours[e] = (
                    f"{100 * mean:.2f} ± {100 * sd:.2f}" if np.isfinite(sd) else f"{100 * mean:.2f}"
                )
            rows.append({"metric": metric, "system": sy, "source": "ours", **ours})
            if metric in TABLE3 and sy in TABLE3[metric]:
                p = TABLE3[metric][sy]
                paper = {"exact": f"{p[0]:.2f}"}
                paper.update(
                    {
                        e: f"{v[0]:.2f} ± {v[1]:.2f}"
                        for e, v in zip(TABLE3_ESTIMATORS, p[1:], strict=True)
                    }
                )
                rows.append({"metric": metric, "system": sy, "source": "paper", **paper})
    cols = ["exact", *study.estimators]
    return pd.DataFrame(rows).set_index(["metric", "system", "source"])[cols].fillna("")


def table4_frame(study: RealStudy, shared: bool = True) -> pd.DataFrame:
    """Table 4 beside ours: rows (pair, metric, source), columns estimators, percent of
    repetitions ordering the pair as the exact metric does."""
    sh = shares(study, shared)
    ours = 100 * sh.pivot_table(
        index=["pair", "metric"], columns="estimator", values="agreement", sort=False
    )
    ours = ours[[e for e in study.estimators if e in ours]].round(0)
    rows = []
    for (pair, metric), row in ours.iterrows():
        rows.append({"pair": pair, "metric": metric, "source": "ours", **row.to_dict()})
        if pair in TABLE4 and metric in TABLE4[pair]:
            rows.append(
                {
                    "pair": pair,
                    "metric": metric,
                    "source": "paper",
                    **dict(zip(TABLE4_ESTIMATORS, TABLE4[pair][metric], strict=True)),
                }
            )
    frame = pd.DataFrame(rows).set_index(["pair", "metric", "source"])
    return frame[list(ours.columns)]


def fig5_frame(study: RealStudy) -> pd.DataFrame:
    """Fig. 5's counts beside ours: the paper's count of 6,040 users and share, our count and
    share."""
    ranks, n = study.ranks(), study.standing.n
    rows = []
    if {"X", "Z"} <= set(study.systems):
        ours = {
            "Z in the worst bucket": worst_bucket(ranks["Z"], n),
            "X in the top 100": ranks["X"] <= 100,
            "X in the bottom half": ranks["X"] > n / 2,
        }
        paper = {
            "Z in the worst bucket": ("over", PAPER["z_worst_bucket"]),
            "X in the top 100": ("", PAPER["x_top100"]),
            "X in the bottom half": ("under", PAPER["x_bottom_half"]),
        }
        for what, hit in ours.items():
            word, count = paper[what]
            rows.append(
                {
                    "users": what,
                    "paper": f"{word} {count:,}".strip(),
                    "paper share": count / PAPER["users"],
                    "ours": int(hit.sum()),
                    "our share": float(hit.mean()),
                }
            )
    return pd.DataFrame(rows).set_index("users") if rows else pd.DataFrame()


def rank_frame(study: RealStudy) -> pd.DataFrame:
    """True rank of the held-out item per user and system (long: system, rank), for Fig. 5."""
    return pd.concat([pd.DataFrame({"system": k, "rank": v}) for k, v in study.ranks().items()])


def exact_by_rule(study: RealStudy) -> pd.DataFrame:
    """Exact mean metrics in percent under every tie rule: rows (ties, metric), columns system."""
    return pd.concat({rule: 100 * study.exact_means(rule) for rule in TIE_RULES}, names=["ties"])


def sampled_means(study: RealStudy) -> pd.DataFrame:
    """Mean sampled metric over repetitions: rows (metric, estimator), columns system."""
    return summarise(study.sampled()).pivot_table(
        index=["metric", "estimator"], columns="system", values="mean"
    )


def independent_change(
    study: RealStudy, shared_table: pd.DataFrame
) -> tuple[pd.DataFrame, pd.Series]:
    """Independent against shared negatives: Table 4's shares (ours) independent minus shared,
    and per system, metric and estimator |mean shared − mean independent| in Monte-Carlo
    standard errors, sqrt((sd²_shared + sd²_independent)/R) over R repetitions."""
    independent = table4_frame(study, shared=False).xs("ours", level="source")
    change = independent - shared_table.xs("ours", level="source")
    keys = ["system", "metric", "estimator"]
    sh = summarise(study.sampled()).set_index(keys)
    ind = summarise(study.sampled(shared=False)).set_index(keys)
    z = (
        (sh["mean"] - ind["mean"]) / np.sqrt((sh["sd"] ** 2 + ind["sd"] ** 2) / study.repetitions)
    ).abs()
    return change, z


def reliable_counts(reliable: pd.DataFrame) -> pd.DataFrame:
    """Per estimator, how many pairs and metrics are reliable on the grid, never, or unclear
    (from :func:`recmeta.sampled.reliable_from_study`)."""
    return reliable.groupby("estimator", sort=False)["verdict"].agg(
        reliable=lambda v: int(v.str.startswith("reliable").sum()),
        never=lambda v: int((v == "never on the grid").sum()),
        unclear=lambda v: int(v.str.startswith("unclear").sum()),
    )


def multi_table(multi: MultiStudy) -> pd.DataFrame:
    """The several-items study in percent: rows (metric, system), columns exact and the mean
    of each estimator over repetitions."""
    exact = pd.DataFrame(
        [(s, m, float(v.mean())) for (s, m), v in multi.exact.items()],
        columns=["system", "metric", "exact"],
    )
    wide = 100 * summarise(multi.sim).pivot_table(
        index=["metric", "system"], columns="estimator", values="mean", sort=False
    )
    wide.insert(
        0, "exact", 100 * exact.set_index(["metric", "system"])["exact"].reindex(wide.index)
    )
    return wide
