"""Benchmark: paired permutation tests over all system pairs.

recmeta's :func:`recmeta.metaeval.significance.permutation_test` against ``scipy.stats.permutation_test``
and ranx's Fisher randomisation test (``ranx.statistical_tests.fisher_randomization_test``, the
function ``ranx.compare(stat_test="fisher")`` calls once per ordered pair) on the same score
matrix: 20 systems (190 pairs) × 943 users × 100,000 permutations by default.

recmeta runs the full size on all pairs. scipy and ranx test one pair per call, so their cost
is linear in the number of pairs and in the number of permutations: they are timed on a sample of
``--pairs`` pairs at two smaller permutation counts, and extrapolated to all pairs and to the
full count with a linear fit ``t(B) = a + b·B`` (the intercept keeps per-call overhead from being
scaled up). Every extrapolated figure is printed as such. ``--full`` runs them on all pairs at
the full size instead (an hour or more).

p-values must agree within Monte-Carlo error: for each timed pair we report
``z = (p_recmeta - p_other) / sqrt(p(1-p) (1/B_recmeta + 1/B_other))`` (|z| <= 3 expected for
nearly all pairs), and ``--check-pairs`` pairs closest to p = 0.05 are also run by scipy and
ranx at the full count.

The score matrix is, by default, a synthetic matrix of per-user precision@100-like values
(multiples of 0.01, with many ties); ``--real`` takes the per-user nDCG@100 (or another measure)
of the first 20 roster systems on ML-100K from the run cache, ``--scores`` a saved ``.npy``
(systems × users). The timing depends on the number of systems, users and permutations, not on
the values; the agreement of p-values is checked on whichever matrix is used.

A second part times one full robustness curve as the chapter draws it (Valcarce et al. 2018,
Sec. 5): ML-100K, per-user 80/20 split, 20 test-set sizes (100 % to 5 % of the ratings) × 50
random samples = 1,000 incomplete test sets, 20 systems, 7 metrics at @100 (P, R, AP, nDCG, RR,
bpref, infAP), then Kendall's τ against the full test set. Its runs are seeded random rankings
tilted towards popular items (depth 100, training items excluded): what the timing depends on is
the number of systems, users, ranks and judged entries, which match the chapter's. ``--roster``
takes the first 20 systems of the roster instead, from the run cache (trained if absent).

Run: ``python benchmarks/significance.py`` (a few minutes on two cores; ``--skip-curve`` or
``--skip-tests`` runs one part).
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from scipy import stats

from recmeta.metaeval import significance as sg


def synthetic_scores(n_systems: int, n_users: int, seed: int) -> np.ndarray:
    """Per-user P@100-like scores: hits ~ Binomial(100, rate_u · quality_s) / 100."""
    rng = np.random.default_rng(seed)
    rate = rng.beta(0.8, 8.0, size=n_users)
    quality = np.linspace(0.6, 1.0, n_systems)
    return rng.binomial(100, np.clip(rate[None, :] * quality[:, None], 0, 1)) / 100


def time_recmeta(scores: np.ndarray, n_permutations: int, seed: int) -> tuple[float, np.ndarray]:
    start = time.perf_counter()
    p = sg.permutation_test(scores, seed=seed, n_permutations=n_permutations)
    return time.perf_counter() - start, p


def _mean_diff(x: np.ndarray, y: np.ndarray, axis: int) -> np.ndarray:
    return np.mean(x, axis=axis) - np.mean(y, axis=axis)


def scipy_pvalues(scores, pairs, n_permutations: int, seed: int) -> tuple[float, np.ndarray]:
    rng = np.random.default_rng(seed)
    out = np.empty(len(pairs[0]))
    start = time.perf_counter()
    for k, (a, b) in enumerate(zip(*pairs)):
        res = stats.permutation_test(
            (scores[a], scores[b]),
            _mean_diff,
            permutation_type="samples",
            vectorized=True,
            n_resamples=n_permutations,
            batch=min(n_permutations, 10_000),
            alternative="two-sided",
            rng=rng,
        )
        out[k] = res.pvalue
    return time.perf_counter() - start, out


def ranx_pvalues(scores, pairs, n_permutations: int, seed: int) -> tuple[float, np.ndarray]:
    from ranx.statistical_tests import fisher_randomization_test

    out = np.empty(len(pairs[0]))
    start = time.perf_counter()
    for k, (a, b) in enumerate(zip(*pairs)):
        p, _ = fisher_randomization_test(scores[a], scores[b], n_permutations, 0.05, seed + k)
        out[k] = p
    return time.perf_counter() - start, out


def tie_split(x: np.ndarray, y: np.ndarray, n_flips: int, seed: int) -> tuple[float, float] | None:
    """Monte-Carlo P(|T*| > |T|) and P(|T*| = |T|) in exact integer arithmetic, for scores on a
    1/100 grid (None otherwise): shows how much null mass sits on ties with the observed value."""
    d = np.rint((x - y) * 100)
    if not np.allclose(d, (x - y) * 100, atol=1e-6):
        return None
    d = d.astype(np.int64)
    observed = abs(int(d.sum()))
    rng = np.random.default_rng(seed)
    greater = equal = 0
    for start in range(0, n_flips, 10_000):
        signs = rng.integers(0, 2, size=(min(10_000, n_flips - start), d.size)) * 2 - 1
        t = np.abs(signs @ d)
        greater += int((t > observed).sum())
        equal += int((t == observed).sum())
    return greater / n_flips, equal / n_flips


def fit_time(fn, scores, pairs, counts: tuple[int, int], seed: int):
    """Time ``fn`` on ``pairs`` at two permutation counts and fit t(B) = a + b·B.

    Returns the fit ``(a, b)``, the two timings and the p-values of the larger count."""
    t1, _ = fn(scores, pairs, counts[0], seed)
    t2, p = fn(scores, pairs, counts[1], seed + 1)
    slope = (t2 - t1) / (counts[1] - counts[0])
    if slope <= 0:  # timing noise swamped the difference: proportional scaling instead
        return (0.0, t2 / counts[1]), (t1, t2), p
    return (max(t1 - slope * counts[0], 0.0), slope), (t1, t2), p


def agreement(p1: np.ndarray, b1: int, p2: np.ndarray, b2: int) -> np.ndarray:
    """|z| of the difference of two Monte-Carlo p-values, per pair."""
    p = np.clip((p1 + p2) / 2, 1 / max(b1, b2), None)
    se = np.sqrt(p * (1 - p) * (1 / b1 + 1 / b2))
    return np.abs(p1 - p2) / se


CURVE_METRICS = ["P@100", "R@100", "AP@100", "nDCG@100", "RR@100", "bpref@100", "infAP@100"]


def synthetic_runs(train, judgments, n_systems: int, seed: int):
    """Top-100 lists per user: Gumbel noise plus a popularity tilt that grows with the system
    number (system 0 random, the last one close to most-popular); training items excluded."""
    import pandas as pd

    from recmeta.metrics import Runs

    rng = np.random.default_rng(seed)
    items = np.unique(np.concatenate([train["item"].to_numpy(), judgments.items.to_numpy()]))
    pop = train["item"].value_counts().reindex(items, fill_value=0).to_numpy(dtype=np.float64)
    users = judgments.users.to_numpy()
    seen = np.zeros((users.size, items.size), dtype=bool)
    seen[np.searchsorted(users, train["user"]), np.searchsorted(items, train["item"])] = True
    frames = []
    for s in range(n_systems):
        score = (s / max(n_systems - 1, 1)) * 2 * np.log1p(pop) + rng.gumbel(size=seen.shape)
        score[seen] = -np.inf
        top = np.argpartition(-score, 100, axis=1)[:, :100]
        frames.append(pd.DataFrame({
            "system": f"sys{s:02d}",
            "user": np.repeat(users, 100),
            "item": items[top].ravel(),
            "score": np.take_along_axis(score, top, axis=1).ravel(),
        }))
    return Runs.from_frame(pd.concat(frames, ignore_index=True), judgments)


def roster_runs(train, judgments, n_systems: int, split_seed: int):
    """The first ``n_systems`` systems of the roster, from the run cache (trained if absent)."""
    from recmeta import recommenders
    from recmeta.metrics import Runs
    from recmeta.recommenders import roster

    systems = roster.systems(roster.names()[:n_systems])
    frame = recommenders.make(systems, train, dataset="ml-100k", split="holdout-0.2", seed=split_seed)
    return Runs.from_frame(frame, judgments)


def real_scores(measure: str, n_systems: int) -> np.ndarray:
    """Per-user ``measure`` of the first roster systems (the robustness chapter's split), with
    the users no system is scored on (no relevant test item) dropped."""
    from recmeta.book import chapters
    from recmeta.data import splits
    from recmeta.metrics import Judgments, score_matrix

    split = splits.holdout_per_user(chapters.ratings("ml-100k"), 0.2, seed=0)
    judgments = Judgments.from_frame(split.test, threshold=4)
    runs = roster_runs(split.train, judgments, n_systems, 0)
    return sg.evaluated_users(score_matrix(judgments, runs, measure))


def time_curve(n_systems: int, n_samples: int, seed: int, use_roster: bool) -> None:
    from recmeta.book import chapters
    from recmeta.data import splits
    from recmeta.metaeval import agreement, incompleteness
    from recmeta.metrics import Judgments, aggregate, score_matrices

    ratings = chapters.ratings("ml-100k")
    split_seed = 0 if use_roster else seed  # the robustness chapter's split
    split = splits.holdout_per_user(ratings, 0.2, seed=split_seed)
    judgments = Judgments.from_frame(split.test, threshold=4)
    if use_roster:
        runs = roster_runs(split.train, judgments, n_systems, split_seed)
        source = "roster runs"
    else:
        runs = synthetic_runs(split.train, judgments, n_systems, seed)
        source = "synthetic runs"
    shares = incompleteness.sparsity_shares()
    start = time.perf_counter()
    masks = incompleteness.random_ratings(judgments.to_frame(), shares, n_samples, seed=seed)
    t_masks = time.perf_counter() - start
    full = score_matrices(judgments, runs, CURVE_METRICS)
    reference = np.stack([aggregate(full[m]) for m in CURVE_METRICS])
    start = time.perf_counter()
    scores = incompleteness.score_masks(judgments, runs, masks, CURVE_METRICS)
    t_eval = time.perf_counter() - start
    start = time.perf_counter()
    curves = agreement.robustness_curves(scores, reference, masks.share, CURVE_METRICS)
    t_tau = time.perf_counter() - start
    total = t_masks + t_eval + t_tau
    print(
        f"robustness curve: {shares.size} sizes x {n_samples} samples = {len(masks)} test sets, "
        f"{n_systems} systems, {len(CURVE_METRICS)} metrics @100, "
        f"{judgments.n_entries:,} judged entries, {len(judgments.users)} users; {source}"
    )
    print(
        f"  {total:.1f} s measured: masks {t_masks:.2f} s, evaluation {t_eval:.1f} s "
        f"({1000 * t_eval / len(masks):.0f} ms per test set), Kendall tau {t_tau:.2f} s"
    )
    low = curves[curves.share == shares.min()].set_index("metric")["tau"]
    print("  mean tau at 5 %: " + ", ".join(f"{m} {v:.2f}" for m, v in low.items()))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--systems", type=int, default=20)
    parser.add_argument("--users", type=int, default=943)
    parser.add_argument("--permutations", type=int, default=100_000)
    parser.add_argument("--pairs", type=int, default=12, help="pairs timed for scipy and ranx")
    parser.add_argument("--scipy-counts", type=int, nargs=2, default=(1_000, 4_000))
    parser.add_argument("--ranx-counts", type=int, nargs=2, default=(2_000, 8_000))
    parser.add_argument("--check-pairs", type=int, default=2, help="pairs re-run at full size")
    parser.add_argument("--scores", help="a saved systems × users .npy score matrix")
    parser.add_argument("--real", metavar="MEASURE", nargs="?", const="nDCG@100",
                        help="per-user scores of MEASURE (default nDCG@100) for the first "
                             "--systems roster systems on ML-100K, from the run cache")
    parser.add_argument("--full", action="store_true", help="scipy and ranx on all pairs, full size")
    parser.add_argument("--seed", type=int, default=20180702)
    parser.add_argument("--curve-samples", type=int, default=50)
    parser.add_argument("--skip-tests", action="store_true", help="only the robustness curve")
    parser.add_argument("--skip-curve", action="store_true", help="only the significance tests")
    parser.add_argument("--roster", action="store_true",
                        help="time the curve on the roster's runs (from the run cache)")
    args = parser.parse_args(argv)
    if not args.skip_tests:
        compare_tests(args)
    if not args.skip_curve:
        time_curve(args.systems, args.curve_samples, args.seed, args.roster)


def compare_tests(args: argparse.Namespace) -> None:

    if args.scores:
        scores = np.load(args.scores)
        source = f"scores from {args.scores}"
    elif args.real:
        scores = real_scores(args.real, args.systems)
        source = f"per-user {args.real} of {args.systems} roster systems on ML-100K"
    else:
        scores = synthetic_scores(args.systems, args.users, args.seed)
        source = "synthetic P@100-like scores"
    n_sys, n_users = scores.shape
    pairs = sg.system_pairs(n_sys)
    n_pairs = len(pairs[0])
    B = args.permutations
    print(f"{n_sys} systems ({n_pairs} pairs) x {n_users} users x {B:,} permutations; {source}")

    # warm up numba (ranx compiles on first call) and BLAS outside the timings
    ranx_pvalues(scores[:2], (np.array([0]), np.array([1])), 10, 0)
    sg.permutation_test(scores[:2], seed=0, n_permutations=10)

    t_rec, p_rec = time_recmeta(scores, B, args.seed)
    print(f"recmeta {t_rec:9.2f} s  measured: all {n_pairs} pairs at {B:,}")

    if args.full:
        sample = np.arange(n_pairs)
        t_sci, p_sci = scipy_pvalues(scores, pairs, B, args.seed)
        t_rnx, p_rnx = ranx_pvalues(scores, pairs, B, args.seed)
        b_sci = b_rnx = B
        print(f"scipy   {t_sci:9.2f} s  measured: all pairs at {B:,}")
        print(f"ranx    {t_rnx:9.2f} s  measured: all pairs at {B:,}")
    else:
        # pairs spread evenly over the range of recmeta's p-values
        order = np.argsort(p_rec)
        sample = order[np.linspace(0, n_pairs - 1, min(args.pairs, n_pairs)).round().astype(int)]
        sub = (pairs[0][sample], pairs[1][sample])
        scale = n_pairs / sample.size
        results = {}
        for name, fn, counts in (
            ("scipy", scipy_pvalues, tuple(args.scipy_counts)),
            ("ranx", ranx_pvalues, tuple(args.ranx_counts)),
        ):
            (a, b), (t1, t2), p = fit_time(fn, scores, sub, counts, args.seed)
            total = scale * (a + b * B)
            results[name] = (total, p, counts[1])
            print(
                f"{name:7s} {total:9.2f} s  extrapolated to {n_pairs} pairs at {B:,} from "
                f"{sample.size} pairs: {t1:.2f} s at {counts[0]:,}, {t2:.2f} s at {counts[1]:,}"
            )
        t_sci, p_sci, b_sci = results["scipy"]
        t_rnx, p_rnx, b_rnx = results["ranx"]
    print(f"speed-up: {t_sci / t_rec:.0f}x scipy, {t_rnx / t_rec:.0f}x ranx")

    for name, p_other, b_other in (("scipy", p_sci, b_sci), ("ranx", p_rnx, b_rnx)):
        z = agreement(p_rec[sample], B, p_other, b_other)
        worst = int(np.argmax(z))
        print(
            f"agreement with {name} ({b_other:,} permutations, {z.size} pairs): "
            f"{(z <= 3).mean():.0%} within 3 SE; worst |z| = {z[worst]:.2f} "
            f"(recmeta {p_rec[sample][worst]:.5f} vs {p_other[worst]:.5f})"
        )

    if args.check_pairs and not args.full:
        pick = np.argsort(np.abs(p_rec - 0.05))[: args.check_pairs]  # decisions hinge here
        sub = (pairs[0][pick], pairs[1][pick])
        t_s, p_s = scipy_pvalues(scores, sub, B, args.seed + 7)
        t_r, p_r = ranx_pvalues(scores, sub, B, args.seed + 7)
        print(f"{len(pick)} pairs nearest p = 0.05, all three at {B:,} permutations:")
        for k in range(len(pick)):
            print(
                f"  pair {sub[0][k]:2d}-{sub[1][k]:2d}: recmeta {p_rec[pick[k]]:.5f}  "
                f"scipy {p_s[k]:.5f}  ranx {p_r[k]:.5f}"
            )
        for k in range(len(pick)):
            split = tie_split(scores[sub[0][k]], scores[sub[1][k]], 200_000, args.seed + 11)
            if split is not None:
                print(
                    f"  pair {sub[0][k]:2d}-{sub[1][k]:2d} in integers (200,000 flips): "
                    f"P(|T*| > |T|) = {split[0]:.5f}, P(|T*| = |T|) = {split[1]:.5f}, "
                    f"P(|T*| >= |T|) = {split[0] + split[1]:.5f}"
                )
        z_s = agreement(p_rec[pick], B, p_s, B).max()
        z_r = agreement(p_rec[pick], B, p_r, B).max()
        print(
            f"  max |z|: scipy {z_s:.2f}, ranx {z_r:.2f}; measured seconds per pair at "
            f"{B:,}: scipy {t_s / len(pick):.2f}, ranx {t_r / len(pick):.2f}, "
            f"recmeta {t_rec / n_pairs:.3f}"
        )


if __name__ == "__main__":
    main()
