"""Multi-graded relevance: the experiments of Scheel, Lommatzsch & Albayrak (2011).

The metrics themselves live in :mod:`recmeta.metrics` (``muAP``, ``NDCNG``, ``nDCG(gain=exp)``,
``AP``); this module builds the inputs the paper feeds them and collects the results.

* **The artificial swap study** (their sec. 2.1, Figs. 4–5): a reference ranking of 100 items
  graded on 2, 10, 20 or 50 levels (:func:`reference_grades`, uniform or non-uniform level
  distribution), test rankings made by ``s`` random pair swaps (:func:`swap_permutations`), the
  mean of each measure over many repetitions against ``s`` (:func:`swap_study`).
* **Rating scales** (their sec. 3.2, Table 2): map ratings to grades whose irrelevant level is 0
  and stretch the scale (:func:`to_grades`), then evaluate the same runs on every version of the
  judgments (:func:`scale_study`).
* **Virtual users** (their sec. 2.2, Figs. 7–8): one system's scores, cut into graded levels,
  serve as the reference judgments for the others (:func:`virtual_judgments`,
  :func:`virtual_user_study`).

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
    "PAPER_METRICS",
    "level_weights",
    "level_counts",
    "reference_grades",
    "swap_permutations",
    "swap_rankings",
    "study_reference",
    "swap_study",
    "single_swaps",
    "score_permutations",
    "to_grades",
    "scale_study",
    "quantise_levels",
    "virtual_judgments",
    "candidate_items",
    "virtual_user_study",
    "plot_swap_study",
    "plot_thresholds",
]

PAPER_LEVELS = (2, 10, 20, 50)
"""Numbers of relevance levels of the paper's artificial reference rankings."""

DISTRIBUTIONS = ("uniform", "non-uniform")

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
    rng: np.random.Generator | int | None = None,
) -> np.ndarray:
    """Grades of an artificial reference ranking, best first: integers ``n_levels - 1 .. 0``.

    Level counts from :func:`level_counts`; successive levels are 1 apart, as the paper assumes
    for ordinal scales (sec. 2.2). Being sorted, the ranking is ideal: every measure scores it 1.
    """
    counts = level_counts(n_items, n_levels, distribution, rng)
    return np.repeat(np.arange(n_levels, dtype=np.float64), counts)[::-1].copy()


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
            out[f"AP@t={t:g}"] = score_matrices(judgments.with_threshold(t), runs, ["AP"])["AP"][0]
    return out


def study_reference(distribution: str, n_levels: int, n_items: int = 100, seed: int = 0) -> np.ndarray:
    """The reference ranking :func:`swap_study` uses for one setting (its own random stream,
    seeded by ``seed``, the distribution and the number of levels)."""
    if distribution not in DISTRIBUTIONS:
        raise ValueError(f"distribution must be one of {DISTRIBUTIONS}, got {distribution!r}")
    rng = np.random.default_rng([seed, DISTRIBUTIONS.index(distribution), n_levels, 0])
    return reference_grades(n_items, n_levels, distribution, rng)


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
    progress: bool = True,
) -> pd.DataFrame:
    """The artificial study of Scheel et al. (sec. 2.1 and 4, Figs. 4–5).

    For each distribution and number of levels, one reference ranking (:func:`study_reference`)
    and ``repetitions`` test rankings for every swap count ``0 .. max_swaps``; each measure is
    averaged over the repetitions. With ``thresholds``, also MAP at every threshold ``t`` (the
    AP of "relevant = grade >= t"), reported as metric ``"MAP"`` with its ``threshold``.

    Returns a tidy frame: distribution, levels, swaps, metric, threshold (NaN but for MAP),
    value (mean over repetitions), sd (standard deviation over repetitions).
    """
    from tqdm import tqdm

    settings = [(d, n) for d in distributions for n in levels]
    parts = []
    for dist, n_levels in tqdm(settings, desc="swap study", **({} if progress else {"disable": True})):
        reference = study_reference(dist, n_levels, n_items, seed)
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
        parts.append(long.assign(distribution=dist, levels=n_levels))
    cols = ["distribution", "levels", "swaps", "metric", "threshold", "value", "sd"]
    return pd.concat(parts, ignore_index=True)[cols]


# ---------------------------------------------------------------------- rating scales
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
) -> pd.DataFrame:
    """Evaluate the same runs against several versions of the same test ratings.

    ``scales`` maps a name to a function ratings -> grades (e.g. ``lambda df: to_grades(df,
    factor=2)``). ``runs`` is a tidy frame (system, user, item, score or rank) as
    :meth:`recmeta.metrics.Runs.from_frame` reads it. ``threshold="lowest"`` sets τ to the lowest
    positive grade of each version, so the same users enter every average. Returns a tidy frame:
    scale, system, metric, value (mean over users).
    """
    from .metrics import Judgments, Runs, evaluate

    parts = []
    for name, transform in scales.items():
        grades = transform(test)
        g = grades["rating"].to_numpy(np.float64)
        if (g < 0).any():
            raise ValueError(f"scale {name!r} gives negative grades; map the irrelevant level to 0")
        tau = float(g[g > 0].min()) if threshold == "lowest" else float(threshold)
        j = Judgments.from_frame(grades, threshold=tau)
        r = Runs.from_frame(runs, j)
        parts.append(evaluate(j, r, list(metrics)).assign(scale=name))
    return pd.concat(parts, ignore_index=True)[["scale", "system", "metric", "value"]]


# ---------------------------------------------------------------------- virtual users
def quantise_levels(
    scores: pd.DataFrame, n_levels: int | None, *, score_col: str = "score"
) -> np.ndarray:
    """Each user's scores cut into graded levels, 0 for the user's lowest score.

    ``n_levels = L``: ``L`` equal-width ordinal levels ``0 .. L-1`` over the user's own score
    range, ``level = min(floor(L (s - min_u) / (max_u - min_u)), L - 1)`` — the paper's ordinal
    virtual user (strategy 1, 9 levels). ``None``: the raw distance ``s - min_u`` — its real-valued
    virtual user (strategy 9), whose levels are as many as the distinct scores and unevenly
    spaced. A user whose scores are all equal gets 0 everywhere (no relevant item).
    """
    if "user" not in scores.columns or score_col not in scores.columns:
        raise KeyError(f"scores need columns 'user' and {score_col!r}; got {list(scores.columns)}")
    s = scores[score_col].to_numpy(np.float64)
    if not np.isfinite(s).all():
        raise ValueError(f"{int((~np.isfinite(s)).sum())} scores are NaN or infinite; a virtual "
                         "user must grade every candidate (fill unscored items first)")
    if n_levels is not None and n_levels < 2:
        raise ValueError(f"n_levels must be >= 2 or None, got {n_levels}")
    users = scores["user"].to_numpy()
    lo = pd.Series(s).groupby(users).transform("min").to_numpy()
    hi = pd.Series(s).groupby(users).transform("max").to_numpy()
    if n_levels is None:
        return s - lo
    span = np.where(hi > lo, hi - lo, 1.0)
    return np.minimum(np.floor(n_levels * (s - lo) / span), n_levels - 1).astype(np.float64)


def virtual_judgments(
    scores: pd.DataFrame, n_levels: int | None, *, score_col: str = "score"
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
        "rating": quantise_levels(scores, n_levels, score_col=score_col),
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

    Returns a tidy frame: levels (``n``, or -1 for raw scores), system, metric, threshold, value.
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
    for n in levels:
        grades = virtual_judgments(ref, n)
        positive = grades["rating"].to_numpy()[grades["rating"].to_numpy() > 0]
        if positive.size == 0:
            raise ValueError(f"the virtual user of {reference!r} grades nothing above 0")
        j = Judgments.from_frame(grades, threshold=float(positive.min()))
        runs = Runs.from_frame(scores[["system", "user", "item", "score"]], j)
        res = evaluate(j, runs, list(metrics)).assign(threshold=np.nan)
        if thresholds:
            for t in np.unique(positive):
                ap = evaluate(j.with_threshold(t), runs, ["AP"])
                res = pd.concat([res, ap.assign(metric="MAP", threshold=t)], ignore_index=True)
        parts.append(res.assign(levels=-1 if n is None else int(n)))
    cols = ["levels", "system", "metric", "threshold", "value"]
    return pd.concat(parts, ignore_index=True)[cols]


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
