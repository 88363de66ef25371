"""Multi-graded relevance: the experiments of Scheel, Lommatzsch & Albayrak (2011).

The metrics themselves live in :mod:`recmeta.metrics` (``muAP``, ``NDCNG``, ``nDCG(gain=exp)``,
``AP``); this module builds the inputs the paper feeds them and collects the results.

* **The artificial swap study** (their sec. 2.1, Figs. 4–5): a reference ranking of 100 items
  graded on 2, 10, 20 or 50 levels (:func:`reference_grades`, uniform or non-uniform level
  distribution, integer levels or levels spread over [0, 1]), test rankings made by ``s`` random
  pair swaps (:func:`swap_permutations`), the mean of each measure over many repetitions against
  ``s`` (:func:`swap_study`); the difference of two curves with its standard error
  (:func:`curve_difference`); the exact single-swap expectation against the sampler
  (:func:`single_swap_scores`, :func:`one_swap_check`).
* **Rating scales** (their sec. 3.2, Table 2): map ratings to grades whose irrelevant level is 0
  and stretch the scale (:func:`to_grades`), then evaluate the same runs on every version of the
  judgments (:func:`scale_study`).
* **Virtual users** (their sec. 2.2, Figs. 7–8): one system's scores, cut into graded levels,
  serve as the reference judgments for the others (:func:`virtual_judgments`,
  :func:`virtual_user_study`); the correlation of two systems' scores with a bootstrap over users
  (:func:`pearson_over_users`).
* **Sentences** for the chapter's prose, computed from the results (``describe_*``).

Every loop here runs over swap steps, grade levels or scale versions, never over users or
rankings: those are rows of one array.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import numpy as np
import pandas as pd

__all__ = [
    "PAPER_LEVELS",
    "DISTRIBUTIONS",
    "SCALES",
    "PAPER_METRICS",
    "level_weights",
    "level_counts",
    "reference_grades",
    "swap_permutations",
    "swap_rankings",
    "study_reference",
    "swap_study",
    "curve_difference",
    "single_swaps",
    "single_swap_scores",
    "one_swap_check",
    "score_permutations",
    "level_summary",
    "top_level_share",
    "rating_scale",
    "to_grades",
    "scale_study",
    "relative_changes",
    "order_agreement",
    "closest_pair_gap",
    "quantise_levels",
    "levels_per_user",
    "virtual_judgments",
    "candidate_items",
    "virtual_user_study",
    "pearson_over_users",
    "describe_rating_scale",
    "describe_one_swap",
    "describe_reordering",
    "plot_swap_study",
    "plot_thresholds",
]

PAPER_LEVELS = (2, 10, 20, 50)
"""Numbers of relevance levels of the paper's artificial reference rankings."""

DISTRIBUTIONS = ("uniform", "non-uniform")

SCALES = ("integer", "unit")
"""Values of the levels of an artificial reference: ``integer`` levels ``0, 1, ..., L - 1`` (the
chapter's reading of the paper, whose level values are not given), or ``unit`` levels
``k / (L - 1)`` spread over [0, 1] (the same ranking with small gains)."""

PAPER_METRICS = {"muAP": "µAP", "nDCG(gain=exp)": "NDCG", "NDCNG": "NDCNG"}
"""The paper's three measures as metric-engine names, with the label the chapter shows.

The paper's NDCG (eq. 3) uses the exponential gain 2^r − 1; :mod:`recmeta.metrics` calls it
``nDCG(gain=exp)``. None of the three takes a cut-off here: the rankings are scored whole.
"""


# ---------------------------------------------------------------------- µAP weights
def level_weights(grades: Sequence[float] | np.ndarray) -> pd.Series:
    """The weights µAP gives each threshold: ``d_t / sum_{t in L} d_t`` (Scheel et al., eq. 4).

    ``L`` is the set of positive grades present, ``d_t = t - t_prev`` the distance to the next
    lower level of ``L`` (to 0 for the lowest), so the weights sum to 1 and ``sum d_t = max L``.
    For the paper's levels 0.0, 0.3, 1.0 the weights are 0.3 and 0.7.
    """
    g = np.asarray(grades, dtype=np.float64)
    if g.size == 0 or not np.isfinite(g).all() or (g < 0).any():
        raise ValueError("grades must be a non-empty array of finite values >= 0 "
                         "(shift the scale so that its irrelevant level is 0; see to_grades)")
    levels = np.unique(g[g > 0])
    if levels.size == 0:
        raise ValueError("no positive grade: µAP is undefined without a relevant level")
    d = np.diff(levels, prepend=0.0)
    return pd.Series(d / levels[-1], index=pd.Index(levels, name="threshold"), name="weight")


# ---------------------------------------------------------------------- reference rankings
def level_counts(
    n_items: int, n_levels: int, distribution: str = "uniform",
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
    n_items: int = 100, n_levels: int = 10, distribution: str = "uniform",
    rng: np.random.Generator | int | None = None, scale: str = "integer",
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
                mu, sd, got = float(exact[m].mean()), float(exact[m].std(ddof=0)), float(sim[m].mean())
                se = sd / np.sqrt(draws)
                if se > 0:
                    z = (got - mu) / se
                else:  # every single swap scores the same: the mean is exact
                    z = 0.0 if np.isclose(got, mu, rtol=0, atol=1e-12) else np.inf
                rows.append({"distribution": dist, "levels": n_levels, "metric": m, "exact": mu,
                             "sd": sd, "simulated": got, "draws": draws, "z": z})
    return pd.DataFrame(rows)


def swap_rankings(
    reference: np.ndarray, swap_counts: Sequence[int], repetitions: int,
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
    from .metrics import Judgments, Runs, score_matrices

    positive = np.unique(reference[reference > 0])
    grades = np.broadcast_to(reference, perms.shape)
    judgments = Judgments.from_grades(grades, threshold=float(positive.min()))
    runs = Runs.from_orders(perms, judgments)
    out = {name: m[0] for name, m in score_matrices(judgments, runs, list(metrics)).items()}
    if thresholds:
        for t in positive:  # loop over levels; the runs' entry look-up is shared
            out[f"AP@t={float(t)!r}"] = score_matrices(judgments.with_threshold(t), runs, ["AP"])["AP"][0]
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
    from tqdm import tqdm

    settings = [(d, n) for d in distributions for n in levels]
    parts = []
    for dist, n_levels in tqdm(settings, desc="swap study", **({} if progress else {"disable": True})):
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
            is_map, pd.to_numeric(long["metric"].str.removeprefix("AP@t="), errors="coerce"),
            np.nan)
        long.loc[is_map, "metric"] = "MAP"
        parts.append(long.assign(distribution=dist, levels=n_levels, n=repetitions))
    cols = ["distribution", "levels", "swaps", "metric", "threshold", "value", "sd", "n"]
    return pd.concat(parts, ignore_index=True)[cols]


def curve_difference(
    study: pd.DataFrame, first: Mapping[str, object], second: Mapping[str, object],
    *, min_swaps: int = 1,
) -> tuple[float, float]:
    """Mean over swap counts ``s >= min_swaps`` of ``mean_first(s) - mean_second(s)``, and its
    standard error.

    ``first`` and ``second`` select one curve of a :func:`swap_study` frame each, e.g.
    ``{"distribution": "uniform", "levels": 2, "metric": "nDCG(gain=exp)"}``. The two curves
    must come from independent rankings (two settings of the study: each has its own random
    stream). Every row of the study is an independent ranking, so with ``S`` swap counts and
    ``n`` repetitions the standard error is ``sqrt(sum_s (sd_first(s)^2 + sd_second(s)^2) / n) / S``.
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


def level_summary(study: pd.DataFrame, level_counts: pd.DataFrame,
                  labels: Mapping[str, str] = PAPER_METRICS) -> pd.DataFrame:
    """One row per reference of a :func:`swap_study`: the share of its items above level 0, the
    mean of each measure over the swap counts ``s >= 1``, and ``NDCNG − NDCG`` on the same rankings.

    ``level_counts``: items per level (columns distribution, levels, level, items). With two
    levels the grades are 0 and 1, where NDCG's gain ``2^g − 1`` and NDCNG's ``2^(g/1) − 1`` are
    the same, so the last column is 0 there; it measures what the exponential gain does to NDCG.
    """
    s = study[(study["swaps"] >= 1) & study["threshold"].isna() & study["metric"].isin(list(labels))]
    means = s.groupby(["distribution", "levels", "metric"])["value"].mean().unstack("metric")
    means = means[list(labels)].rename(columns=dict(labels))
    c = level_counts
    share = (c[c["level"] > 0].groupby(["distribution", "levels"])["items"].sum()
             / c.groupby(["distribution", "levels"])["items"].sum()).rename("share above level 0")
    out = means.join(share, how="left")
    out["NDCNG − NDCG"] = out[labels["NDCNG"]] - out[labels["nDCG(gain=exp)"]]
    return out[["share above level 0", *dict(labels).values(), "NDCNG − NDCG"]]


def top_level_share(reference: np.ndarray) -> float:
    """Share of the exponential gain ``sum 2^g - 1`` that the items of the top grade hold.

    With integer levels this is where NDCG's weight goes: for 50 uniform levels (2 items each)
    the top level holds about half of all the gain (Scheel et al., eq. 3).
    """
    g = np.asarray(reference, dtype=np.float64)
    gains = np.exp2(g) - 1.0
    total = gains.sum()
    if total <= 0:
        raise ValueError("the reference has no positive grade")
    return float(gains[g == g.max()].sum() / total)


# ---------------------------------------------------------------------- rating scales
def rating_scale(ratings: pd.DataFrame, column: str = "rating") -> dict[str, float]:
    """The rating scale of a frame: lowest and highest rating, the step between successive
    values, the number of distinct values, and ``lowest_relevant``, the lowest rating above the
    minimum.

    :func:`to_grades` maps the lowest rating to grade 0, so every higher rating has a positive
    grade. µAP's lowest threshold is a user's lowest positive grade (Scheel et al., eq. 4), so at
    that threshold every rating from ``lowest_relevant`` up counts as relevant (2 stars on a
    1–5 scale).
    """
    if column not in ratings.columns:
        raise KeyError(f"ratings frame has no column {column!r}; it has {list(ratings.columns)}")
    values = np.unique(ratings[column].to_numpy(np.float64))
    if values.size < 2:
        raise ValueError("the ratings hold fewer than two distinct values: no graded relevance")
    return {"lowest": float(values[0]), "highest": float(values[-1]),
            "step": float(np.diff(values).min()), "levels": int(values.size),
            "lowest_relevant": float(values[1])}


def to_grades(
    ratings: pd.DataFrame, *, irrelevant: float | None = None, factor: float = 1.0,
    column: str = "rating",
) -> pd.DataFrame:
    """Ratings as grades whose irrelevant level is 0: ``grade = factor · max(r − irrelevant, 0)``.

    µAP and NDCG-type gains need the irrelevant level at 0 (Scheel et al., sec. 3.2: "the
    relevance scores must be shifted"). ``irrelevant`` defaults to the lowest rating of the frame
    (ML-100K's 1 star becomes grade 0 and 5 stars grade 4, the 0–4 scale of the paper's sec. 2);
    ratings at or below it all become 0. ``factor`` stretches the scale without changing any
    preference: ``factor=2`` is the doubled scale of the paper's Table 2.
    """
    if column not in ratings.columns:
        raise KeyError(f"ratings frame has no column {column!r}; it has {list(ratings.columns)}")
    r = ratings[column]
    if not pd.api.types.is_numeric_dtype(r) or not np.isfinite(r.to_numpy(np.float64)).all():
        raise ValueError(f"column {column!r} must hold finite numbers; clean the ratings first")
    if not (np.isfinite(factor) and factor > 0):
        raise ValueError(f"factor must be a positive number (a rescaling keeps the order), got {factor}")
    if irrelevant is None:
        if len(r) == 0:
            raise ValueError("empty ratings frame: give irrelevant= explicitly")
        irrelevant = float(r.min())
    grades = factor * np.maximum(r.to_numpy(np.float64) - float(irrelevant), 0.0)
    return ratings.assign(**{column: grades})


def scale_study(
    test: pd.DataFrame,
    runs: pd.DataFrame,
    scales: Mapping[str, Callable[[pd.DataFrame], pd.DataFrame]],
    metrics: Sequence[str],
    *,
    threshold: float | str = "lowest",
    per_user: bool = False,
) -> pd.DataFrame:
    """Evaluate the same runs against several versions of the same test ratings.

    ``scales`` maps a name to a function ratings -> grades (e.g. ``lambda df: to_grades(df,
    factor=2)``). ``runs`` is a tidy frame (system, user, item, score or rank) as
    :meth:`recmeta.metrics.Runs.from_frame` reads it. ``threshold="lowest"`` sets τ to the lowest
    positive grade of each version, so the same users enter every average. Returns a tidy frame:
    scale, system, metric, value (mean over users) — with ``per_user``, scale, system, user,
    metric, value for every evaluated user.
    """
    from .metrics import Judgments, Runs, evaluate

    parts = []
    first, r = None, None  # every version judges the same pairs: one index, one set of runs
    for name, transform in scales.items():
        grades = transform(test)
        g = grades["rating"].to_numpy(np.float64)
        if (g < 0).any():
            raise ValueError(f"scale {name!r} gives negative grades; map the irrelevant level to 0")
        tau = float(g[g > 0].min()) if threshold == "lowest" else float(threshold)
        if first is None:
            j = first = Judgments.from_frame(grades, threshold=tau)
            r = Runs.from_frame(runs, j)
        else:
            j = Judgments.from_frame(grades, threshold=tau, users=first.users, items=first.items)
        parts.append(evaluate(j, r, list(metrics), per_user=per_user).assign(scale=name))
    cols = ["scale", "system", *(["user"] if per_user else []), "metric", "value"]
    return pd.concat(parts, ignore_index=True)[cols]


def relative_changes(results: pd.DataFrame, reference: str = "native") -> pd.DataFrame:
    """Each system's value on every other scale against its value on the ``reference`` scale.

    ``results``: a :func:`scale_study` frame of means (an optional ``dataset`` column is kept).
    Returns the rows of the other scales with columns ``reference_value`` and
    ``relative_change = value / reference_value - 1``.
    """
    keys = [c for c in ("dataset", "system", "metric") if c in results.columns]
    base = results[results["scale"] == reference].set_index(keys)["value"].rename("reference_value")
    if base.empty:
        raise ValueError(f"no rows of the reference scale {reference!r}")
    other = results[results["scale"] != reference].join(base, on=keys)
    return other.assign(relative_change=other["value"] / other["reference_value"] - 1)


def order_agreement(results: pd.DataFrame, reference: str = "native") -> pd.DataFrame:
    """Kendall's τ-b between the systems' order on the ``reference`` scale and on every other
    scale, per metric (and dataset, if the frame has that column); τ = 1: the same order."""
    from scipy.stats import kendalltau

    keys = [c for c in ("dataset", "metric") if c in results.columns]
    rows = []
    for key, part in results.groupby(keys, sort=False):
        wide = part.pivot_table(index="system", columns="scale", values="value")
        for scale in (c for c in wide.columns if c != reference):
            tau = kendalltau(wide[reference], wide[scale]).statistic
            rows.append({**dict(zip(keys, key if isinstance(key, tuple) else (key,))),
                         "scale": scale, "tau": float(tau)})
    return pd.DataFrame(rows, columns=[*keys, "scale", "tau"])


def closest_pair_gap(values: pd.Series) -> tuple[float, str, str]:
    """The smallest relative gap between two systems' values, ``(b - a) / a`` for the adjacent
    pair ``a <= b``, with the two systems (lower first).

    A change of scale that moves every value by less than half this gap cannot reorder the
    systems; a larger one may.
    """
    v = values.dropna().sort_values()
    if v.size < 2:
        raise ValueError("need at least two systems")
    gaps = v.to_numpy()[1:] / v.to_numpy()[:-1] - 1
    k = int(np.argmin(gaps))
    return float(gaps[k]), str(v.index[k]), str(v.index[k + 1])


# ---------------------------------------------------------------------- virtual users
def quantise_levels(
    scores: pd.DataFrame, n_levels: int | None, *, score_col: str = "score", scope: str = "user"
) -> np.ndarray:
    """Scores cut into graded levels, 0 for the lowest score.

    ``n_levels = L``: ``L`` equal-width ordinal levels ``0 .. L-1``,
    ``level = min(floor(L (s - lo) / (hi - lo)), L - 1)`` — the paper's ordinal virtual user
    (strategy 1, 9 levels). ``None``: the raw distance ``s - lo`` — its real-valued virtual user
    (strategy 9), whose levels are as many as the distinct scores and unevenly spaced.

    ``scope="user"`` (default): ``lo``, ``hi`` are the user's own lowest and highest score, so
    every user's top candidate reaches level ``L - 1``; a user whose scores are all equal gets 0
    everywhere (no relevant item). ``scope="global"``: one range over all users, as the paper's
    levels are (its TF scores are counts on one scale for every query), so a user may use only a
    few of the levels and may have no positive grade.
    """
    if "user" not in scores.columns or score_col not in scores.columns:
        raise KeyError(f"scores need columns 'user' and {score_col!r}; got {list(scores.columns)}")
    s = scores[score_col].to_numpy(np.float64)
    if not np.isfinite(s).all():
        raise ValueError(f"{int((~np.isfinite(s)).sum())} scores are NaN or infinite; a virtual "
                         "user must grade every candidate (fill unscored items first)")
    if n_levels is not None and n_levels < 2:
        raise ValueError(f"n_levels must be >= 2 or None, got {n_levels}")
    if scope not in ("user", "global"):
        raise ValueError(f"scope must be 'user' or 'global', got {scope!r}")
    if scope == "global":
        lo = np.full(s.shape, s.min(initial=0.0))
        hi = np.full(s.shape, s.max(initial=0.0))
    else:
        users = scores["user"].to_numpy()
        lo = pd.Series(s).groupby(users).transform("min").to_numpy()
        hi = pd.Series(s).groupby(users).transform("max").to_numpy()
    if n_levels is None:
        return s - lo
    span = np.where(hi > lo, hi - lo, 1.0)
    return np.minimum(np.floor(n_levels * (s - lo) / span), n_levels - 1).astype(np.float64)


def levels_per_user(grades: pd.DataFrame, column: str = "rating") -> pd.Series:
    """Number of distinct grades each user's judgments use (level 0 included)."""
    missing = [c for c in ("user", column) if c not in grades.columns]
    if missing:
        raise KeyError(f"grades lack column(s) {missing}")
    return grades.groupby("user")[column].nunique().rename("levels")


def virtual_judgments(
    scores: pd.DataFrame, n_levels: int | None, *, score_col: str = "score", scope: str = "user"
) -> pd.DataFrame:
    """Graded judgments (user, item, rating) from one system's scores: a "virtual user".

    Scheel et al. (sec. 2.2) take the scores of a retrieval strategy as reference ratings when a
    collection has too few relevance levels; the levels come from :func:`quantise_levels`.
    """
    missing = [c for c in ("user", "item", score_col) if c not in scores.columns]
    if missing:
        raise KeyError(f"scores lack column(s) {missing}; they have {list(scores.columns)}")
    return pd.DataFrame({
        "user": scores["user"].to_numpy(), "item": scores["item"].to_numpy(),
        "rating": quantise_levels(scores, n_levels, score_col=score_col, scope=scope),
    })


def candidate_items(
    train: pd.DataFrame, n_items: int, *, users: Sequence | None = None, seed: int = 0
) -> pd.DataFrame:
    """``n_items`` items per user, drawn uniformly without replacement from the training items
    the user has not rated: the candidates every system ranks for a virtual user.

    ``users`` defaults to every training user. Returns a frame (user, item) sorted by user.
    Vectorised: one random key per (user, item), the user's rated items pushed to the end.
    """
    missing = [c for c in ("user", "item") if c not in train.columns]
    if missing:
        raise KeyError(f"the training frame lacks column(s) {missing}")
    items = np.sort(pd.unique(train["item"]))
    users = np.sort(pd.unique(train["user"])) if users is None else np.asarray(users)
    unknown = ~np.isin(users, train["user"].to_numpy())
    if unknown.any():
        raise ValueError(f"{int(unknown.sum())} users have no training ratings, e.g. {users[unknown][:3].tolist()}")
    rated = np.zeros((users.size, items.size), dtype=bool)
    sub = train[train["user"].isin(users)]
    rated[pd.Index(users).get_indexer(sub["user"]), np.searchsorted(items, sub["item"].to_numpy())] = True
    free = items.size - rated.sum(axis=1)
    if n_items < 1 or (free < n_items).any():
        raise ValueError(f"n_items must be between 1 and the fewest unrated items of a user ({free.min()}), "
                         f"got {n_items}")
    keys = np.random.default_rng(seed).random(rated.shape)
    keys[rated] = np.inf
    pick = np.sort(np.argpartition(keys, n_items - 1, axis=1)[:, :n_items], axis=1)
    return pd.DataFrame({"user": np.repeat(users, n_items), "item": items[pick.ravel()]})


def virtual_user_study(
    scores: pd.DataFrame,
    reference: str,
    levels: Sequence[int | None],
    metrics: Sequence[str] = tuple(PAPER_METRICS),
    *,
    thresholds: bool = False,
    unscored: str = "raise",
    per_user: bool = False,
) -> pd.DataFrame:
    """Evaluate every system against the virtual user made of ``reference``'s scores.

    ``scores`` is a tidy frame (system, user, item, score) in which every system scores the same
    candidate items of each user; each system's ranking of the candidates (by score, ties as in
    :class:`recmeta.metrics.Runs`) is evaluated against the graded judgments
    ``virtual_judgments(scores of reference, n)`` for each ``n`` in ``levels``, the analogue of
    the paper's Figs. 7 (9 levels) and 8 (158 levels). τ is the lowest positive grade, so that
    every user with two distinct reference scores is evaluated. With ``thresholds``, MAP at every
    threshold is added as metric ``"MAP"`` with its ``threshold``.

    A system may leave candidates unscored (NaN, e.g. k-NN without neighbours): with
    ``unscored="last"`` they go to the end of its ranking; the default raises. The reference
    system must score every candidate.

    Returns a tidy frame: levels (``n``, or -1 for raw scores), system, metric, threshold, value
    (mean over users) — with ``per_user``, a ``user`` column and one row per evaluated user.
    """
    from .metrics import Judgments, Runs, evaluate

    missing = [c for c in ("system", "user", "item", "score") if c not in scores.columns]
    if missing:
        raise KeyError(f"scores lack column(s) {missing}; they have {list(scores.columns)}")
    if unscored not in ("raise", "last"):
        raise ValueError(f"unscored must be 'raise' or 'last', got {unscored!r}")
    nan = scores["score"].isna()
    if nan.any():
        if unscored == "raise" or nan[scores["system"] == reference].any():
            bad = ", ".join(map(str, pd.unique(scores.loc[nan, "system"])))
            raise ValueError(f"{int(nan.sum())} candidate scores are NaN (systems: {bad}); pass "
                             "unscored='last' to rank them last (not possible for the reference)")
        scores = scores.assign(score=scores["score"].fillna(-np.inf))
    ref = scores[scores["system"] == reference]
    if ref.empty:
        known = ", ".join(map(str, pd.unique(scores["system"])))
        raise ValueError(f"no scores of reference system {reference!r}; systems: {known}")
    pairs = pd.MultiIndex.from_frame(scores[["user", "item"]])
    ref_pairs = pd.MultiIndex.from_frame(ref[["user", "item"]])
    if not pairs.isin(ref_pairs).all():
        raise ValueError(f"some systems score (user, item) pairs that {reference!r} does not; "
                         "every system must score the same candidates")
    parts = []
    first, runs = None, None  # every level count grades the same pairs: build the runs once
    for n in levels:
        grades = virtual_judgments(ref, n)
        positive = grades["rating"].to_numpy()[grades["rating"].to_numpy() > 0]
        if positive.size == 0:
            raise ValueError(f"the virtual user of {reference!r} grades nothing above 0")
        if first is None:
            j = first = Judgments.from_frame(grades, threshold=float(positive.min()))
            runs = Runs.from_frame(scores[["system", "user", "item", "score"]], j)
        else:
            j = Judgments.from_frame(grades, threshold=float(positive.min()), users=first.users,
                                     items=first.items)
        res = evaluate(j, runs, list(metrics), per_user=per_user).assign(threshold=np.nan)
        if thresholds:
            for t in np.unique(positive):
                ap = evaluate(j.with_threshold(t), runs, ["AP"], per_user=per_user)
                res = pd.concat([res, ap.assign(metric="MAP", threshold=t)], ignore_index=True)
        parts.append(res.assign(levels=-1 if n is None else int(n)))
    cols = ["levels", "system", *(["user"] if per_user else []), "metric", "threshold", "value"]
    return pd.concat(parts, ignore_index=True)[cols]


def pearson_over_users(
    x: np.ndarray, y: np.ndarray, users: np.ndarray, *, n_resamples: int = 1999, seed: int = 0,
    counts: np.ndarray | None = None,
) -> tuple[float, np.ndarray]:
    """Pearson's r of ``x`` and ``y`` over all pairs, and its bootstrap replicates over users.

    Pairs with a NaN on either side are dropped. A replicate draws the users with replacement
    (multinomial ``counts``, resamples × users, in the order of ``pandas.factorize(users)``;
    drawn from ``seed`` unless given) and keeps every pair of each drawn user, so the pairs of a
    user stay together. Vectorised: per-user sums of ``1, x, y, x², y², xy`` (after centring),
    one matrix product for all replicates. Scheel et al. (sec. 2.2) report r = 0.96 between
    their two virtual users.
    """
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    users = np.asarray(users)
    if not (x.shape == y.shape == users.shape) or x.ndim != 1:
        raise ValueError(f"x, y and users must be 1-d of one length, got {x.shape}, {y.shape}, {users.shape}")
    codes, uniq = pd.factorize(users)
    ok = np.isfinite(x) & np.isfinite(y)
    if ok.sum() < 3:
        raise ValueError("fewer than three pairs without NaN")
    xc = x[ok] - x[ok].mean()
    yc = y[ok] - y[ok].mean()
    columns = (np.ones_like(xc), xc, yc, xc * xc, yc * yc, xc * yc)
    sums = np.stack([np.bincount(codes[ok], weights=w, minlength=uniq.size) for w in columns], axis=1)

    def pearson(s: np.ndarray) -> np.ndarray:
        n, sx, sy, sxx, syy, sxy = s.T
        with np.errstate(invalid="ignore", divide="ignore"):
            return (sxy - sx * sy / n) / np.sqrt((sxx - sx * sx / n) * (syy - sy * sy / n))

    r = float(pearson(sums.sum(axis=0)[None, :])[0])
    if counts is None:
        rng = np.random.default_rng(seed)
        counts = rng.multinomial(uniq.size, np.full(uniq.size, 1.0 / uniq.size), size=int(n_resamples))
    counts = np.asarray(counts, dtype=np.float64)
    if counts.ndim != 2 or counts.shape[1] != uniq.size:
        raise ValueError(f"counts must be resamples × {uniq.size} users, got {counts.shape}")
    return r, pearson(counts @ sums)


# ---------------------------------------------------------------------- sentences
def describe_rating_scale(name: str, ratings: pd.DataFrame, column: str = "rating") -> str:
    """One sentence on a dataset's rating scale and what µAP's lowest threshold makes relevant
    (see :func:`rating_scale`)."""
    f = rating_scale(ratings, column)
    return (f"**{name}**: ratings from {f['lowest']:g} to {f['highest']:g} in steps of "
            f"{f['step']:g} ({f['levels']} distinct values), hence grades from 0 to "
            f"{f['highest'] - f['lowest']:g}; at µAP's lowest threshold every rating of "
            f"{f['lowest_relevant']:g} or more counts as relevant.")


def describe_one_swap(check: pd.DataFrame, bound: float = 3.0,
                      labels: Mapping[str, str] = PAPER_METRICS) -> str:
    """Sentences on a :func:`one_swap_check` frame: the largest ``|z|``, how many exceed
    ``bound``, and how many would by chance (two-sided normal tail ``p`` per comparison)."""
    from scipy.stats import norm

    if check.empty:
        raise ValueError("the check is empty")
    z = check["z"].abs()
    worst = check.loc[z.idxmax()]
    over = int((z > bound).sum())
    n = len(check)
    p = 2 * norm.sf(bound)
    head = (f"Over the {n} comparisons (settings × measures, {int(worst['draws'])} draws each), "
            f"the largest |z| is {z.max():.2f} ({labels.get(worst['metric'], worst['metric'])}, "
            f"{worst['distribution']}, {int(worst['levels'])} levels); {over} exceed {bound:g}, "
            f"where chance alone would give {n * p:.2f} on average.")
    if over == 0:
        return head + (f" The sampler and the scoring agree with the exact expectation within "
                       f"{bound:g} standard errors.")
    return head + (" Not every simulated mean lies within that bound of the exact one: look at the "
                   "settings above before trusting the curves.")


def describe_reordering(results: pd.DataFrame, metric: str = "nDCG(gain=exp)", scale: str = "doubled",
                        labels: Mapping[str, str] = PAPER_METRICS) -> str:
    """Whether a change of scale reorders the systems, per dataset, with the size of the change
    of ``metric`` on ``scale`` beside the smallest relative gap between two systems on the
    native scale. ``results``: :func:`scale_study` means with a ``dataset`` column."""
    taus = order_agreement(results)
    changes = relative_changes(results)
    parts = []
    for ds, part in results.groupby("dataset", sort=False):
        ch = changes[(changes["dataset"] == ds) & (changes["metric"] == metric) & (changes["scale"] == scale)]
        native = part[(part["scale"] == "native") & (part["metric"] == metric)].set_index("system")["value"]
        gap, low, high = closest_pair_gap(native)
        largest = float(ch["relative_change"].abs().max())
        moved = taus[(taus["dataset"] == ds) & (taus["tau"] < 1 - 1e-12)]
        size = "smaller" if largest < gap else "larger"
        text = (f"On {ds}, the {scale} scale changes {labels.get(metric, metric)} by at most "
                f"{largest:.1%}, {size} than the smallest gap between two systems on the native "
                f"scale ({low} and {high}, {gap:.1%} apart); ")
        if moved.empty:
            text += "no change of scale reorders the systems under any measure."
        else:
            which = "; ".join(f"{labels.get(r.metric, r.metric)} on the {r.scale} scale (τ = {r.tau:.3f})"
                              for r in moved.itertuples())
            text += f"the order of the systems changes under {which}."
        parts.append(text)
    return " ".join(parts)


# ---------------------------------------------------------------------- figures
def plot_swap_study(study: pd.DataFrame, distribution: str, labels: Mapping[str, str] = PAPER_METRICS):
    """One panel per measure: mean value against the number of swaps, a line per level count
    (the layout of Scheel et al.'s Figs. 4–5)."""
    import matplotlib.pyplot as plt
    import seaborn as sns

    part = study[(study["distribution"] == distribution) & study["metric"].isin(list(labels))]
    if part.empty:
        raise ValueError(f"the study has no rows for distribution {distribution!r} and {list(labels)}")
    fig, axes = plt.subplots(1, len(labels), figsize=(4 * len(labels), 3.6), sharey=True,
                             constrained_layout=True)
    for ax, (metric, label) in zip(np.atleast_1d(axes), labels.items()):
        sns.lineplot(part[part["metric"] == metric], x="swaps", y="value", hue="levels",
                     palette="viridis", ax=ax, legend=ax is np.atleast_1d(axes)[0])
        ax.set(xlabel="number of random swaps", ylabel=f"mean {label}", title=label)
    np.atleast_1d(axes)[0].legend(title="levels")
    return fig


def plot_thresholds(study: pd.DataFrame, distribution: str, levels: int):
    """MAP at each threshold (thin lines, coloured by threshold) and µAP (black) against swaps."""
    import matplotlib.pyplot as plt
    import seaborn as sns

    part = study[(study["distribution"] == distribution) & (study["levels"] == levels)]
    maps = part[part["metric"] == "MAP"]
    if maps.empty:
        raise ValueError("the study has no MAP rows: run swap_study(..., thresholds=True)")
    fig, ax = plt.subplots(figsize=(6.5, 4), constrained_layout=True)
    sns.lineplot(maps, x="swaps", y="value", hue="threshold", palette="crest", lw=1, ax=ax)
    mu = part[part["metric"] == "muAP"]
    ax.plot(mu["swaps"], mu["value"], color="black", lw=2.2, label="µAP")
    ax.set(xlabel="number of random swaps", ylabel="mean value",
           title=f"MAP per threshold and µAP, {levels} levels ({distribution})")
    ax.legend(title="threshold t", ncol=2, fontsize="small")
    return fig
