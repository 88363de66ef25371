"""The artificial study of Scheel, Lommatzsch & Albayrak (2011), sec. 2.1, Figs. 1–5.

A reference ranking of 100 items graded on 2, 10, 20 or 50 levels (:func:`reference_grades`,
uniform or non-uniform level distribution, integer levels or levels spread over [0, 1]), test
rankings made by ``s`` random pair swaps (:func:`swap_permutations`), the mean of each measure
over many repetitions against ``s`` (:func:`swap_study`); the difference of two curves with its
standard error (:func:`curve_difference`); the exact single-swap expectation against the
sampler (:func:`single_swap_scores`, :func:`one_swap_check`).

Every loop here runs over swap steps or grade levels, never over rankings: those are rows of one
array.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
from tqdm import tqdm

from ... import analyses
from ...metrics import Judgments, Runs, score_matrices
from .measures import PAPER_METRICS
from .settings import Settings

__all__ = [
    "DISTRIBUTIONS",
    "PAPER_LEVELS",
    "SCALES",
    "curve_difference",
    "level_count_table",
    "level_counts",
    "level_summary",
    "one_swap_check",
    "one_swap_study",
    "one_swap_table",
    "reference_grades",
    "score_permutations",
    "single_swap_scores",
    "single_swap_study",
    "single_swaps",
    "study_reference",
    "swap_permutations",
    "swap_rankings",
    "swap_studies",
    "swap_study",
]

PAPER_LEVELS = (2, 10, 20, 50)
"""Numbers of relevance levels of the paper's artificial reference rankings."""

DISTRIBUTIONS = ("uniform", "non-uniform")

SCALES = ("integer", "unit")
"""Values of the levels of an artificial reference: ``integer`` levels ``0, 1, ..., L - 1`` (the
chapter's reading of the paper, whose level values are not given), or ``unit`` levels
``k / (L - 1)`` spread over [0, 1] (the same ranking with small gains)."""


# ---------------------------------------------------------------------- reference rankings
def level_counts(
    n_items: int,
    n_levels: int,
    distribution: str = "uniform",
    rng: np.random.Generator | int | None = None,
) -> np.ndarray:
    """Number of items on each level ``0 .. n_levels - 1`` of an artificial reference ranking.

    ``uniform``: the items spread as evenly as possible (100 items on 10 levels: 10 each; a
    remainder goes to the lowest levels). ``non-uniform``: level probabilities drawn from a flat
    Dirichlet, then counts from a multinomial, so some levels may stay empty — the paper's
    "probabilities differ randomly between the relevance levels" (Scheel et al., sec. 2.1).
    A draw without any item above level 0 is redrawn, since no measure is defined on it.
    """
    if n_levels < 2:
        raise ValueError(f"n_levels must be >= 2 (level 0 is irrelevant), got {n_levels}")
    if n_items < 1:
        raise ValueError(f"n_items must be >= 1, got {n_items}")
    if distribution == "uniform":
        base, extra = divmod(n_items, n_levels)
        return np.full(n_levels, base, dtype=np.int64) + (np.arange(n_levels) < extra)
    if distribution != "non-uniform":
        raise ValueError(f"distribution must be one of {DISTRIBUTIONS}, got {distribution!r}")
    rng = np.random.default_rng(rng)
    while True:
        counts = rng.multinomial(n_items, rng.dirichlet(np.ones(n_levels)))
        if counts[1:].sum() > 0:
            return counts.astype(np.int64)


def reference_grades(
    n_items: int = 100,
    n_levels: int = 10,
    distribution: str = "uniform",
    rng: np.random.Generator | int | None = None,
    scale: str = "integer",
) -> np.ndarray:
    """Grades of an artificial reference ranking, best first.

    Level counts from :func:`level_counts`. ``scale="integer"``: level ``k`` has grade ``k``
    (``n_levels - 1 .. 0``), successive levels 1 apart, as the paper assumes for ordinal scales
    (sec. 2.2). ``scale="unit"``: grade ``k / (n_levels - 1)``, the same levels spread over
    [0, 1]. Being sorted, the ranking is ideal: every measure scores it 1.
    """
    if scale not in SCALES:
        raise ValueError(f"scale must be one of {SCALES}, got {scale!r}")
    counts = level_counts(n_items, n_levels, distribution, rng)
    values = np.arange(n_levels, dtype=np.float64)
    if scale == "unit":
        values = values / (n_levels - 1)
    return np.repeat(values, counts)[::-1].copy()


# ---------------------------------------------------------------------- swapped test rankings
def swap_permutations(
    n_items: int, swaps: Sequence[int] | np.ndarray, rng: np.random.Generator | int | None = None
) -> np.ndarray:
    """One permutation of ``0 .. n_items - 1`` per entry of ``swaps``, made by that many random
    pair swaps of the identity (Scheel et al., sec. 2.1, Fig. 1).

    Each swap exchanges the items at two distinct positions drawn uniformly; the swaps of a row
    are independent, so a later swap may undo an earlier one, and a swap of two items on the same
    level leaves every measure unchanged. Vectorised over rows: the loop runs over swap steps.
    """
    s = np.asarray(swaps)
    if s.ndim != 1 or not np.issubdtype(s.dtype, np.integer) or (s < 0).any():
        raise ValueError("swaps must be a 1-d array of non-negative integers")
    if n_items < 2 and (s > 0).any():
        raise ValueError("swapping needs at least two items")
    rng = np.random.default_rng(rng)
    perms = np.tile(np.arange(n_items, dtype=np.int64), (s.size, 1))
    for step in range(int(s.max(initial=0))):
        rows = np.flatnonzero(s > step)
        i = rng.integers(n_items, size=rows.size)
        j = (i + rng.integers(1, n_items, size=rows.size)) % n_items  # j != i
        a = perms[rows, i]
        perms[rows, i] = perms[rows, j]
        perms[rows, j] = a
    return perms


def single_swaps(n_items: int) -> np.ndarray:
    """Every permutation made by exactly one swap: one row per pair ``i < j`` (n(n-1)/2 rows).

    Averaging a measure over these rows gives its exact expectation after one random swap.
    """
    i, j = np.triu_indices(n_items, k=1)
    perms = np.tile(np.arange(n_items, dtype=np.int64), (i.size, 1))
    rows = np.arange(i.size)
    perms[rows, i], perms[rows, j] = j, i
    return perms


def single_swap_scores(
    reference: np.ndarray, metrics: Sequence[str] = tuple(PAPER_METRICS)
) -> pd.DataFrame:
    """Every single-swap ranking of ``reference``: positions ``i < j``, the grade distance
    ``|g_i - g_j|`` of the two items and each measure's score (one row per pair).

    One random swap picks each pair with the same probability, so the column means are the
    exact expectations after one swap and the columns' spread is the exact spread.
    """
    ref = np.asarray(reference, dtype=np.float64)
    i, j = np.triu_indices(ref.size, k=1)
    scores = score_permutations(ref, single_swaps(ref.size), metrics, thresholds=False)
    return pd.DataFrame({"i": i, "j": j, "distance": np.abs(ref[i] - ref[j]), **scores})


def one_swap_check(
    levels: Sequence[int] = PAPER_LEVELS,
    distributions: Sequence[str] = DISTRIBUTIONS,
    *,
    n_items: int = 100,
    draws: int = 1000,
    metrics: Sequence[str] = tuple(PAPER_METRICS),
    seed: int = 0,
) -> pd.DataFrame:
    """The sampler against the exact expectation after one swap, for every study reference.

    For each setting, the exact mean ``mu`` and standard deviation ``sigma`` of each measure over
    all single-swap rankings (:func:`single_swap_scores`), and the mean of ``draws`` rankings
    drawn by :func:`swap_permutations` with one swap (a random stream of its own). Since
    ``sigma`` is known exactly, ``z = (simulated - mu) / (sigma / sqrt(draws))`` is
    approximately standard normal when the sampler is right.

    Returns a frame: distribution, levels, metric, exact, sd, simulated, draws, z.
    """
    if draws < 2:
        raise ValueError(f"draws must be >= 2, got {draws}")
    rows = []
    for dist in distributions:
        for n_levels in levels:
            reference = study_reference(dist, n_levels, n_items, seed)
            exact = single_swap_scores(reference, metrics)
            rng = np.random.default_rng([seed, DISTRIBUTIONS.index(dist), n_levels, 2])
            perms = swap_permutations(n_items, np.ones(draws, dtype=np.int64), rng)
            sim = score_permutations(reference, perms, metrics, thresholds=False)
            for m in metrics:
                mu, sd = float(exact[m].mean()), float(exact[m].std(ddof=0))
                got = float(sim[m].mean())
                se = sd / np.sqrt(draws)
                if se > 0:
                    z = (got - mu) / se
                else:  # every single swap scores the same: the mean is exact
                    z = 0.0 if np.isclose(got, mu, rtol=0, atol=1e-12) else np.inf
                rows.append(
                    {
                        "distribution": dist,
                        "levels": n_levels,
                        "metric": m,
                        "exact": mu,
                        "sd": sd,
                        "simulated": got,
                        "draws": draws,
                        "z": z,
                    }
                )
    return pd.DataFrame(rows)


def swap_rankings(
    reference: np.ndarray,
    swap_counts: Sequence[int],
    repetitions: int,
    rng: np.random.Generator | int | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Test rankings of a reference: ``repetitions`` rankings per number of swaps.

    Returns ``(swaps, permutations)``: the swap count of each row and the row's permutation
    (test-ranking position -> reference position). The grades in test-ranking order are
    ``reference[permutations]``.
    """
    if repetitions < 1:
        raise ValueError(f"repetitions must be >= 1, got {repetitions}")
    swaps = np.repeat(np.asarray(swap_counts, dtype=np.int64), repetitions)
    return swaps, swap_permutations(len(reference), swaps, rng)


def score_permutations(
    reference: np.ndarray, perms: np.ndarray, metrics: Sequence[str], thresholds: bool
) -> dict[str, np.ndarray]:
    """Scores of each permutation of ``reference`` (rows of ``perms``: test position -> reference
    position), one array per metric; with ``thresholds``, ``AP@t=...`` for every positive level."""
    positive = np.unique(reference[reference > 0])
    grades = np.broadcast_to(reference, perms.shape)
    judgments = Judgments.from_grades(grades, threshold=float(positive.min()))
    runs = Runs.from_orders(perms, judgments)
    out = {name: m[0] for name, m in score_matrices(judgments, runs, list(metrics)).items()}
    if thresholds:
        for t in positive:  # loop over levels; the runs' entry look-up is shared
            at_t = score_matrices(judgments.with_threshold(t), runs, ["AP"])
            out[f"AP@t={float(t)!r}"] = at_t["AP"][0]
    return out


def study_reference(
    distribution: str, n_levels: int, n_items: int = 100, seed: int = 0, scale: str = "integer"
) -> np.ndarray:
    """The reference ranking :func:`swap_study` uses for one setting (its own random stream,
    seeded by ``seed``, the distribution and the number of levels; the ``scale`` changes the
    values of the levels, not how many items each holds)."""
    if distribution not in DISTRIBUTIONS:
        raise ValueError(f"distribution must be one of {DISTRIBUTIONS}, got {distribution!r}")
    rng = np.random.default_rng([seed, DISTRIBUTIONS.index(distribution), n_levels, 0])
    return reference_grades(n_items, n_levels, distribution, rng, scale)


def swap_study(
    levels: Sequence[int] = PAPER_LEVELS,
    distributions: Sequence[str] = DISTRIBUTIONS,
    *,
    n_items: int = 100,
    max_swaps: int = 99,
    repetitions: int = 100,
    metrics: Sequence[str] = tuple(PAPER_METRICS),
    thresholds: bool = True,
    seed: int = 0,
    scale: str = "integer",
    progress: bool = True,
) -> pd.DataFrame:
    """The artificial study of Scheel et al. (sec. 2.1 and 4, Figs. 4–5).

    For each distribution and number of levels, one reference ranking (:func:`study_reference`,
    levels on ``scale``) and ``repetitions`` test rankings for every swap count
    ``0 .. max_swaps``; each measure is averaged over the repetitions. With ``thresholds``, also
    MAP at every threshold ``t`` (the AP of "relevant = grade >= t"), reported as metric
    ``"MAP"`` with its ``threshold``. The swaps do not depend on ``scale``: the integer and the
    unit study score the same permutations.

    Returns a tidy frame: distribution, levels, swaps, metric, threshold (NaN but for MAP),
    value (mean over repetitions), sd (standard deviation over repetitions), n (repetitions).
    """
    settings = [(d, n) for d in distributions for n in levels]
    parts = []
    for dist, n_levels in tqdm(
        settings, desc="swap study", **({} if progress else {"disable": True})
    ):
        reference = study_reference(dist, n_levels, n_items, seed, scale)
        swap_rng = np.random.default_rng([seed, DISTRIBUTIONS.index(dist), n_levels, 1])
        swaps, perms = swap_rankings(reference, range(max_swaps + 1), repetitions, swap_rng)
        scores = score_permutations(reference, perms, metrics, thresholds)
        frame = pd.DataFrame(scores).assign(swaps=swaps)
        stats = frame.groupby("swaps").agg(["mean", "std"])
        long = stats.stack(level=0, future_stack=True).rename_axis(["swaps", "metric"])
        long = long.reset_index().rename(columns={"mean": "value", "std": "sd"})
        is_map = long["metric"].str.startswith("AP@t=")
        long["threshold"] = np.where(
            is_map, pd.to_numeric(long["metric"].str.removeprefix("AP@t="), errors="coerce"), np.nan
        )
        long.loc[is_map, "metric"] = "MAP"
        parts.append(long.assign(distribution=dist, levels=n_levels, n=repetitions))
    cols = ["distribution", "levels", "swaps", "metric", "threshold", "value", "sd", "n"]
    return pd.concat(parts, ignore_index=True)[cols]


def curve_difference(
    study: pd.DataFrame,
    first: Mapping[str, object],
    second: Mapping[str, object],
    *,
    min_swaps: int = 1,
) -> tuple[float, float]:
    """Mean over swap counts ``s >= min_swaps`` of ``mean_first(s) - mean_second(s)``, and its
    standard error.

    ``first`` and ``second`` select one curve of a :func:`swap_study` frame each, e.g.
    ``{"distribution": "uniform", "levels": 2, "metric": "nDCG(gain=exp)"}``. The two curves
    must come from independent rankings (two settings of the study: each has its own random
    stream). Every row of the study is an independent ranking, so with ``S`` swap counts and
    ``n`` repetitions the standard error is
    ``sqrt(sum_s (sd_first(s)^2 + sd_second(s)^2) / n) / S``.
    """

    def curve(sel: Mapping[str, object]) -> pd.DataFrame:
        mask = study["swaps"] >= min_swaps
        for key, value in sel.items():
            mask &= study[key] == value
        part = study[mask & study["threshold"].isna()] if "threshold" not in sel else study[mask]
        if part.empty:
            raise ValueError(f"the study has no curve {dict(sel)} at swaps >= {min_swaps}")
        if part["swaps"].duplicated().any():
            raise ValueError(f"the selection {dict(sel)} matches several curves; name them fully")
        return part.set_index("swaps")

    a, b = curve(first), curve(second)
    if not a.index.equals(b.index):
        raise ValueError("the two curves cover different swap counts")
    diff = a["value"] - b["value"]
    var = a["sd"] ** 2 / a["n"] + b["sd"] ** 2 / b["n"]
    return float(diff.mean()), float(np.sqrt(var.sum()) / diff.size)


def level_summary(
    study: pd.DataFrame, level_counts: pd.DataFrame, labels: Mapping[str, str] = PAPER_METRICS
) -> pd.DataFrame:
    """One row per reference of a :func:`swap_study`: the share of its items above level 0, the
    mean of each measure over the swap counts ``s >= 1``, and ``NDCNG − NDCG`` on the same
    rankings.

    ``level_counts``: items per level (columns distribution, levels, level, items). With two
    levels the grades are 0 and 1, where NDCG's gain ``2^g − 1`` and NDCNG's ``2^(g/1) − 1`` are
    the same, so the last column is 0 there; it measures what the exponential gain does to NDCG.
    """
    s = study[
        (study["swaps"] >= 1) & study["threshold"].isna() & study["metric"].isin(list(labels))
    ]
    means = s.groupby(["distribution", "levels", "metric"])["value"].mean().unstack("metric")
    means = means[list(labels)].rename(columns=dict(labels))
    c = level_counts
    share = (
        c[c["level"] > 0].groupby(["distribution", "levels"])["items"].sum()
        / c.groupby(["distribution", "levels"])["items"].sum()
    ).rename("share above level 0")
    out = means.join(share, how="left")
    out["NDCNG − NDCG"] = out[labels["NDCNG"]] - out[labels["nDCG(gain=exp)"]]
    return out[["share above level 0", *dict(labels).values(), "NDCNG − NDCG"]]


def level_count_table(levels: Sequence[int], n_items: int = 100, seed: int = 0) -> pd.DataFrame:
    """Items per level of every reference of the study (:func:`study_reference`), one row per
    distribution, level count and level: distribution, levels, level, items (Figs. 2–3)."""
    rows = [
        {"distribution": dist, "levels": n, "level": k, "items": int(c)}
        for dist in DISTRIBUTIONS
        for n in levels
        for k, c in enumerate(
            np.bincount(study_reference(dist, n, n_items, seed).astype(int), minlength=n)
        )
    ]
    return pd.DataFrame(rows)


@analyses.analysis
def swap_studies(settings: Settings) -> dict[str, pd.DataFrame]:
    """The chapter's two swap studies: ``swap_study`` on integer levels, with MAP at every
    threshold and the linear-gain ``nDCG`` besides the paper's measures, and
    ``swap_study_unit`` on the same levels spread over [0, 1] (the paper's measures only)."""
    s = settings
    kw: dict[str, Any] = {
        "n_items": s.n_items,
        "max_swaps": s.max_swaps,
        "repetitions": s.repetitions,
        "seed": s.seed,
    }
    study = swap_study(s.levels, metrics=[*PAPER_METRICS, "nDCG"], **kw)
    unit = swap_study(s.levels, metrics=list(PAPER_METRICS), thresholds=False, scale="unit", **kw)
    return {"swap_study": study, "swap_study_unit": unit}


@analyses.analysis
def one_swap_study(settings: Settings) -> pd.DataFrame:
    """:func:`one_swap_check` of every reference of the chapter's study (``check_draws``
    single-swap rankings each)."""
    s = settings
    return one_swap_check(s.levels, n_items=s.n_items, draws=s.check_draws, seed=s.seed)


def single_swap_study(settings: Settings) -> pd.DataFrame:
    """:func:`single_swap_scores` of the uniform reference with ``show_levels`` levels."""
    s = settings
    return single_swap_scores(study_reference("uniform", s.show_levels, s.n_items, s.seed))


def one_swap_table(check: pd.DataFrame) -> pd.DataFrame:
    """A :func:`one_swap_check` frame side by side: exact mean, simulated mean and ``z`` per
    measure (columns) for each reference (rows), rounded to four decimals."""
    return check.pivot_table(
        index=["distribution", "levels"], columns="metric", values=["exact", "simulated", "z"]
    ).round(4)
