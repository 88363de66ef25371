"""Sampled candidates: the sampled rank of each user's relevant item, and corrected metrics.

When each user's relevant (held-out) item is ranked among ``m`` sampled items instead of all
``n`` candidates, the metric of the m + 1 items is a biased, often misleading, estimate of the
metric on all candidates (Krichene & Rendle 2020): the sampled rank r̃ of an item at true rank r
follows 1 + Binomial(m, (r − 1)/(n − 1)), so the sampled top 10 stands for true ranks up to
about 10 (n − 1)/m. This module reads r̃ from the runs (1 / RR of the engine, the lists holding
one relevant item each) and scores it with a correction of :mod:`recmeta.sampled`: the rank
estimate M_n(⌊1 + (n − 1)(r̃ − 1)/m⌋) (eq. 20, each user's own n), or a fitted correction
(least squares, CLS, bias–variance "BV γ", eqs. 21–25) for the mean n.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from recmeta import sampled as ks
from recmeta.metrics import Judgments, Runs, parse_metric, score_matrices

from .references import catalogue

__all__ = [
    "Sampling",
    "rank_metric_name",
    "sample_candidates",
    "sampled_ranks",
    "corrected_scores",
    "random_value",
    "warning_text",
]


@dataclass(frozen=True)
class Sampling:
    """How the candidates were sampled: ``m`` sampled items per user besides the relevant one.

    ``n`` is the number of items each user would rank without sampling (the relevant item and all
    its candidate negatives): one number, a mapping user → n, or None to count it from the
    training data as the catalogue minus the user's training items. ``estimator`` names the
    correction (``"rank-estimate"``, ``"cls"``, ``"least-squares"``, ``"BV <γ>"``; default
    ``"BV 0.1"``, the correction of the sampled-metrics chapter's Figure 6); ``replace`` says
    whether the negatives were drawn with replacement.
    """

    m: int
    n: int | Mapping | pd.Series | None = None
    estimator: str = "BV 0.1"
    replace: bool = True

    def __post_init__(self) -> None:
        if int(self.m) != self.m or self.m < 1:
            raise ValueError(
                f"m (sampled items per user) must be a positive integer, got {self.m!r}"
            )
        ks.parse_estimator(self.estimator)


def rank_metric_name(metric: str) -> str:
    """The name in :mod:`recmeta.sampled` of an engine metric of one relevant item.

    nDCG@k → NDCG@k, R@k → Recall@k, P@k → Precision@k, AP@k → AP@k, RR and AP → AP (one
    relevant item: AP = RR = 1/r), AUC → AUC, read by the one measure registry
    (:func:`recmeta.sampled.parse_rank_metric`). Other metrics raise: their corrections are not
    defined for sampled ranks.
    """
    try:
        return ks.parse_rank_metric(metric).name
    except ValueError as exc:
        raise ValueError(
            f"{metric!r} has no correction for sampled candidates; use nDCG@k, R@k, P@k, AP@k, "
            f"RR or AUC (Krichene & Rendle 2020, eqs. 7–13): {exc}"
        ) from None


def sample_candidates(
    train: pd.DataFrame,
    held: pd.DataFrame,
    m: int,
    *,
    seed: int = 0,
    items: Sequence | pd.Index | None = None,
) -> pd.DataFrame:
    """Candidate pairs (user, item) of a sampled evaluation: each held-out item and ``m`` negatives.

    ``held`` has one row (user, item) per user. The negatives of a user are drawn uniformly
    without replacement from the catalogue (``items``, default the training items) minus the
    user's training items and the held-out item, the pool Krichene & Rendle (2020) sample from;
    a user with fewer than ``m`` such items raises. Drawn as the ``m`` smallest of independent
    uniform keys, users in blocks.
    """
    if held["user"].duplicated().any():
        raise ValueError("held must hold one (user, item) row per user")
    cat = catalogue(train, items)
    users = pd.Index(held["user"].to_numpy())
    u = users.get_indexer(train["user"].to_numpy())
    i = cat.get_indexer(train["item"].to_numpy())
    ok = (u >= 0) & (i >= 0)
    blocked = np.zeros((len(users), len(cat)), dtype=bool)
    blocked[u[ok], i[ok]] = True
    hi = cat.get_indexer(held["item"].to_numpy())
    blocked[np.flatnonzero(hi >= 0), hi[hi >= 0]] = True
    pool = (~blocked).sum(axis=1)
    if (pool < m).any():
        raise ValueError(
            f"{int((pool < m).sum())} users have fewer than m = {m} items to sample from"
        )
    rng = np.random.default_rng(seed)
    out = np.empty((len(users), m), dtype=np.int64)
    block = max(1, 4_000_000 // len(cat))
    for start in range(0, len(users), block):
        rows = slice(start, min(start + block, len(users)))
        keys = rng.random((rows.stop - rows.start, len(cat)))
        keys[blocked[rows]] = np.inf
        out[rows] = np.argpartition(keys, m - 1, axis=1)[:, :m]
    negatives = pd.DataFrame(
        {"user": np.repeat(users.to_numpy(), m), "item": cat.to_numpy()[out.ravel()]}
    )
    pairs = pd.concat([held[["user", "item"]], negatives], ignore_index=True)
    return pairs.sort_values(["user", "item"], kind="stable").reset_index(drop=True)


def sampled_ranks(judgments: Judgments, runs: Runs, m: int) -> tuple[np.ndarray, np.ndarray]:
    """(r̃, missing): the sampled rank of each evaluated user's relevant item, per system.

    Every evaluated user must have exactly one relevant item. r̃ = 1 / RR; an item missing from
    a list (a list cut before it, or a user without a list) is placed last, r̃ = m + 1, and
    flagged in ``missing``. Lists longer than m + 1 raise: m is then not the number sampled.
    """
    keep = judgments.evaluable()
    rel = judgments.relevant_counts()[keep]
    if (rel != 1).any():
        raise ValueError(
            f"{int((rel != 1).sum())} evaluated users have {int(rel.max())} relevant items; "
            "sampled corrections assume one relevant (held-out) item per user "
            "(Krichene & Rendle 2020)"
        )
    lengths = (runs.ranks >= 0).sum(axis=2)
    if lengths.max(initial=0) > m + 1:
        raise ValueError(
            f"a list holds {int(lengths.max())} items, more than m + 1 = {m + 1}; give the "
            "number of sampled items m that was used"
        )
    rr = score_matrices(judgments, runs, ["RR"])["RR"][:, keep]
    missing = rr <= 0
    with np.errstate(divide="ignore"):
        ranks = np.where(missing, m + 1, np.rint(1.0 / np.where(missing, 1.0, rr))).astype(np.int64)
    return ranks, missing


def _scores(
    name: str, est: ks.Estimator, ranks: np.ndarray, n: np.ndarray, m: int, replace: bool
) -> np.ndarray:
    if est.method is None:
        return ks.metric_value(name, ranks, m + 1)
    if est.method == "rank-estimate":
        nn = np.broadcast_to(n, ranks.shape)
        return ks.metric_value(name, 1 + ((nn - 1) * (ranks - 1)) // m, nn)
    fit_n = int(np.rint(np.mean(n)))
    table = ks.correction(name, fit_n, m, est.method, gamma=est.gamma, replace=replace)
    return ks.apply_correction(table, ranks)


def corrected_scores(
    metric: str, ranks: np.ndarray, n: np.ndarray, sampling: Sampling
) -> np.ndarray:
    """Per-user corrected metric (systems × users) from the sampled ranks ``ranks``.

    ``n`` holds each user's number of candidates without sampling. The rank estimate uses each
    user's own n; a fitted correction is fitted once for the rounded mean n, as in Krichene &
    Rendle (2020, §6.3).
    """
    est = ks.parse_estimator(sampling.estimator)
    return _scores(
        rank_metric_name(metric),
        est,
        ranks,
        np.asarray(n, dtype=np.int64),
        int(sampling.m),
        sampling.replace,
    )


def random_value(
    metric: str, n: np.ndarray, sampling: Sampling, estimator: str | None = None
) -> float:
    """Expected value of a random ranking under sampling: r̃ is uniform on 1..m + 1.

    ``estimator`` None scores r̃ with the sampling's correction; ``"sampled"`` with the plain
    metric of the m + 1 items.
    """
    est = ks.parse_estimator(estimator or sampling.estimator)
    m = int(sampling.m)
    nn = np.asarray(n, dtype=np.int64)
    r = np.arange(1, m + 2)[:, None]
    values = _scores(
        rank_metric_name(metric),
        est,
        np.broadcast_to(r, (m + 1, nn.size)),
        nn[None, :],
        m,
        sampling.replace,
    )
    return float(np.mean(values))


def warning_text(metrics: Sequence[str], n: np.ndarray, sampling: Sampling) -> str:
    """What sampling does to these metrics, in numbers for this n and m (Krichene & Rendle 2020)."""
    m = int(sampling.m)
    nn = np.asarray(n, dtype=float)
    mean_n = float(np.mean(nn))
    scale = (mean_n - 1) / m
    parts = [
        f"Sampled candidates: each user's relevant item was ranked against m = {m} sampled "
        f"items instead of all n ≈ {mean_n:,.0f} candidates (Krichene & Rendle 2020). A sampled "
        f"rank stands for about {scale:,.1f} true ranks, so uncorrected sampled metrics credit "
        "items far down the true ranking and can order systems differently from the exact metrics."
    ]
    cutoffs = sorted({k for k in (parse_metric(x).k for x in metrics) if k is not None})
    fit_n = int(np.rint(mean_n))
    for k in cutoffs[:2]:
        deep = int(min(fit_n, max(k + 1, np.ceil(k * scale / 2))))
        p = float(
            ks.expected_metric(f"Recall@{k}", np.array([deep]), fit_n, m, sampling.replace)[0]
        )
        parts.append(
            f"An item at true rank {deep:,} (outside the true top {k}) lands in the sampled "
            f"top {k} with probability {p:.2f}."
        )
    parts.append(
        f"The tests below use the {sampling.estimator} correction of each user's sampled "
        "rank; the uncorrected values are kept for comparison."
    )
    return " ".join(parts)
