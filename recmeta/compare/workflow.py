"""Compare recommenders on one test set: :func:`compare` builds a :class:`~.report.Comparison`.

The workflow applies the five papers of the book in order:

1. per-user metrics from the engine (:mod:`recmeta.metrics`, trec_eval semantics), over the users
   with a relevant test item; a user without a list scores 0 (the coverage penalty of Valcarce
   et al. 2020, §3), and the report says how many such users each system has;
2. the expected value of a random ranking and the value of the popularity ranking under the same
   protocol (Bellogín et al. 2017), as reference lines;
3. all pairs of systems: the paired permutation test (Valcarce et al. 2018; 100,000 permutations
   by default), the paired t and Wilcoxon tests, Holm and Benjamini–Hochberg corrections, and the
   randomised Tukey HSD test;
4. effect sizes with intervals: mean difference (t and bootstrap) and standardised mean
   difference (noncentral t and bootstrap);
5. the number of users a paired t-test needs to detect a difference (Sakai 2016);
6. if the candidates were sampled, the corrected metrics and a warning (Krichene & Rendle 2020).

Inputs are LensKit types (``ItemListCollection`` of recommendations per system, the test
``ItemListCollection``) or tidy frames, or TREC files (:func:`compare_trec`).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from recmeta.metaeval import significance
from recmeta.metaeval.bootstrap import IntervalMethod
from recmeta.metrics import Judgments, Runs, parse_metric, score_matrices

from . import references as refs, sampled as smp, stats as st
from .inputs import as_judgments, as_runs, as_train
from .report import Comparison

__all__ = ["P_VALUES", "compare", "compare_trec"]

#: the p-values that can decide significance (``p_value=``)
P_VALUES = ("permutation", "t", "wilcoxon", "tukey")


def compare(
    recommendations: Mapping[str, Any] | pd.DataFrame | Runs,
    test: Any,
    metrics: Sequence[str] = ("nDCG@10",),
    *,
    threshold: float | None = None,
    train: Any = None,
    items: Sequence | None = None,
    depth: int | None = None,
    alpha: float = 0.05,
    confidence: float = 0.95,
    p_value: str = "permutation",
    correction: str = "holm",
    n_permutations: int = 100_000,
    n_bootstrap: int = 9999,
    bootstrap_method: IntervalMethod = "BCa",
    n_tukey: int = 10_000,
    n_random: int = 20,
    difference: float | Mapping[str, float] | None = None,
    power: float = 0.8,
    sampled: smp.Sampling | None = None,
    seed: int = 0,
) -> Comparison:
    """Compare recommenders on one test set and return a :class:`Comparison`.

    ``recommendations``: a mapping system name → LensKit ``ItemListCollection`` (e.g. the output
    of ``lenskit.batch.recommend``), ``{user: ItemList}`` or tidy frame (user, item, score or
    rank); or one frame with a ``system`` column; or :class:`recmeta.metrics.Runs`. ``test``:
    the test data as a LensKit ``ItemListCollection`` (e.g. a ``lenskit.splitting`` split's
    ``test``) or ``Dataset``, a frame (user, item[, rating]), a qrels path or
    :class:`~recmeta.metrics.Judgments`; with ratings, ``threshold`` (rating ≥ threshold is
    relevant) is required. ``metrics``: engine names (``"nDCG@10"``, ``"RR"``, ...).

    ``train`` (a LensKit ``Dataset`` such as a split's ``train``, an ``ItemListCollection``, a
    frame or a ratings file path) enables the random and popularity
    references; ``items`` is the catalogue (default: the training items). ``p_value`` picks the
    test that decides significance, ``correction`` ("holm", "bh", "none") its correction over
    the pairs of each metric (the Tukey test needs none). ``difference`` (per metric or one
    number) is the smallest difference of interest for the sample-size answer. ``sampled``
    describes sampled candidates (:class:`~recmeta.compare.Sampling`). ``n_tukey=0`` skips the
    Tukey test. One ``seed`` drives every random draw.
    """
    metrics = list(metrics)
    if not metrics:
        raise ValueError("name at least one metric, e.g. metrics=['nDCG@10']")
    for m in metrics:
        parse_metric(m)
    if len(set(metrics)) != len(metrics):
        raise ValueError("a metric is listed twice")
    if p_value not in P_VALUES:
        raise ValueError(f"p_value must be one of {P_VALUES}, got {p_value!r}")
    if correction not in st.ADJUSTMENTS:
        raise ValueError(f"correction must be one of {st.ADJUSTMENTS}, got {correction!r}")
    if p_value == "tukey" and not n_tukey:
        raise ValueError("p_value='tukey' needs n_tukey > 0")
    if not 0 < alpha < 1 or not 0 < confidence < 1 or not 0 < power < 1:
        raise ValueError("alpha, confidence and power must lie strictly between 0 and 1")
    judgments = as_judgments(test, threshold)
    runs = as_runs(recommendations, judgments, depth)
    train_df = as_train(train, judgments) if train is not None else None

    keep = judgments.evaluable()
    if not keep.any():
        raise ValueError("no test user has a relevant item: check the threshold and the test data")
    users = judgments.users[keep]
    names = [str(s) for s in runs.systems]
    full = score_matrices(judgments, runs, metrics)
    matrices = {m: full[m][:, keep] for m in metrics}
    empty = (runs.ranks[:, keep, 0] < 0).sum(axis=1)
    coverage = pd.DataFrame(
        {
            "system": names,
            "users": int(keep.sum()),
            "empty_lists": empty,
            "share_empty": empty / keep.sum(),
        }
    )
    notes = _coverage_notes(judgments, runs, keep, coverage)

    sampled_frame = None
    n_user = None
    if sampled is not None:
        n_user = _sampled_n(sampled, users, judgments, train_df, items)
        ranks, missing = smp.sampled_ranks(judgments, runs, int(sampled.m))
        raw = matrices
        matrices = {m: smp.corrected_scores(m, ranks, n_user, sampled) for m in metrics}
        sampled_frame = pd.DataFrame(
            [
                {
                    "metric": m,
                    "system": s,
                    "sampled": raw[m][k].mean(),
                    "corrected": matrices[m][k].mean(),
                }
                for m in metrics
                for k, s in enumerate(names)
            ]
        )
        notes.append(smp.warning_text(metrics, n_user, sampled))
        if missing.any():
            notes.append(
                f"{int(missing.sum())} (system, user) lists miss the relevant item; "
                f"it is placed last (sampled rank {int(sampled.m) + 1})."
            )

    settings = {
        "alpha": alpha,
        "confidence": confidence,
        "p_value": p_value,
        "correction": correction,
        "n_permutations": n_permutations,
        "n_bootstrap": n_bootstrap,
        "bootstrap_method": bootstrap_method,
        "n_tukey": n_tukey,
        "n_random": n_random,
        "power": power,
        "seed": seed,
        "depth": runs.depth,
        "threshold": judgments.threshold,
        "sampling": (f"m = {sampled.m}, {sampled.estimator}" if sampled else None),
    }

    summaries, pair_frames, power_rows = [], [], []
    for m in metrics:
        M = matrices[m]
        s = st.mean_intervals(
            M, confidence=confidence, n_resamples=n_bootstrap, seed=seed, method=bootstrap_method
        )
        s.insert(0, "system", names)
        s.insert(0, "metric", m)
        s["empty_lists"] = empty
        if len(names) > 1:
            pairs = _pairs(
                M,
                names,
                m,
                alpha=alpha,
                confidence=confidence,
                p_value=p_value,
                correction=correction,
                n_permutations=n_permutations,
                n_bootstrap=n_bootstrap,
                method=bootstrap_method,
                n_tukey=n_tukey,
                power=power,
                seed=seed,
            )
            pair_frames.append(pairs)
            sig = np.zeros((len(names), len(names)), dtype=bool)
            ia, ib = significance.system_pairs(len(names))
            sig[ia, ib] = sig[ib, ia] = pairs["significant"].to_numpy()
            s["letters"] = st.compact_letters(s["mean"].to_numpy(), sig)
            sd = st.pooled_difference_sd(M) if M.shape[1] > 1 else np.nan
        else:
            s["letters"] = ""
            sd = np.nan
        summaries.append(s)
        wanted = difference.get(m) if isinstance(difference, Mapping) else difference
        n = M.shape[1]
        power_rows.append(
            {
                "metric": m,
                "sd_pooled": sd,
                "users": n,
                "detectable": (
                    float(st.detectable_difference(sd, n, alpha=alpha, power=power))
                    if n > 1 and np.isfinite(sd)
                    else np.nan
                ),
                "difference": np.nan if wanted is None else float(wanted),
                "users_needed": (
                    float(st.users_needed(sd, wanted, alpha=alpha, power=power))
                    if wanted is not None and np.isfinite(sd)
                    else np.nan
                ),
            }
        )

    if sampled is not None:
        assert n_user is not None  # set with the sampled scores above
        references = pd.DataFrame(
            [
                {
                    "metric": m,
                    "reference": "random",
                    "value": smp.random_value(m, n_user, sampled),
                    "se": 0.0,
                }
                for m in metrics
            ]
        )
        notes.append(
            "Under sampled candidates the popularity reference is not computed: it "
            "would need the sampled items of every user."
        )
    elif train_df is not None:
        references = refs.reference_values(
            judgments,
            train_df,
            metrics,
            depth=runs.depth,
            n_random=n_random,
            seed=seed,
            items=items,
        )
    else:
        references = pd.DataFrame(columns=["metric", "reference", "value", "se"])
        notes.append(
            "No training data given: the random and popularity references are not computed."
        )

    pairs_all = (
        pd.concat(pair_frames, ignore_index=True)
        if pair_frames
        else pd.DataFrame(columns=["metric", "a", "b", "significant", "p_decision"])
    )
    return Comparison(
        systems=names,
        metrics=metrics,
        users=users,
        scores=matrices,
        summary=pd.concat(summaries, ignore_index=True),
        pairs=pairs_all,
        references=references,
        power=pd.DataFrame(power_rows),
        coverage=coverage,
        settings=settings,
        notes=notes,
        sampled=sampled_frame,
    )


def compare_trec(
    runs: Sequence[str | os.PathLike],
    qrels: str | os.PathLike,
    metrics: Sequence[str] = ("nDCG@10",),
    *,
    threshold: float = 1.0,
    **options: Any,
) -> Comparison:
    """:func:`compare` on TREC files: run files (one system per run tag) and a qrels file.

    ``threshold`` is trec_eval's ``-l`` (a grade ≥ threshold is relevant; default 1).
    """
    judgments = Judgments.from_qrels(qrels, threshold=threshold)
    depth = options.pop("depth", None)
    return compare(
        Runs.from_trec(list(runs), judgments, depth=depth), judgments, metrics, **options
    )


def _pairs(
    M: np.ndarray,
    names: list[str],
    metric: str,
    *,
    alpha: float,
    confidence: float,
    p_value: str,
    correction: str,
    n_permutations: int,
    n_bootstrap: int,
    method: IntervalMethod,
    n_tukey: int,
    power: float,
    seed: int,
) -> pd.DataFrame:
    """One row per pair of systems: effects with intervals, every p-value, the decision."""
    ia, ib = significance.system_pairs(len(names))
    eff = st.difference_intervals(
        M, confidence=confidence, n_resamples=n_bootstrap, seed=seed, method=method
    )
    p = {
        "permutation": significance.permutation_test(M, seed=seed, n_permutations=n_permutations),
        "t": significance.paired_t_test(M),
        "wilcoxon": significance.wilcoxon_test(M),
        "tukey": (
            st.tukey_hsd(M, seed=seed, n_permutations=n_tukey)
            if n_tukey
            else np.full(ia.size, np.nan)
        ),
    }
    chosen = p[p_value]
    holm, bh = st.adjust(chosen, "holm"), st.adjust(chosen, "bh")
    if p_value == "tukey" or correction == "none":
        decision = chosen
    else:
        decision = holm if correction == "holm" else bh
    frame = pd.DataFrame(
        {"metric": metric, "a": [names[k] for k in ia], "b": [names[k] for k in ib]}
    )
    frame = pd.concat([frame, eff], axis=1)
    frame["p_permutation"] = p["permutation"]
    frame["p_t"] = p["t"]
    frame["p_wilcoxon"] = p["wilcoxon"]
    frame["p_tukey"] = p["tukey"]
    frame["p_holm"] = holm
    frame["p_bh"] = bh
    frame["p_decision"] = decision
    frame["significant"] = np.nan_to_num(decision, nan=1.0) <= alpha
    frame["users_needed"] = st.users_needed(
        eff["sd_diff"].to_numpy(), eff["mean_diff"].to_numpy(), alpha=alpha, power=power
    )
    return frame


def _sampled_n(
    sampling: smp.Sampling,
    users: pd.Index,
    judgments: Judgments,
    train: pd.DataFrame | None,
    items: Sequence | None,
) -> np.ndarray:
    """Each evaluated user's number of candidates without sampling."""
    if sampling.n is None:
        if train is None:
            raise ValueError(
                "sampled candidates: give Sampling(n=...) or the training data, "
                "from which n = catalogue minus the user's training items"
            )
        cat = refs.catalogue(train, items)
        seen = train[train["item"].isin(cat)].drop_duplicates(["user", "item"])
        per_user = seen.groupby("user").size().reindex(users, fill_value=0).to_numpy()
        n = len(cat) - per_user
    elif isinstance(sampling.n, (Mapping, pd.Series)):
        n = pd.Series(sampling.n).reindex(users).to_numpy(dtype=float)
        if np.isnan(n).any():
            raise ValueError("Sampling.n misses some evaluated users")
    else:
        n = np.full(len(users), int(sampling.n))
    n = np.asarray(n, dtype=np.int64)
    if (n < int(sampling.m) + 1).any():
        raise ValueError(
            f"some users have fewer than m + 1 = {int(sampling.m) + 1} candidates "
            "without sampling; check Sampling.n and m"
        )
    return n


def _coverage_notes(
    judgments: Judgments, runs: Runs, keep: np.ndarray, coverage: pd.DataFrame
) -> list[str]:
    notes = []
    left_out = int((~keep).sum())
    notes.append(
        f"{int(keep.sum()):,} of the {len(judgments.users):,} test users have a relevant "
        f"item and are evaluated"
        + (
            f"; {left_out:,} without one are left out of every average, as trec_eval does."
            if left_out
            else "."
        )
    )
    short = coverage[coverage["empty_lists"] > 0]
    if len(short):
        listing = ", ".join(
            f"{s} {int(e):,}" for s, e in zip(short["system"], short["empty_lists"], strict=True)
        )
        notes.append(f"Evaluated users without a list score 0 (the coverage penalty): {listing}.")
    else:
        notes.append("Every system has a list for every evaluated user (no coverage penalty).")
    if runs.dropped_users:
        notes.append(
            f"{runs.dropped_users:,} users of the runs have no test data and are not evaluated."
        )
    return notes
