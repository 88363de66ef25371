"""Bellogín, Castells & Cantador (2017), "Statistical biases in Information Retrieval metrics for
recommender systems": the experiments of the statistical-biases chapter and its ledger.

Two parts:

* :class:`Study` runs the paper's experiments on one ratings frame — target sets of Table 3,
  Figs. 2–5 and 7–9, the checks of eqs. 1–5 and of the §5.1, §6.2 and §6.3 statements — with the
  protocols of :mod:`recmeta.protocols`, the closed forms of :mod:`recmeta.expectations` and
  the simulation of :mod:`recmeta.popularity`. Each method returns a tidy frame and keeps it in
  :attr:`Study.results` under a fixed name; :meth:`Study.run_all` runs them all (the chapter
  does so for its second dataset).
* :data:`LEDGER` holds the paper's claims: the printed value, how we compute ours from those
  results, and the verdict rule. The chapter evaluates it with :func:`recmeta.papers.report`.

Uncertainty: most estimates come from a percentile bootstrap over users (:func:`user_bootstrap`):
a user's target sets in every split of a configuration stay together, and the protocol's
average (over users in AR, over positive test ratings in 1R, over percentiles in P1R) is
recomputed on each resample. Quantities measured once per split (ρ, eq. 4) get a Student t
interval over the splits; closed forms and counts are exact.

The paper's values below are the numbers printed in its text (its figures are bar charts whose
values cannot be read reliably, so none is taken from them).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from .. import expectations as ex
from .. import popularity as pop
from .. import protocols
from ..protocols import Protocol
from . import register
from ..ledger import (
    Estimate,
    Ledger,
    Outcome,
    Verdict,
    format_estimate,
    format_number,
    not_reproduced,
    order_rule,
    paper_text,
    sign_rule,
    value_rule,
)

if TYPE_CHECKING:
    from ..costs import Plan, Size

__all__ = [
    "cost_plan",
    "CHAPTER",
    "LEDGER",
    "Settings",
    "Study",
    "user_table",
    "user_bootstrap",
    "protocol_estimate",
    "lift",
    "outcome",
    "compare",
    "direction",
    "PAPER",
]


def cost_plan(size: Size, settings: Settings) -> Plan:
    """The expensive steps of :class:`Study` on a dataset of ``size`` that :mod:`recmeta.costs`
    can estimate: the roster systems' runs (each scores every training user × item pair), on two
    splits per roster seed (the coin-flip and the uniform-test split) and on the simulated data of
    every other α and the last (:meth:`Study.simulation`). The protocol trials of the
    non-personalised recommenders are the bulk of the chapter and were not measured by the scale
    benchmark."""
    from ..costs import Plan

    n_alpha = len(settings.alphas)
    simulated = sum(1 for k in range(n_alpha) if k % 2 == 0 or k == n_alpha - 1)
    splits = 2 * len(settings.roster_seeds) + (simulated if settings.sim_seeds else 0)
    plan = Plan(size)
    if settings.roster and splits:
        plan.runs(settings.roster.values(), splits=splits)
    def splits_(n: int) -> str:
        return f"{n} split" + ("s" if n != 1 else "")

    return plan.unmodelled(f"the protocol trials of the non-personalised recommenders on "
                           f"{splits_(len(settings.seeds))} per configuration, and the formula "
                           f"checks on {splits_(len(settings.check_seeds))} per point")


CHAPTER = "statistical-biases"

#: the paper's printed values (section of the paper in the comment)
PAPER: dict[str, Any] = {
    "threshold": 5,  # §3.3: positive rating threshold on MovieLens
    "sigma": 0.2,  # §3.3: 80-20 % coin-flip splits
    "one_r_size": 100,  # §3.3: |T_u| = 100 in 1R
    "one_r_bound": 0.10,  # §3.3: "the upper bound of P@10 for the 1R methodology is 0.10"
    "popularity_ar": 0.08,  # §3.3: "in AR popularity ranges from 0.08 on MovieLens"
    "wilcoxon_p": 0.001,  # §3.3: "Wilcoxon p ≪ 0.001 for all pairwise differences"
    "alpha": 1.4,  # §5.2: "α ~ 1.4 for MovieLens 1M"
    "alpha0_popularity": 0.0077,  # §5.2: popularity at α = 0
    "alpha0_random": 0.0100,  # §5.2: random at α = 0
    "top_liked": 0.327,  # §5.2: the top item of MovieLens "is liked by 32.7 %" of users
    "uniform_size": 1703,  # §6.2: |T| on ML-1M, σ = 0.2, ε = 0.2
    "uniform_eta": 118,  # §6.2: η on ML-1M
    "ar_nonrelevant": 1700,  # §6.3: |N_u| of the AR design of Fig. 8
    "percentiles": 10,  # §6.3: m of P1R
    "p1r_size": 370,  # §6.1: |T_u| ≤ ~370 for m = 10 on ML-1M
    "dataset": "ML-1M",
}

#: names of the designs of Fig. 2 and Fig. 8 in the results
FIG2_DESIGNS = ("AR AI-AN", "AR TI-AN", "1R TI-NN")
FIG8_DESIGNS = ("1R", "U1R", "P1R", "P1R (AI)", "1R −10% head", "AR TI-NN", "UAR", "AI-UAR")
NONPERSONALISED = ("popularity", "most liked", "mean rating", "random")
ORACLE = "best non-personalised (test)"


# ------------------------------------------------------------------------------------ settings


@dataclass(frozen=True)
class Settings:
    """Every knob of the chapter's experiments; :meth:`resolve` fills the profile's defaults."""

    threshold: float = 5.0
    sigma: float = 0.2
    n: int = 10
    n_nonrelevant: int = 99
    percentiles: int = 10
    epsilon: float = 0.2
    head: float = 0.1
    gamma: float = 1.0
    graded_threshold: float = 4.0
    seed: int = 0
    seeds: tuple[int, ...] = (0, 1)
    check_seeds: tuple[int, ...] = (0, 1, 2, 3, 4, 5)
    removed_rates: tuple[float, ...] = (0.0, 0.4, 0.8)
    target_sizes: tuple[int, ...] = (100, 300)
    sigmas: tuple[float, ...] = (0.2,)
    alphas: tuple[float, ...] = (0.0, 1.0, 2.0)
    roster_systems: tuple[tuple[str, str], ...] = (("MF", "wrmf-50"),)
    roster_seeds: tuple[int, ...] = (0,)
    size_seeds: tuple[int, ...] = (0,)
    sim_seeds: tuple[int, ...] = (0,)
    design_seeds: tuple[int, ...] = (0,)
    metric_seeds: tuple[int, ...] = (0,)
    resamples: int = 999
    level: float = 0.95
    damping: float = 10.0
    ai_designs: bool = True
    engine_designs: bool = True

    @classmethod
    def resolve(cls, profile: str, *, secondary: bool = False, seed: int = 0, **given: Any) -> Settings:
        """Settings of a profile (``"quick"`` or ``"full"``) with the given values; ``None`` takes
        the profile's default. ``secondary`` gives the smaller quick sizes of the second dataset.
        ``seeds``, ``check_seeds`` and ``roster_seeds`` may be counts or lists; ``roster_systems``
        a mapping role → roster name."""
        quick = profile == "quick"
        small = quick and secondary
        defaults: dict[str, Any] = {
            "seeds": 1 if small else 2 if quick else 6,
            "check_seeds": 2 if small else 6 if quick else 20,
            "removed_rates": (0.0, 0.8) if small else (0.0, 0.4, 0.8) if quick else (0.0, 0.2, 0.4, 0.6, 0.8),
            "target_sizes": (100, 300) if quick else (100, 250, 500, 1000),
            "sigmas": (0.2,) if quick else (0.1, 0.2, 0.3),
            "alphas": (0.0, 2.0) if small else (0.0, 1.0, 2.0) if quick else tuple(np.arange(9) * 0.25),
            "roster_systems": {} if small else {"MF": "wrmf-50"} if quick else
            {"pLSA": "plsa-50", "MF": "wrmf-50", "user-kNN": "uknn-30"},
            "roster_seeds": 0 if small else 1 if quick else 3,
            "resamples": 999 if quick else 4999,
            # the second dataset's quick run leaves out the designs over all items and Fig. 9
            "ai_designs": not small,
            "engine_designs": not small,
        }
        values = {k: v for k, v in given.items() if v is not None}
        for k, v in defaults.items():
            values.setdefault(k, v)
        first = int(seed)

        def seeds_of(x: Any) -> tuple[int, ...]:
            if isinstance(x, (int, np.integer)):
                return tuple(range(first, first + int(x)))
            return tuple(int(s) for s in x)

        seeds = seeds_of(values.pop("seeds"))
        check = seeds_of(values.pop("check_seeds"))
        roster = values.pop("roster_seeds")
        roster_seeds = seeds[: int(roster)] if isinstance(roster, (int, np.integer)) else tuple(int(s) for s in roster)
        systems = values.pop("roster_systems")
        systems = tuple(systems.items()) if isinstance(systems, Mapping) else tuple(tuple(x) for x in systems)
        few = 1 if quick else 3
        return cls(
            seed=first, seeds=seeds, check_seeds=check, roster_seeds=roster_seeds, roster_systems=systems,
            size_seeds=seeds[:few], sim_seeds=seeds[:few], design_seeds=seeds[:few], metric_seeds=seeds[:few],
            removed_rates=tuple(float(r) for r in values.pop("removed_rates")),
            target_sizes=tuple(int(t) for t in values.pop("target_sizes")),
            sigmas=tuple(float(s) for s in values.pop("sigmas")),
            alphas=tuple(float(a) for a in values.pop("alphas")),
            **values,
        )

    @property
    def roster(self) -> dict[str, str]:
        """Role in the paper → system of :mod:`recmeta.roster`."""
        return dict(self.roster_systems)


# ------------------------------------------------------------------------------- uncertainty


def user_table(parts: Mapping[str, tuple[pd.DataFrame, Sequence[str]]], metric: str = "P") -> pd.DataFrame:
    """Per-user sums from which every protocol mean of several configurations is a ratio.

    ``parts`` maps a label to (per-set frame of one configuration, systems). The frame has
    one row per (seed, system, set) with ``user``, ``stratum`` and the ``metric`` column, as
    :func:`recmeta.protocols.trials` gives with ``per_set=True``. Only the seeds every listed
    system ran on are kept. Each set gets the weight w = 1/(splits · strata · sets in its
    stratum), so Σ w·value is the protocol mean averaged over splits (eq. 1 in 1R, the mean
    over users in AR, the mean over percentiles in P1R). Columns ``"<label>|<system>"`` hold
    Σ w·value per user and ``"<label>|w"`` Σ w, users absent from a configuration have 0.
    """
    cols = []
    for label, (frame, systems) in parts.items():
        systems = list(systems)
        if metric not in frame.columns:
            raise ValueError(f"part {label!r} has no column {metric!r}")
        f = frame.loc[frame["system"].isin(systems)]
        missing = [s for s in systems if s not in set(pd.unique(f["system"]))]
        if missing:
            raise KeyError(f"part {label!r} has no rows of system(s) {missing}")
        common = set.intersection(*(set(pd.unique(f.loc[f["system"] == s, "seed"])) for s in systems))
        f = f.loc[f["seed"].isin(common)]
        wide = (f.set_index(["seed", "set", "user", "stratum", "system"])[metric]
                .unstack("system").reset_index())
        if wide[systems].isna().any().any():
            raise ValueError(f"part {label!r}: the systems were not run on the same target sets")
        per_stratum = wide.groupby(["seed", "stratum"])["set"].transform("size")
        strata = wide.groupby("seed")["stratum"].transform("nunique")
        w = 1.0 / (len(common) * strata * per_stratum)
        block = wide[systems].mul(w, axis=0)
        block.columns = [f"{label}|{s}" for s in systems]
        block[f"{label}|w"] = w
        cols.append(block.groupby(wide["user"].to_numpy()).sum())
    return pd.concat(cols, axis=1).fillna(0.0)


Getter = Callable[[str, str], np.ndarray]


def user_bootstrap(
    table: pd.DataFrame,
    statistic: Callable[[Getter], Any],
    *,
    resamples: int = 999,
    level: float = 0.95,
    seed: int = 0,
    what: str = "users",
) -> Estimate:
    """Percentile bootstrap over users of a statistic of protocol means.

    ``statistic(get)`` computes the quantity from ``get(label, system)``, the protocol mean of
    ``system`` in configuration ``label`` (Σ_u S_u / Σ_u W_u from :func:`user_table`); it is
    evaluated once on all users (the value) and on ``resamples`` resamples of the users drawn
    with replacement (the interval: their ``(1 ± level)/2`` quantiles). Resamples in which a
    configuration has no set are skipped.
    """
    x = table.to_numpy(dtype=float)
    n = len(x)
    if n < 2:
        raise ValueError("a bootstrap over users needs at least two users")
    col = {c: k for k, c in enumerate(table.columns)}
    totals = x.sum(axis=0)

    def full(label: str, system: str) -> np.ndarray:
        return np.asarray(totals[col[f"{label}|{system}"]] / totals[col[f"{label}|w"]])

    value = float(statistic(full))
    rng = np.random.default_rng(seed)
    reps = []
    done = 0
    while done < resamples:
        b = min(256, resamples - done)
        draws = rng.integers(0, n, size=(b, n)) + (np.arange(b) * n)[:, None]
        counts = np.bincount(draws.ravel(), minlength=b * n).reshape(b, n)  # times each user is drawn
        sums = counts.astype(float) @ x

        def get(label: str, system: str, sums: np.ndarray = sums) -> np.ndarray:
            with np.errstate(invalid="ignore", divide="ignore"):
                return sums[:, col[f"{label}|{system}"]] / sums[:, col[f"{label}|w"]]

        with np.errstate(invalid="ignore", divide="ignore"):
            reps.append(np.asarray(statistic(get), dtype=float).reshape(-1))
        done += b
    r = np.concatenate(reps)
    r = r[np.isfinite(r)]
    return Estimate.from_samples(
        r, level, value=value,
        method=f"percentile bootstrap over {n} {what} ({len(r)} resamples), {level * 100:g} %",
    )


def protocol_estimate(frame: pd.DataFrame, system: str, settings: Settings, metric: str = "P") -> Estimate:
    """The protocol mean of one system in one configuration, with its bootstrap over users."""
    table = user_table({"x": (frame, [system])}, metric)
    return user_bootstrap(table, lambda get: get("x", system), resamples=settings.resamples,
                          level=settings.level, seed=settings.seed)


def lift(get: Getter, label: str, system: str = "popularity", baseline: str = "random") -> np.ndarray:
    """A system's protocol mean over the baseline's (popularity over random), in one configuration."""
    return get(label, system) / get(label, baseline)


def _over_splits(values: Iterable[float], what: str = "splits") -> Estimate:
    """Mean with a Student t interval over per-split values; a point estimate from one split."""
    v = np.asarray(list(values), dtype=float)
    if len(v) >= 2:
        return Estimate.mean_se(v, method=f"t interval over {len(v)} {what}, 95 %")
    return Estimate.point(float(v[0]), method=f"one {what[:-1]}, no interval")


def _append(out: Outcome, text: str) -> Outcome:
    return Outcome(out.verdict, out.ours, f"{out.reason}; {text}", out.detail)


def _join(parts: list[Outcome]) -> Verdict:
    verdicts = [p.verdict for p in parts]
    if any(v == Verdict.DIFFERS for v in verdicts):
        return Verdict.DIFFERS
    if all(v == Verdict.AGREES for v in verdicts):
        return Verdict.AGREES
    return Verdict.INCONCLUSIVE


def direction(value: float, up: str = "rises", down: str = "falls", flat: str = "stays level") -> str:
    """A word for the sign of ``value``."""
    return up if value > 0 else down if value < 0 else flat


# ----------------------------------------------------------------------------------- the study


class Study:
    """The chapter's experiments on one dataset; every method stores its frame in :attr:`results`.

    ``ratings`` must be graded (a rating column); ``dataset`` names it (for the run cache of
    the roster systems, :func:`recmeta.protocols.roster_scorer`).
    """

    def __init__(self, ratings: pd.DataFrame, settings: Settings, *, dataset: str) -> None:
        self.ratings = ratings
        self.s = settings
        self.dataset = str(dataset)
        self.systems: dict[str, protocols.Scorer] = {
            "popularity": protocols.popularity_scorer, "random": protocols.random_scorer(settings.seed)}
        self.cf: dict[str, protocols.Scorer] = {
            role: protocols.roster_scorer(name, dataset=self.dataset) for role, name in settings.roster.items()}
        self.order = [*self.systems, *self.cf]
        self.items = np.unique(ratings["item"].to_numpy())
        self.positive = ratings.loc[ratings["rating"] >= settings.threshold, "item"].value_counts()
        self.results: dict[str, Any] = {"settings": settings, "dataset": self.dataset}
        self.cache = protocols.TrialCache(keep_sets=3)
        #: engine metrics added to every AR-AN run, so the runs of several figures are shared
        self.ar_metrics = (f"R@{settings.n}",)

    def release(self) -> None:
        """Drop the target sets kept for reuse (the per-set results stay)."""
        self.cache.sets.clear()

    # -- helpers ---------------------------------------------------------------------------------

    def protocol(self, candidates: str, relevant: str, nonrelevant: str, size: int | None = None,
                 **kw: Any) -> Protocol:
        """A :class:`Protocol` with the study's threshold; NN defaults to |N_u| = ``n_nonrelevant``."""
        if nonrelevant == "NN" and size is None:
            size = self.s.n_nonrelevant
        return Protocol(candidates, relevant, nonrelevant, size, threshold=self.s.threshold, **kw)

    def run(self, protocol: Protocol, *, seeds: Sequence[int] | None = None,
            roster_seeds: Sequence[int] | None = None, systems: Mapping[str, protocols.Scorer] | None = None,
            ratings: pd.DataFrame | None = None, **kw: Any) -> pd.DataFrame:
        """Per-set rows of the baselines on ``seeds`` and of the roster systems on ``roster_seeds``."""
        seeds = self.s.seeds if seeds is None else seeds
        roster_seeds = self.s.roster_seeds if roster_seeds is None else roster_seeds
        data = self.ratings if ratings is None else ratings
        common = {"sigma": self.s.sigma, "n": self.s.n, "per_set": True,
                  "cache": self.cache if ratings is None else None, **kw}
        if protocol.relevant == "AR" and protocol.nonrelevant == "AN":
            common.setdefault("metrics", self.ar_metrics)
        frames = [protocols.trials(data, protocol, dict(systems or self.systems), seeds=seeds, **common)]
        if self.cf and roster_seeds and systems is None:
            frames.append(protocols.trials(data, protocol, self.cf, seeds=roster_seeds, **common))
        return pd.concat(frames, ignore_index=True)

    # -- §3: target sets and Fig. 2 ----------------------------------------------------------------

    def table3(self) -> pd.DataFrame:
        """The eight target-set designs of Table 3 on one split: sizes, ρ and popularity's P@n.

        The 1R-AN rows are read off the AR-AN sets (:func:`recmeta.protocols.one_r_an_metrics`).
        """
        s = self.s
        rows = []
        for cand in ("AI", "TI"):
            train, test, ar, _ = protocols.split_sets(self.ratings, self.protocol(cand, "AR", "AN", ar_users="all"),
                                                      s.seed, sigma=s.sigma, cache=self.cache)
            scored = protocols.attach_scores(ar, protocols.popularity_scorer(train, ar))
            for rel in ("AR", "1R"):
                for non in ("AN", "NN"):
                    name = f"{cand}-{non} {rel}"
                    if non == "AN" and rel == "AR":
                        per, size = protocols.target_metrics(scored, s.n), ar.groupby("set").size()
                        rho = ex.random_precision(ar)
                    elif non == "AN":
                        per = protocols.one_r_an_metrics(scored, s.n)
                        size, rho = per["size"], float((1.0 / per["size"]).mean())
                    else:
                        p = self.protocol(cand, rel, non, short_pool="shrink")
                        sets = protocols.target_sets(train, test, p, seed=s.seed, items=self.items)
                        per = protocols.target_metrics(
                            protocols.attach_scores(sets, protocols.popularity_scorer(train, sets)), s.n)
                        size, rho = sets.groupby("set").size(), ex.random_precision(sets)
                    rows.append({"protocol": name, "target sets": len(size), "mean |T|": float(np.mean(size)),
                                 "rho": rho, f"popularity P@{s.n}": protocols.protocol_mean(per)})
        out = pd.DataFrame(rows).set_index("protocol")
        self.results["table3"] = out
        return out

    def coverage(self) -> pd.DataFrame:
        """Per split: the share of items without a test rating (outside the TI candidates), and
        the exact ρ of the AR AI-AN and AR TI-AN sets (:func:`recmeta.expectations.random_precision_an`)."""
        from ..splits import coin_flip

        rows = []
        for sd in sorted({*self.s.seeds, *self.s.check_seeds}):  # cheap: no target set is built
            sp = coin_flip(self.ratings, self.s.sigma, seed=sd)
            rho = {c: ex.random_precision_an(sp.train, sp.test, self.s.threshold, c, items=self.items)
                   for c in ("AI", "TI")}
            rows.append({"seed": sd, "items": len(self.items), "test items": sp.test["item"].nunique(),
                         "rho AI-AN": rho["AI"], "rho TI-AN": rho["TI"]})
        out = pd.DataFrame(rows)
        out["no test rating"] = 1 - out["test items"] / out["items"]
        self.results["coverage"] = out
        return out

    def fig2(self) -> pd.DataFrame:
        """Per-set P@n and nDCG@n under AR AI-AN, AR TI-AN and 1R TI-NN (Fig. 2).

        AR averages over every user, users without a relevant test item counting as zero, as
        the paper's definition of AR precision (§3.2) does."""
        designs = {
            "AR AI-AN": self.protocol("AI", "AR", "AN", ar_users="all"),
            "1R TI-NN": self.protocol("TI", "1R", "NN"),
            "AR TI-AN": self.protocol("TI", "AR", "AN", ar_users="all"),
        }
        if not self.s.ai_designs:
            designs.pop("AR AI-AN")
        # AI-AN, the largest sets, runs on the splits of the costly designs (fewer in quick)
        out = pd.concat([self.run(p, seeds=self.s.design_seeds if name == "AR AI-AN" else None).assign(design=name)
                         for name, p in designs.items()], ignore_index=True)
        self.results["fig2"] = out
        return out

    def wilcoxon(self) -> pd.DataFrame:
        """Wilcoxon signed-rank p-values of every pair of systems under 1R TI-NN (§3.3).

        Each user's value is her mean 1R P@n over her sets in the splits every system ran on.
        """
        from ..metaeval.significance import system_pairs, wilcoxon_test

        f = self.results["fig2"]
        f = f.loc[f["design"] == "1R TI-NN"]
        systems = [s for s in self.order if s in set(pd.unique(f["system"]))]
        common = set.intersection(*(set(pd.unique(f.loc[f["system"] == s, "seed"])) for s in systems))
        per_user = (f.loc[f["seed"].isin(common)].groupby(["system", "user"])["P"].mean()
                    .unstack("user").reindex(systems))
        a, b = system_pairs(len(systems))
        p = wilcoxon_test(per_user.to_numpy(), (a, b))
        out = pd.DataFrame({"a": [systems[i] for i in a], "b": [systems[j] for j in b], "p": p,
                            "users": per_user.shape[1]})
        self.results["wilcoxon"] = out
        return out

    # -- §3.4: eq. 2 and Fig. 3 --------------------------------------------------------------------

    def lemma(self) -> tuple[pd.DataFrame, pd.DataFrame]:
        """1R TI-NN with one shared non-relevant sample per user, by removed share and by |T_u|."""
        s = self.s
        shared = self.protocol("TI", "1R", "NN", shared_nonrelevant=True)
        by_removal = pd.concat([self.run(shared, seeds=s.size_seeds, removed=r) for r in s.removed_rates],
                               ignore_index=True)
        by_size = pd.concat(
            [self.run(self.protocol("TI", "1R", "NN", size - 1, shared_nonrelevant=True, short_pool="shrink"),
                      seeds=s.size_seeds, roster_seeds=s.roster_seeds[:1]).assign(size=size)
             for size in s.target_sizes], ignore_index=True)
        self.results["lemma_removal"], self.results["lemma_size"] = by_removal, by_size
        return by_removal, by_size

    def proof_step(self) -> pd.DataFrame:
        """Share of 1R sets where each step of the lemma's proof holds, per system (one split)."""
        from ..splits import coin_flip

        s = self.s
        sp = coin_flip(self.ratings, s.sigma, seed=s.seed)
        sets = protocols.target_sets(sp.train, sp.test, self.protocol("TI", "1R", "NN", shared_nonrelevant=True),
                                     seed=s.seed, items=self.items)
        scorers = {**self.systems, **(self.cf if s.seed in s.roster_seeds else {})}
        rows = []
        for name, scores in protocols.score_all(scorers, sp.train, sets, s.seed).items():
            r = ex.lemma_ranks(protocols.attach_scores(sets, scores, missing="last"))
            rows.append({
                "system": name, "sets": len(r),
                "own <= union": float((r["own"] <= r["union"]).mean()),
                "union <= own + |PR|-1": float((r["union"] <= r["own"] + r["relevant"] - 1).mean()),
                "printed: own >= union + |PR|-1": float((r["own"] >= r["union"] + r["relevant"] - 1).mean()),
                "one relevant item": float((r["relevant"] == 1).mean()),
            })
        out = pd.DataFrame(rows)
        self.results["proof_step"] = out
        return out

    # -- §4: eqs. 3–5 ------------------------------------------------------------------------------

    def ar_checks(self) -> pd.DataFrame:
        """Per split (σ × seed) of AR TI-AN over all users: ρ and its parts, eq. 4, random's
        P@n (a fresh random ranking per split), and at the study's σ popularity's P@n beside
        eq. 3, its per-item conditional form and the exact expectation of a fixed ranking."""
        s = self.s
        p = self.protocol("TI", "AR", "AN", ar_users="all")
        n_pos = int(self.positive.sum())
        n_users = self.ratings["user"].nunique()
        counts = pop.item_counts(self.ratings)
        exact = ex.expected_precision_fixed_ranking(self.ratings, counts.index, s.sigma, s.n, s.threshold)
        rows = []
        for sigma in s.sigmas:
            here = sigma == s.sigma
            systems = self.systems if here else {"random": self.systems["random"]}
            for sd in s.check_seeds:
                cache = self.cache if here else None
                train, _, sets, _ = protocols.split_sets(self.ratings, p, sd, sigma=sigma, cache=cache)
                terms = ex.random_precision_terms(sets, sigma, n_pos, n_users)
                per = protocols.trials(self.ratings, p, systems, seeds=[sd], sigma=sigma, n=s.n, per_set=True,
                                       cache=cache, metrics=self.ar_metrics if here else ())
                means = per.groupby("system")["P"].mean()
                row = {"sigma": sigma, "seed": sd, **terms.to_dict(), "random": means["random"],
                       "candidates": int(sets["item"].nunique())}
                if here:
                    scored = protocols.attach_scores(sets, protocols.popularity_scorer(train, sets))
                    pc = ex.top_positive_counts(scored, s.n, self.positive)
                    rc = ex.top_positive_counts(scored, s.n, counts)
                    row.update({
                        "popularity": means["popularity"],
                        "eq3": ex.nonpersonalised_precision_ar(pc, sigma, sets["item"].nunique(), n_users,
                                                               1.0 / terms["inv_t"]),
                        "conditional": ex.conditional_precision_ar(pc, rc, sigma, n_users),
                        "exact": exact,
                    })
                rows.append(row)
        out = pd.DataFrame(rows)
        self.results["ar_checks"] = out
        return out

    def eq5(self) -> pd.DataFrame:
        """Random 1R TI-NN precision against 1/t over the check splits, for each σ."""
        s = self.s
        p = self.protocol("TI", "1R", "NN")
        rnd = {"random": self.systems["random"]}
        out = pd.concat([protocols.trials(self.ratings, p, rnd, seeds=s.check_seeds, sigma=sigma, n=s.n)
                         .assign(sigma=sigma) for sigma in s.sigmas], ignore_index=True)
        self.results["eq5"] = out
        return out

    def sparsity(self) -> pd.DataFrame:
        """AR TI-AN over all users against the removed share of test ratings (Fig. 4 left): P@n
        and nDCG@n per set, and recall@n from the metric engine (§4.2; NaN for users left without
        a relevant test item)."""
        s = self.s
        p_all = self.protocol("TI", "AR", "AN", ar_users="all")
        out = pd.concat([self.run(p_all, removed=r, metrics=[f"R@{s.n}"]) for r in s.removed_rates],
                        ignore_index=True).rename(columns={f"R@{s.n}": "recall"})
        self.results["ar_removal"] = out
        return out

    # -- §5: popularity ----------------------------------------------------------------------------

    def nonpersonalised(self) -> pd.DataFrame:
        """Per-set AR TI-AN precision of non-personalised rankings (§5.1), with the ceiling."""
        s = self.s
        others = {"most liked": protocols.liked_scorer(s.threshold), "mean rating": protocols.mean_rating_scorer(s.damping),
                  ORACLE: protocols.oracle_scorer}
        p = self.protocol("TI", "AR", "AN", ar_users="all")
        out = self.run(p, systems={**self.systems, **others})
        self.results["nonpersonalised"] = out
        return out

    def simulation(self) -> tuple[pd.DataFrame, pd.DataFrame]:
        """1R TI-NN on simulated ratings with shifted power-law popularity, for each α (Fig. 5)."""
        s = self.s
        counts = pop.item_counts(self.ratings)
        fit = pop.fit_shifted_power_law(counts)
        one_r = self.protocol("TI", "1R", "NN")
        runs, curves = [], []
        for k, a in enumerate(s.alphas):
            for sd in s.sim_seeds:
                sim = pop.simulate_like(self.ratings, a, seed=sd, fit=fit)
                # the roster systems train on the first seed's data, for every other α and the last
                with_cf = sd == s.sim_seeds[0] and (k % 2 == 0 or k == len(s.alphas) - 1)
                cf = {role: protocols.roster_scorer(name, dataset=f"{self.dataset}-simulated", split=f"alpha{a}")
                      for role, name in s.roster.items()} if with_cf else {}
                runs.append(protocols.trials(sim, one_r, {**self.systems, **cf}, seeds=[sd], sigma=s.sigma,
                                             n=s.n, per_set=True).assign(alpha=a))
            share = pop.cumulative_share(pop.item_counts(sim))
            curves.append(pd.DataFrame({"alpha": a, "item share": np.arange(1, len(share) + 1) / len(share),
                                        "rating share": share}))
        sim_runs, curve = pd.concat(runs, ignore_index=True), pd.concat(curves, ignore_index=True)
        self.results.update(simulation=sim_runs, curves=curve, fit=fit)
        return sim_runs, curve

    def positive_shares(self) -> dict[str, Any]:
        """Cumulative share of positive ratings held by the most liked items (Fig. 5 right)."""
        liked = self.positive.sort_values(ascending=False)
        share = pop.cumulative_share(liked.to_numpy())
        n_users = self.ratings["user"].nunique()
        out = {"curve": pd.DataFrame({"item share": np.arange(1, len(share) + 1) / len(self.items),
                                      "positive share": share}),
               "top_liked": float(liked.iloc[0] / n_users), "users": n_users,
               "single": float((liked == 1).mean())}
        self.results["positive_shares"] = out
        return out

    def positive_ratio(self) -> pd.DataFrame:
        """|PR(i)|/|R(i)| of every item with its popularity rank (Fig. 7)."""
        out = pop.positive_ratio_by_rank(self.ratings, self.s.threshold, segments=None)
        self.results["positive_ratio"] = out
        return out

    # -- §6: neutralising popularity -------------------------------------------------------------

    def uniform_size(self) -> dict[str, Any]:
        """|T| and η of the uniform-test split (§6.2)."""
        size, eta = protocols.uniform_test_size(pop.item_counts(self.ratings).to_numpy(), self.s.sigma, self.s.epsilon)
        out = {"size": size, "eta": eta, "test share": size * eta / len(self.ratings)}
        self.results["uniform_size"] = out
        return out

    def fig8(self) -> pd.DataFrame:
        """Per-set P@n and nDCG@n (rating gains) under the designs of Fig. 8, with TI and AI
        versions of P1R and UAR."""
        s = self.s
        size = self.results.get("uniform_size") or self.uniform_size()
        uniform = {"split": "uniform", "epsilon": s.epsilon}
        designs = {
            "1R": (self.protocol("TI", "1R", "NN"), {}),
            "U1R": (self.protocol("TI", "1R", "NN", short_pool="shrink"), uniform),
            "P1R": (self.protocol("TI", "1R", "NN", percentiles=s.percentiles, short_pool="shrink"), {}),
            "P1R (AI)": (self.protocol("AI", "1R", "NN", percentiles=s.percentiles, short_pool="shrink"), {}),
            "1R −10% head": (self.protocol("TI", "1R", "NN"), {"head": s.head}),
            "AR TI-NN": (self.protocol("TI", "AR", "NN", size["size"], short_pool="shrink"), {}),
            "UAR": (self.protocol("TI", "AR", "AN"), uniform),
            "AI-UAR": (self.protocol("AI", "AR", "AN"), uniform),
        }
        if not s.ai_designs:
            for name in ("P1R (AI)", "AI-UAR"):
                designs.pop(name)
        out = pd.concat([self.run(p, seeds=s.design_seeds, gain="rating", **kw).assign(design=name)
                         for name, (p, kw) in designs.items()], ignore_index=True)
        self.results["fig8"] = out
        return out

    def fig9(self) -> pd.DataFrame:
        """Per-set P@n, bpref, infAP and stratified recall from the metric engine (Fig. 9)."""
        s = self.s
        names = [f"P@{s.n}", "bpref", "infAP", f"SRecall(gamma={s.gamma:g})@{s.n}"]
        labels = dict(zip(names, ("P", "bpref", "infAP", "SRecall")))
        frames = []
        for sd in s.metric_seeds:
            for name, p in (("AR TI-AN", self.protocol("TI", "AR", "AN", ar_users="all")),
                            ("1R TI-NN", self.protocol("TI", "1R", "NN"))):
                train, _, sets, _ = protocols.split_sets(self.ratings, p, sd, sigma=s.sigma, cache=self.cache)
                scores = protocols.score_all({**self.systems, **(self.cf if sd in s.roster_seeds else {})},
                                             train, sets, sd)
                res = protocols.engine_metrics(sets, scores, names, s.threshold, popularity=self.positive, per_set=True,
                                               depth="judged")
                frames.append(res.assign(design=name, seed=sd))
        out = pd.concat(frames, ignore_index=True)
        out["metric"] = out["metric"].map(labels)
        self.results["fig9"] = out
        return out

    def identities(self) -> pd.DataFrame:
        """AP and RR in 1R (§6.3: MAP ≡ MRR), and nDCG with rating and binary gains in 1R and AR,
        at the graded threshold (relevant items of two or more grades), from the metric engine."""
        from ..splits import coin_flip

        s = self.s
        sp = coin_flip(self.ratings, s.sigma, seed=s.seed)
        rows = []
        lin, binary = f"nDCG(gain=linear)@{s.n}", f"nDCG(gain=binary)@{s.n}"
        # with only relevant items judged, lists cut after their last relevant item change nothing
        runs = (("1R TI-NN", "1R", s.graded_threshold, ["AP", "RR", lin, binary], "judged", self.systems),
                ("AR TI-NN", "AR", s.graded_threshold, [lin, binary], s.n, self.systems))
        for design, rel, threshold, metrics, depth, scorers in runs:
            p = Protocol("TI", rel, "NN", s.n_nonrelevant, threshold=threshold, short_pool="shrink")
            sets = protocols.target_sets(sp.train, sp.test, p, seed=s.seed, items=self.items)
            scores = protocols.score_all(scorers, sp.train, sets, s.seed)
            res = protocols.engine_metrics(sets, scores, metrics, threshold, judged="relevant", per_set=True,
                                           depth=depth)
            wide = res.pivot_table(index=["system", "set"], columns="metric", values="value").reset_index()
            rows.append(wide.assign(design=design, threshold=threshold))
        out = pd.concat(rows, ignore_index=True).rename(columns={lin: "nDCG rating gain", binary: "nDCG binary gain"})
        self.results["identities"] = out
        return out

    def run_all(self, *, table3: bool = False) -> dict[str, Any]:
        """Every experiment the ledger reads (and Table 3 if asked); returns :attr:`results`.

        The order lets designs shared by several figures reuse their target sets."""
        if table3:
            self.table3()
        self.coverage()
        self.fig2()
        self.wilcoxon()
        self.nonpersonalised()
        if self.s.engine_designs:
            self.fig9()
        self.ar_checks()
        self.sparsity()
        self.eq5()
        self.lemma()
        self.proof_step()
        self.simulation()
        self.positive_shares()
        self.positive_ratio()
        self.uniform_size()
        self.fig8()
        self.identities()
        self.release()
        return self.results


# ------------------------------------------------------------------------------------ the ledger

LEDGER = register(Ledger(CHAPTER, paper="bellogin2017statistical",
                         title="Statistical biases (Bellogín, Castells & Cantador 2017)"))

_ML1M = PAPER["dataset"]


def _claim(claim_id: str, *, needs: Sequence[str] = (), **kw: Any):
    """:meth:`Ledger.claim` with the study's settings and dataset name always among the needs."""
    extra = tuple(x for x in ("settings", "dataset") if x not in needs)
    return LEDGER.claim(claim_id, needs=(*extra, *needs), **kw)


def _s(results: Mapping[str, Any]) -> Settings:
    return results["settings"]


def _boot(results: Mapping[str, Any], table: pd.DataFrame, statistic: Callable[[Getter], Any]) -> Estimate:
    s = _s(results)
    return user_bootstrap(table, statistic, resamples=s.resamples, level=s.level, seed=s.seed)


def _design(frame: pd.DataFrame, name: str, column: str = "design") -> pd.DataFrame:
    return frame.loc[frame[column] == name]


def _absent(frame: pd.DataFrame, names: Iterable[str]) -> Outcome | None:
    """Not reproduced when a design did not run (the profile may leave out the costly ones)."""
    missing = [d for d in names if d not in set(pd.unique(frame["design"]))]
    if missing:
        return not_reproduced(f"design(s) {', '.join(missing)} did not run in this profile "
                              "(the second dataset's quick run leaves out the designs over all items)")
    return None


def _systems(frame: pd.DataFrame) -> list[str]:
    return list(pd.unique(frame["system"]))


def _missing(roles: Iterable[str], frame: pd.DataFrame) -> str | None:
    absent = [r for r in roles if r not in set(pd.unique(frame["system"]))]
    if absent:
        return (f"{', '.join(absent)} did not run here (the roster systems of the profile: "
                f"{', '.join(s for s in _systems(frame) if s not in ('popularity', 'random')) or 'none'})")
    return None


def _exact_bound(value: float, bound: float, label: str, below: bool = True) -> Outcome:
    ours = Estimate.exact(value)
    ok = value <= bound + 1e-12 if below else value >= bound - 1e-12
    side = "at most" if below else "at least"
    verdict = Verdict.AGREES if ok else Verdict.DIFFERS
    return Outcome(verdict, ours, f"{label} {format_number(value)} is {'' if ok else 'not '}{side} "
                                  f"{format_number(bound)}")


@_claim(
    "bellogin2017.eq1.bound", statement="1R precision never exceeds 1/n", source="§3.2–3.3, eq. 1",
    paper_value=PAPER["one_r_bound"], paper_dataset="any (n = 10)",
    rule="exact: the largest 1R P@n of every 1R run of the chapter must be ≤ 1/n",
    needs=("settings", "fig2", "lemma_removal", "lemma_size", "fig8"))
def _eq1(r):
    n = _s(r).n
    one_r = [protocols.summarise(_design(r["fig2"], "1R TI-NN"))["P"],
             protocols.summarise(r["lemma_removal"])["P"], protocols.summarise(r["lemma_size"], by=["size"])["P"],
             protocols.summarise(r["fig8"].loc[~r["fig8"]["design"].isin(["AR TI-NN", "UAR", "AI-UAR"])],
                                 by=["design"])["P"]]
    top = float(pd.concat(one_r).max())
    return _exact_bound(top, 1 / n, f"the largest 1R P@{n} over all runs")


@_claim(
    "bellogin2017.fig2.ai-ti", statement="AI and TI candidates give almost the same results, because "
    "nearly every item has a test rating", source="§3.3, Fig. 2",
    paper_value="AI ≈ TI", paper_dataset=_ML1M,
    rule="value rule on ρ(TI-AN)/ρ(AI-AN) − 1, the relative change of random AR precision "
         "(exact per split, t interval over splits), against 0 with a tolerance of 0.05",
    needs=("coverage",))
def _ai_ti(r):
    c = r["coverage"]
    gap = c["rho TI-AN"] / c["rho AI-AN"] - 1
    out = value_rule(0.0, _over_splits(gap), 0.05, label="ρ(TI)/ρ(AI) − 1")
    share = float(r["coverage"]["no test rating"].mean())
    return _append(out, f"{share:.1%} of the items have no test rating in our splits, so TI drops them "
                        "from every target set")


@_claim(
    "bellogin2017.fig2.popularity-ar", statement="popularity's AR P@10 is about 0.08 on MovieLens",
    source="§3.3, Fig. 2", paper_value=PAPER["popularity_ar"], paper_dataset=_ML1M,
    rule="value rule on popularity's AR TI-AN P@n (bootstrap over users), tolerance 0.005 "
         "(half a unit of the printed digit)",
    needs=("settings", "fig2"))
def _pop_ar(r):
    est = protocol_estimate(_design(r["fig2"], "AR TI-AN"), "popularity", _s(r))
    return value_rule(PAPER["popularity_ar"], est, 0.005, label="popularity")


@_claim(
    "bellogin2017.fig2.popularity-beats-random", statement="popularity, a non-personalised system, "
    "fares far better than random in every design of Fig. 2", source="§3.3, Fig. 2",
    paper_value="popularity ≫ random", paper_dataset=_ML1M,
    rule="sign rule on popularity − random P@n (paired bootstrap over users) in each design; "
         "the design with the smallest lower bound decides",
    needs=("settings", "fig2"))
def _pop_random(r):
    worst = None
    for d in [d for d in FIG2_DESIGNS if d in set(pd.unique(r["fig2"]["design"]))]:
        t = user_table({d: (_design(r["fig2"], d), ["popularity", "random"])})
        est = _boot(r, t, lambda get, d=d: get(d, "popularity") - get(d, "random"))
        if worst is None or est.low < worst[1].low:
            worst = (d, est)
    d, est = worst
    return sign_rule(est, "positive", label=f"popularity − random under {d}")


def _order_in(r: Mapping[str, Any], frame: pd.DataFrame, systems: Sequence[str], metric: str = "P") -> dict[str, Estimate]:
    table = user_table({"x": (frame, systems)}, metric)
    return {sy: _boot(r, table, lambda get, sy=sy: get("x", sy)) for sy in systems}


@_claim(
    "bellogin2017.fig2.plsa-best", statement="pLSA performs best in most designs of Fig. 2",
    source="§3.3, Fig. 2", paper_value="pLSA", paper_dataset=_ML1M,
    rule="order rule (bootstrap intervals over users) in each design of Fig. 2, on the splits every "
         "system ran on; most designs decide",
    needs=("settings", "fig2"))
def _plsa(r):
    f = r["fig2"]
    why = _missing(["pLSA"], f)
    if why:
        return not_reproduced(why)
    outs = {d: order_rule(_order_in(r, _design(f, d), _systems(_design(f, d))), "pLSA")
            for d in FIG2_DESIGNS if d in set(pd.unique(f["design"]))}
    votes = pd.Series([o.verdict for o in outs.values()]).value_counts()
    verdict = votes.index[0] if votes.iloc[0] >= 2 else Verdict.INCONCLUSIVE
    detail = "; ".join(f"{d}: {o.detail}" for d, o in outs.items())
    return Outcome(verdict, next(iter(outs.values())).ours, "; ".join(f"{d}: {o.verdict}" for d, o in outs.items()), detail)


@_claim(
    "bellogin2017.fig2.wilcoxon", statement="every pairwise difference between the systems of Fig. 2 "
    "(1R, |T_u| = 100) is significant, Wilcoxon p ≪ 0.001", source="§3.3",
    paper_value="p ≪ 0.001", paper_dataset=_ML1M,
    rule="the largest two-sided Wilcoxon signed-rank p-value over pairs of systems (per-user 1R "
         "P@n) must be below 0.001",
    needs=("wilcoxon",))
def _wilcoxon(r):
    w = r["wilcoxon"]
    worst = w.loc[w["p"].idxmax()] if w["p"].notna().any() else w.iloc[0]
    p = float(worst["p"])
    ours = Estimate.point(p, method=f"Wilcoxon signed-rank test over {int(worst['users'])} users, "
                                    f"largest p of {len(w)} pairs")
    ok = p < PAPER["wilcoxon_p"]
    text = f"the largest p, {worst['a']} against {worst['b']}, is {p:.2g}"
    return Outcome(Verdict.AGREES if ok else Verdict.DIFFERS, ours,
                   text + (" (below 0.001)" if ok else " (not below 0.001)"))


def _lemma_rows(r: Mapping[str, Any]) -> pd.DataFrame:
    a = protocols.summarise(r["lemma_removal"])
    b = protocols.summarise(r["lemma_size"], by=["size"])
    return pd.concat([a, b], ignore_index=True)


@_claim(
    "bellogin2017.eq2.bounds", statement="with one non-relevant sample per user, 1R precision lies "
    "between the AR bounds of the lemma", source="§3.4, eq. 2",
    paper_value="lower ≤ 1R-P@n ≤ upper", paper_dataset="any",
    rule="exact: the smallest margin min(1R-P − lower, upper − 1R-P) over every run must be ≥ 0",
    needs=("lemma_removal", "lemma_size"))
def _eq2(r):
    rows = _lemma_rows(r)
    margin = round(float(np.minimum(rows["P"] - rows["lower"], rows["upper"] - rows["P"]).min()), 12) + 0.0
    return _exact_bound(margin, 0.0, f"the smallest margin over {len(rows)} runs", below=False)


@_claim(
    "bellogin2017.eq2.proof-step", statement="the proof's second step: τ(i, T_u^r) ≥ τ(i, T_u) + "
    "|PR_test(u)| − 1 for every 1R set", source="§3.4, proof of eq. 2",
    paper_value=1.0, paper_dataset="any",
    rule="exact: share of 1R sets (shared sample, every system, one split) where the printed "
         "inequality holds, against 1",
    needs=("proof_step",))
def _proof(r):
    p = r["proof_step"]
    w = p["sets"] / p["sets"].sum()
    printed = float((p["printed: own >= union + |PR|-1"] * w).sum())
    needed = float((p["union <= own + |PR|-1"] * w).sum())
    out = value_rule(1.0, Estimate.exact(printed), label="share of sets")
    return _append(out, f"the reversed step the bound needs, τ(i, T_u) ≤ τ(i, T_u^r) + |PR_test(u)| − 1, "
                        f"holds in a share {format_number(needed)} of them")


def _band(frame: pd.DataFrame, x: str, relative: bool = False) -> Estimate:
    """Band upper − lower (or over 1R-P) at the largest x minus at the smallest, over (system, split)."""
    rows = protocols.summarise(frame, by=[x] if x != "removed" else [])
    rows["band"] = rows["upper"] - rows["lower"]
    if relative:
        rows["band"] /= rows["P"]
    lo, hi = rows[x].min(), rows[x].max()
    wide = rows.pivot_table(index=["system", "seed"], columns=x, values="band")
    d = (wide[hi] - wide[lo]).dropna()
    return _over_splits(d, "(system, split) pairs")


def _band_outcome(frame: pd.DataFrame, x: str) -> Outcome:
    out = sign_rule(_band(frame, x), "negative", label="change of the band")
    rel = _band(frame, x, relative=True)
    return _append(out, f"relative to 1R-P@n the band changes by {format_estimate(rel)}")


@_claim(
    "bellogin2017.fig3.band-sparsity", statement="the lemma's band narrows as test ratings are removed",
    source="§3.4, Fig. 3 left", paper_value="narrows", paper_dataset=_ML1M,
    rule="sign rule on the band upper − lower at the largest removed share minus at none "
         "(t interval over systems and splits)",
    needs=("lemma_removal",))
def _band_sparsity(r):
    return _band_outcome(r["lemma_removal"], "removed")


@_claim(
    "bellogin2017.fig3.band-size", statement="the lemma's band narrows as the target sets grow",
    source="§3.4, Fig. 3 right", paper_value="narrows", paper_dataset=_ML1M,
    rule="sign rule on the band upper − lower at the largest |T_u| minus at the smallest "
         "(t interval over systems and splits)",
    needs=("lemma_size",))
def _band_size(r):
    return _band_outcome(r["lemma_size"], "size")


def _at_sigma(r: Mapping[str, Any], frame: pd.DataFrame) -> pd.DataFrame:
    return frame.loc[np.isclose(frame["sigma"], _s(r).sigma)]


@_claim(
    "bellogin2017.eq4.monte-carlo", statement="random AR precision matches σδ (eq. 4)",
    source="§4.1–4.2, eq. 4", paper_value="σδ", paper_dataset=_ML1M,
    rule="value rule: random's AR TI-AN P@n over all users (t interval over the check splits) "
         "against eq. 4 on the same splits; an interval wider than eq. 4's value is too wide to tell",
    needs=("settings", "ar_checks"))
def _eq4_mc(r):
    c = _at_sigma(r, r["ar_checks"])
    f = float(c["eq4"].mean())
    out = value_rule(f, _over_splits(c["random"]), label="random P@n", max_width=f)
    return _append(out, f"eq. 4 gives {format_number(float(c['eq4'].mean()))}")


@_claim(
    "bellogin2017.eq4.exact", statement="eq. 4 gives the expected precision ρ of a random ranking",
    source="§4.1–4.2, eq. 4", paper_value="ρ ≈ σδ", paper_dataset=_ML1M,
    rule="value rule on ρ/σδ − 1 (ρ exact per split, t interval over the check splits) against 0",
    needs=("settings", "ar_checks"))
def _eq4_exact(r):
    c = _at_sigma(r, r["ar_checks"])
    out = value_rule(0.0, _over_splits(c["rho"] / c["eq4"] - 1), label="ρ/σδ − 1")
    cov = _over_splits(c["cov"] / c["eq4"])
    split = float((c["split"] / c["eq4"]).mean())
    return _append(out, f"the covariance of |PR_test(u)| and 1/|T_u| alone adds {format_estimate(cov)} "
                        f"of eq. 4, the split's own |PR_test| {format_number(split)} on average")


@_claim(
    "bellogin2017.eq5.random-1r", statement="random 1R precision is 1/t (eq. 5)", source="§4.1, eq. 5",
    paper_value="1/t", paper_dataset="any",
    rule="value rule: random's 1R TI-NN P@n (t interval over the check splits) against 1/t; an "
         "interval wider than 1/t is too wide to tell",
    needs=("settings", "eq5"))
def _eq5(r):
    c = _at_sigma(r, r["eq5"])
    f = float(c["formula"].mean())
    return value_rule(f, _over_splits(c["P"]), label="random 1R P@n", max_width=f)


def _ratio(r: Mapping[str, Any], frame: pd.DataFrame, x: str, system: str, lo: Any, hi: Any,
           scale: Callable[[Any], float] = lambda v: 1.0, metric: str = "P") -> Estimate:
    parts = {str(v): (frame.loc[frame[x] == v], [system]) for v in (lo, hi)}
    t = user_table(parts, metric)
    return _boot(r, t, lambda get: get(str(hi), system) * scale(hi) / (get(str(lo), system) * scale(lo)))


@_claim(
    "bellogin2017.fig4.ar-linear", statement="AR precision falls in proportion to the test ratings left "
    "(linear in δ), for popularity as for random", source="§4.2, Fig. 4 left",
    paper_value="P ∝ 1 − removed", paper_dataset=_ML1M,
    rule="value rule on popularity's P@n(largest removed share)/P@n(none) (bootstrap over users) "
         "against 1 − removed share",
    needs=("ar_removal",))
def _fig4_ar(r):
    f = r["ar_removal"]
    lo, hi = f["removed"].min(), f["removed"].max()
    return value_rule(1 - hi, _ratio(r, f, "removed", "popularity", lo, hi), label="ratio")


@_claim(
    "bellogin2017.fig4.1r-flat", statement="1R precision does not depend on the amount of test ratings",
    source="§4.2, Fig. 4 centre", paper_value=1.0, paper_dataset=_ML1M,
    rule="value rule on popularity's 1R P@n(largest removed share)/1R P@n(none) (bootstrap over "
         "users) against 1",
    needs=("lemma_removal",))
def _fig4_1r(r):
    f = r["lemma_removal"]
    return value_rule(1.0, _ratio(r, f, "removed", "popularity", f["removed"].min(), f["removed"].max()),
                      label="ratio")


@_claim(
    "bellogin2017.fig4.1r-size", statement="1R precision is inversely proportional to the target-set "
    "size t, for popularity as for random", source="§4.2, Fig. 4 right", paper_value=1.0, paper_dataset=_ML1M,
    rule="value rule on popularity's t·P@n at the largest |T_u| over t·P@n at the smallest "
         "(bootstrap over users) against 1",
    needs=("lemma_size",))
def _fig4_size(r):
    f = r["lemma_size"]
    t = f.groupby("size")["t"].mean()
    return value_rule(1.0, _ratio(r, f, "size", "popularity", f["size"].min(), f["size"].max(),
                                  scale=lambda v: float(t[v])), label="t·P ratio")


@_claim(
    "bellogin2017.fig4.order", statement="test sparsity does not change how the systems compare",
    source="§4.2, Fig. 4 left", paper_value="same order", paper_dataset=_ML1M,
    rule="the order of the systems by AR P@n at no removal and at the largest removed share: the "
         "same → agrees; a swap of two systems whose paired bootstrap intervals exclude 0 at both "
         "ends → differs; any other swap → inconclusive",
    needs=("ar_removal",))
def _fig4_order(r):
    f = r["ar_removal"]
    lo, hi = f["removed"].min(), f["removed"].max()
    systems = _systems(f)
    parts = {f"{v}": (f.loc[f["removed"] == v], systems) for v in (lo, hi)}
    t = user_table(parts)
    means = {v: {sy: float(t[f"{v}|{sy}"].sum() / t[f"{v}|w"].sum()) for sy in systems} for v in (lo, hi)}
    orders = {v: sorted(systems, key=lambda sy, v=v: -means[v][sy]) for v in (lo, hi)}
    detail = f"removed {lo:g}: {' > '.join(orders[lo])}; removed {hi:g}: {' > '.join(orders[hi])}"
    swapped, firm = [], []
    for i, a in enumerate(systems):
        for b in systems[i + 1:]:
            if (means[lo][a] - means[lo][b]) * (means[hi][a] - means[hi][b]) < 0:
                swapped.append((a, b))
                ests = [_boot(r, t, lambda get, v=v: get(str(v), a) - get(str(v), b)) for v in (lo, hi)]
                if all(e.low > 0 or e.high < 0 for e in ests):
                    firm.append((a, b))
    ours = Estimate.exact(float(len(swapped)), method="number of swapped pairs")
    if not swapped:
        return Outcome(Verdict.AGREES, ours, "no pair of systems changes order", detail)
    names = ", ".join(f"{a}/{b}" for a, b in swapped)
    if firm:
        return Outcome(Verdict.DIFFERS, ours, f"{names} swap, with intervals excluding a tie", detail)
    return Outcome(Verdict.INCONCLUSIVE, ours, f"{names} swap, but their intervals allow a tie", detail)


def _removal_ratio(r: Mapping[str, Any], metric: str) -> Estimate:
    f = r["ar_removal"].dropna(subset=[metric])
    return _ratio(r, f, "removed", "popularity", f["removed"].min(), f["removed"].max(), metric=metric)


@_claim(
    "bellogin2017.sec4.2.recall", statement="recall is quite unaffected by test sparsity",
    source="§4.2", paper_value=1.0, paper_dataset=_ML1M,
    rule="value rule on popularity's recall@n(largest removed share)/recall@n(none), AR TI-AN, "
         "metric engine, users with a relevant test item (bootstrap over users), against 1",
    needs=("ar_removal",))
def _recall(r):
    return value_rule(1.0, _removal_ratio(r, "recall"), label="recall ratio")


@_claim(
    "bellogin2017.sec4.2.ndcg", statement="nDCG@n falls with test sparsity too, a little less steeply "
    "than P@n", source="§4.2", paper_value="P ratio < nDCG ratio < 1", paper_dataset=_ML1M,
    rule="popularity's AR TI-AN nDCG@n ratio (largest removed share over none) must lie below 1 "
         "and above the P@n ratio: sign rules on 1 − ratio and on the difference of the ratios "
         "(bootstrap over users)",
    needs=("ar_removal",))
def _ndcg(r):
    f = r["ar_removal"]
    lo, hi = f["removed"].min(), f["removed"].max()
    parts = {f"{m}{v}": (f.loc[f["removed"] == v].assign(value=f[m]), ["popularity"])
             for m in ("P", "nDCG") for v in (lo, hi)}
    t = user_table(parts, "value")

    def ratio(get, m):
        return get(f"{m}{hi}", "popularity") / get(f"{m}{lo}", "popularity")

    falls = sign_rule(_boot(r, t, lambda get: 1 - ratio(get, "nDCG")), "positive", label="1 − nDCG ratio")
    slower = sign_rule(_boot(r, t, lambda get: ratio(get, "nDCG") - ratio(get, "P")), "positive",
                       label="nDCG ratio − P ratio")
    est = _boot(r, t, lambda get: ratio(get, "nDCG"))
    return Outcome(_join([falls, slower]), est, f"{falls.reason}; {slower.reason}")


@_claim(
    "bellogin2017.eq3.popularity", statement="a non-personalised system's AR precision follows eq. 3",
    source="§4.1, §5.1, eq. 3", paper_value="eq. 3", paper_dataset=_ML1M,
    rule="value rule: popularity's AR TI-AN P@n over all users (t interval over the check splits) "
         "against eq. 3 evaluated with the items each user's list shows",
    needs=("settings", "ar_checks"))
def _eq3(r):
    c = _at_sigma(r, r["ar_checks"]).dropna(subset=["popularity"])
    out = value_rule(float(c["eq3"].mean()), _over_splits(c["popularity"]), label="popularity P@n")
    return _append(out, f"eq. 3 gives {format_number(float(c['eq3'].mean()))}, the per-item conditional "
                        f"form {format_number(float(c['conditional'].mean()))}, the exact expectation of "
                        f"the ranking by |R(i)| {format_number(float(c['exact'].mean()))}")


@_claim(
    "bellogin2017.sec5.1.popularity-best", statement="popularity is the best non-personalised "
    "recommender", source="§5.1", paper_value="popularity", paper_dataset="any",
    rule="order rule (bootstrap intervals over users) on AR TI-AN P@n among popularity, the most "
         "liked items, the damped mean rating and random",
    needs=("settings", "nonpersonalised"))
def _best_np(r):
    f = r["nonpersonalised"]
    systems = [s for s in NONPERSONALISED if s in set(pd.unique(f["system"]))]
    return order_rule(_order_in(r, f, systems), "popularity")


def _alpha(frame: pd.DataFrame, which: str) -> float:
    return float(frame["alpha"].min() if which == "min" else frame["alpha"].max())


def _sim_estimate(r: Mapping[str, Any], alpha: float, stat: Callable[[Getter], Any], systems: Sequence[str]) -> Estimate:
    f = r["simulation"]
    t = user_table({"a": (f.loc[np.isclose(f["alpha"], alpha)], systems)})
    return _boot(r, t, stat)


def _alpha_zero(r: Mapping[str, Any]) -> Outcome | None:
    if not np.isclose(_alpha(r["simulation"], "min"), 0.0):
        return not_reproduced("the simulation does not include α = 0 (parameter alphas)")
    return None


@_claim(
    "bellogin2017.fig5.random-alpha0", statement="random 1R P@10 on simulated data with uniform "
    "popularity (α = 0)", source="§5.2, Fig. 5 centre", paper_value=PAPER["alpha0_random"],
    paper_dataset="ML-1M-shaped simulation",
    rule="value rule on random's 1R TI-NN P@n at α = 0 (bootstrap over simulated users), tolerance "
         "0.00005 (half a printed digit)",
    needs=("settings", "simulation"))
def _rnd0(r):
    return _alpha_zero(r) or value_rule(
        PAPER["alpha0_random"], _sim_estimate(r, 0.0, lambda get: get("a", "random"), ["random"]), 0.00005,
        label="random")


@_claim(
    "bellogin2017.fig5.popularity-alpha0", statement="popularity 1R P@10 on simulated data with "
    "uniform popularity (α = 0)", source="§5.2, Fig. 5 centre", paper_value=PAPER["alpha0_popularity"],
    paper_dataset="ML-1M-shaped simulation",
    rule="value rule on popularity's 1R TI-NN P@n at α = 0 (bootstrap over simulated users), "
         "tolerance 0.00005",
    needs=("settings", "simulation"))
def _pop0(r):
    return _alpha_zero(r) or value_rule(
        PAPER["alpha0_popularity"], _sim_estimate(r, 0.0, lambda get: get("a", "popularity"), ["popularity"]),
        0.00005, label="popularity")


@_claim(
    "bellogin2017.fig5.below-random", statement="with uniform popularity (α = 0) popularity falls "
    "slightly below random", source="§5.1–5.2, Fig. 5 centre", paper_value="popularity < random",
    paper_dataset="ML-1M-shaped simulation",
    rule="sign rule on popularity − random 1R P@n at α = 0 (paired bootstrap over simulated users)",
    needs=("settings", "simulation"))
def _below0(r):
    return _alpha_zero(r) or sign_rule(
        _sim_estimate(r, 0.0, lambda get: get("a", "popularity") - get("a", "random"), ["popularity", "random"]),
        "negative", label="popularity − random")


@_claim(
    "bellogin2017.fig5.rises", statement="popularity's precision grows with the popularity skew α",
    source="§5.2, Fig. 5 centre", paper_value="rises", paper_dataset="ML-1M-shaped simulation",
    rule="sign rule on popularity's 1R P@n at the largest α minus at the smallest (bootstrap over "
         "simulated users)",
    needs=("settings", "simulation"))
def _rises(r):
    f = r["simulation"]
    lo, hi = _alpha(f, "min"), _alpha(f, "max")
    t = user_table({str(a): (f.loc[np.isclose(f["alpha"], a)], ["popularity"]) for a in (lo, hi)})
    return sign_rule(_boot(r, t, lambda get: get(str(hi), "popularity") - get(str(lo), "popularity")),
                     "positive", label=f"P(α={hi:g}) − P(α={lo:g})")


@_claim(
    "bellogin2017.fig5.cf-near-random", statement="kNN and MF stay around random on the simulated data",
    source="§5.2, Fig. 5 centre", paper_value=0.0, paper_dataset="ML-1M-shaped simulation",
    rule="value rule on system − random 1R P@n at the largest α (paired bootstrap over simulated "
         "users) against 0, for MF and user-kNN; the one farther from 0 decides",
    needs=("settings", "simulation"))
def _cf_random(r):
    f = r["simulation"]
    hi = _alpha(f, "max")
    at = f.loc[np.isclose(f["alpha"], hi)]
    roles = [x for x in ("MF", "user-kNN") if x in set(pd.unique(at["system"]))]
    if not roles:
        return not_reproduced(_missing(["MF", "user-kNN"], at) or "no MF or kNN run at the largest α")
    outs = [value_rule(0.0, _sim_estimate(r, hi, lambda get, x=x: get("a", x) - get("a", "random"), [x, "random"]),
                       label=f"{x} − random at α={hi:g}") for x in roles]
    worst = max(outs, key=lambda o: abs(o.ours.value))
    return Outcome(worst.verdict, worst.ours, "; ".join(o.reason for o in outs))


@_claim(
    "bellogin2017.fig5.plsa-tracks", statement="pLSA closely matches popularity on the simulated data",
    source="§5.2, Fig. 5 centre", paper_value=0.0, paper_dataset="ML-1M-shaped simulation",
    rule="value rule on pLSA − popularity 1R P@n at the largest α (paired bootstrap over simulated "
         "users) against 0",
    needs=("settings", "simulation"))
def _plsa_sim(r):
    f = r["simulation"]
    hi = _alpha(f, "max")
    at = f.loc[np.isclose(f["alpha"], hi)]
    why = _missing(["pLSA"], at)
    if why:
        return not_reproduced(why)
    return value_rule(0.0, _sim_estimate(r, hi, lambda get: get("a", "pLSA") - get("a", "popularity"),
                                         ["pLSA", "popularity"]), label=f"pLSA − popularity at α={hi:g}")


def _ml1m_only(r: Mapping[str, Any], what: str, ours: str) -> Outcome:
    return Outcome(Verdict.NOT_REPRODUCED, None,
                   f"{what} is a property of ML-1M, which is not run here; ours on {r['dataset']}: {ours}", ours)


def _is_ml1m(r: Mapping[str, Any]) -> bool:
    return str(r["dataset"]).lower() in ("ml-1m", "ml1m", "movielens-1m")


@_claim(
    "bellogin2017.fig5.alpha", statement="the popularity skew of MovieLens 1M is α ≈ 1.4",
    source="§5.2", paper_value=PAPER["alpha"], paper_dataset=_ML1M,
    rule="on ML-1M: value rule on our fitted α (least squares, no interval), tolerance 0.05; "
         "elsewhere not reproduced",
    needs=("dataset", "fit"))
def _alpha_fit(r):
    fit = r["fit"]
    if not _is_ml1m(r):
        return _ml1m_only(r, "α", f"α = {fit.alpha:.2f} with c2 = {fit.c2:.3g}")
    return value_rule(PAPER["alpha"], Estimate.point(fit.alpha, method="least-squares fit"), 0.05, label="α")


@_claim(
    "bellogin2017.fig5.top-liked", statement="the most liked MovieLens item is liked by 32.7 % of "
    "the users", source="§5.2, Fig. 5 right", paper_value=PAPER["top_liked"], paper_dataset=_ML1M,
    rule="on ML-1M: value rule on the exact share, tolerance 0.0005; elsewhere not reproduced",
    needs=("dataset", "positive_shares"))
def _top_liked(r):
    x = r["positive_shares"]["top_liked"]
    if not _is_ml1m(r):
        return _ml1m_only(r, "the share", f"{x:.1%}")
    return value_rule(PAPER["top_liked"], Estimate.exact(x), 0.0005, label="share")


@_claim(
    "bellogin2017.fig7.ratio-grows", statement="the share of positive ratings grows with popularity",
    source="§6.2, Fig. 7", paper_value="grows", paper_dataset=_ML1M,
    rule="sign rule on Spearman's correlation of |R(i)| and |PR(i)|/|R(i)| over items (percentile "
         "bootstrap over items)",
    needs=("settings", "positive_ratio"))
def _fig7(r):
    from scipy import stats

    s = _s(r)
    f = r["positive_ratio"]
    x, y = f["count"].to_numpy(float), f["ratio"].to_numpy(float)
    rho = stats.spearmanr(x, y).statistic
    rng = np.random.default_rng(s.seed)
    idx = rng.integers(0, len(x), size=(s.resamples, len(x)))
    rx = stats.rankdata(x[idx], axis=1)
    ry = stats.rankdata(y[idx], axis=1)
    rx -= rx.mean(axis=1, keepdims=True)
    ry -= ry.mean(axis=1, keepdims=True)
    reps = (rx * ry).sum(axis=1) / np.sqrt((rx ** 2).sum(axis=1) * (ry ** 2).sum(axis=1))
    est = Estimate.from_samples(reps, s.level, value=float(rho),
                                method=f"percentile bootstrap over {len(x)} items ({s.resamples} resamples), 95 %")
    return sign_rule(est, "positive", label="Spearman ρ")


@_claim(
    "bellogin2017.sec6.2.uniform-size", statement="the uniform-test split of MovieLens 1M (σ = 0.2, "
    "ε = 0.2) has |T| = 1,703 items with η = 118 test ratings each", source="§6.2",
    paper_value=f"|T| = {PAPER['uniform_size']}, η = {PAPER['uniform_eta']}", paper_dataset=_ML1M,
    rule="on ML-1M: exact |T| and η must equal the paper's; elsewhere not reproduced",
    needs=("dataset", "uniform_size"))
def _uniform(r):
    u = r["uniform_size"]
    text = f"|T| = {u['size']}, η = {u['eta']}"
    if not _is_ml1m(r):
        return _ml1m_only(r, "|T| (with η)", text)
    ok = (u["size"], u["eta"]) == (PAPER["uniform_size"], PAPER["uniform_eta"])
    return Outcome(Verdict.AGREES if ok else Verdict.DIFFERS, Estimate.exact(u["size"]),
                   f"ours {text}", text)


def _fig8_lift(r: Mapping[str, Any], a: str, b: str | Sequence[str], expected: str, *, worst: str = "max") -> Outcome:
    """Sign rule on lift(a) − lift(b) (popularity over random); with several b, the max or min."""
    f = r["fig8"]
    bs = [b] if isinstance(b, str) else list(b)
    if (gone := _absent(f, [a, *bs])) is not None:
        return gone
    t = user_table({d: (_design(f, d), ["popularity", "random"]) for d in [a, *bs]})
    pick = np.maximum if worst == "max" else np.minimum

    def stat(get):
        other = lift(get, bs[0])
        for d in bs[1:]:
            other = pick(other, lift(get, d))
        return lift(get, a) - other

    label = f"lift({a}) − {worst}({', '.join(f'lift({d})' for d in bs)})" if len(bs) > 1 else f"lift({a}) − lift({bs[0]})"
    return sign_rule(_boot(r, t, stat), expected, label=label)


@_claim(
    "bellogin2017.fig8.u1r", statement="U1R reduces popularity's advantage over random",
    source="§6.3, Fig. 8", paper_value="lift(U1R) < lift(1R)", paper_dataset=_ML1M,
    rule="sign rule on lift(U1R) − lift(1R), lift = popularity P@n / random P@n (bootstrap over users)",
    needs=("settings", "fig8"))
def _u1r(r):
    return _fig8_lift(r, "U1R", "1R", "negative")


@_claim(
    "bellogin2017.fig8.p1r", statement="P1R neutralises popularity even more than U1R",
    source="§6.3, Fig. 8", paper_value="lift(P1R) < lift(U1R)", paper_dataset=_ML1M,
    rule="sign rule on lift(P1R, TI candidates) − lift(U1R) (bootstrap over users)",
    needs=("settings", "fig8"))
def _p1r(r):
    return _fig8_lift(r, "P1R", "U1R", "negative")


@_claim(
    "bellogin2017.fig8.head", statement="removing the 10 % most popular items reduces popularity's "
    "advantage less than the proposed designs", source="§6.3, Fig. 8",
    paper_value="lift(−10% head) > lift(U1R), lift(P1R)", paper_dataset=_ML1M,
    rule="sign rule on lift(1R −10% head) − max(lift(U1R), lift(P1R)) (bootstrap over users)",
    needs=("settings", "fig8"))
def _head(r):
    return _fig8_lift(r, "1R −10% head", ["U1R", "P1R"], "positive")


@_claim(
    "bellogin2017.fig8.uar", statement="UAR lowers popularity's advantage in AR",
    source="§6.3, Fig. 8", paper_value="lift(UAR) < lift(AR)", paper_dataset=_ML1M,
    rule="sign rule on lift(UAR) − lift(AR TI-NN with |N_u| = |T|) (bootstrap over users)",
    needs=("settings", "fig8"))
def _uar(r):
    return _fig8_lift(r, "UAR", "AR TI-NN", "negative")


@_claim(
    "bellogin2017.fig8.ai-uar", statement="without the TI policy (AI-UAR) a higher popularity bias "
    "remains", source="§6.3, Fig. 8", paper_value="lift(AI-UAR) > lift(UAR)", paper_dataset=_ML1M,
    rule="sign rule on lift(AI-UAR) − lift(UAR) (bootstrap over users)",
    needs=("settings", "fig8"))
def _ai_uar(r):
    return _fig8_lift(r, "AI-UAR", "UAR", "positive")


@_claim(
    "bellogin2017.fig8.uar-knn", statement="in UAR popularity stays above kNN", source="§6.3, Fig. 8",
    paper_value="popularity > kNN", paper_dataset=_ML1M,
    rule="sign rule on popularity − user-kNN UAR P@n (paired bootstrap over users)",
    needs=("settings", "fig8"))
def _uar_knn(r):
    f = _design(r["fig8"], "UAR")
    why = _missing(["user-kNN"], f)
    if why:
        return not_reproduced(why)
    t = user_table({"UAR": (f, ["popularity", "user-kNN"])})
    return sign_rule(_boot(r, t, lambda get: get("UAR", "popularity") - get("UAR", "user-kNN")), "positive",
                     label="popularity − user-kNN")


@_claim(
    "bellogin2017.fig8.plsa-best", statement="pLSA remains the best system in every design of Fig. 8",
    source="§6.3, Fig. 8", paper_value="pLSA", paper_dataset=_ML1M,
    rule="order rule (bootstrap intervals over users) in each design of Fig. 8 the paper runs: all "
         "agree → agrees, any differs → differs",
    needs=("settings", "fig8"))
def _plsa8(r):
    f = r["fig8"]
    why = _missing(["pLSA"], f)
    if why:
        return not_reproduced(why)
    outs = {}
    for d in ("1R", "U1R", "P1R", "1R −10% head", "AR TI-NN", "UAR"):
        g = _design(f, d)
        outs[d] = order_rule(_order_in(r, g, _systems(g)), "pLSA")
    verdict = _join(list(outs.values()))
    bad = [d for d, o in outs.items() if o.verdict != Verdict.AGREES]
    reason = "pLSA is alone at the top in every design" if not bad else \
        "; ".join(f"{d}: {outs[d].reason}" for d in bad)
    return Outcome(verdict, outs["1R"].ours, reason, "; ".join(f"{d}: {o.detail}" for d, o in outs.items()))


@_claim(
    "bellogin2017.sec6.3.map-mrr", statement="in 1R, MAP is equivalent to MRR", source="§6.3",
    paper_value="AP = RR", paper_dataset="any",
    rule="exact: the largest |AP − RR| over every 1R set and system (metric engine) must be 0",
    needs=("settings", "identities"))
def _map_mrr(r):
    f = r["identities"]
    f = f.loc[f["design"] == "1R TI-NN"]
    gap = float((f["AP"] - f["RR"]).abs().max())
    return _exact_bound(gap, 0.0, f"the largest |AP − RR| over {len(f)} sets")


@_claim(
    "bellogin2017.sec6.3.grades", statement="nDCG ignores the relevance grades in 1R, not in AR",
    source="§6.3", paper_value="1R: equal; AR: differ", paper_dataset="any",
    rule="exact, at the graded threshold (several grades of relevance): the largest |nDCG(rating "
         "gain) − nDCG(binary gain)| must be 0 over the 1R sets and above 0 over the AR sets",
    needs=("settings", "identities"))
def _grades(r):
    s = _s(r)
    f = r["identities"]
    f = f.loc[f["threshold"] == s.graded_threshold]
    gap = (f["nDCG rating gain"] - f["nDCG binary gain"]).abs().groupby(f["design"]).max()
    one, ar = float(gap.get("1R TI-NN", np.nan)), float(gap.get("AR TI-NN", np.nan))
    ours = Estimate.exact(ar, method="largest gap over the AR sets")
    ok = one <= 1e-12 and ar > 1e-12
    text = (f"largest gap {format_number(one)} over the 1R sets and {format_number(ar)} over the AR sets "
            f"(threshold {s.graded_threshold:g})")
    return Outcome(Verdict.AGREES if ok else Verdict.DIFFERS, ours, text)


def _fig9_table(r: Mapping[str, Any], design: str, metrics: Sequence[str], systems: Sequence[str]) -> pd.DataFrame:
    f = _design(r["fig9"], design)
    return user_table({m: (f.loc[f["metric"] == m].rename(columns={"value": "v"}), systems) for m in metrics}, "v")


@_claim(
    "bellogin2017.fig9.bpref", statement="bpref counters the popularity bias in AR",
    source="§7, Fig. 9", paper_value="lift(bpref) < lift(P@10)", paper_dataset=_ML1M,
    rule="sign rule on lift under bpref − lift under P@n, AR TI-AN, lift = popularity/random "
         "(bootstrap over users)",
    needs=("settings", "fig9"))
def _bpref(r):
    t = _fig9_table(r, "AR TI-AN", ["bpref", "P"], ["popularity", "random"])
    return sign_rule(_boot(r, t, lambda get: lift(get, "bpref") - lift(get, "P")), "negative",
                     label="lift(bpref) − lift(P)")


@_claim(
    "bellogin2017.fig9.infap", statement="infAP counters the popularity bias in AR",
    source="§7, Fig. 9", paper_value="lift(infAP) < lift(P@10)", paper_dataset=_ML1M,
    rule="sign rule on lift under infAP − lift under P@n, AR TI-AN (bootstrap over users)",
    needs=("settings", "fig9"))
def _infap(r):
    t = _fig9_table(r, "AR TI-AN", ["infAP", "P"], ["popularity", "random"])
    return sign_rule(_boot(r, t, lambda get: lift(get, "infAP") - lift(get, "P")), "negative",
                     label="lift(infAP) − lift(P)")


@_claim(
    "bellogin2017.fig9.srecall", statement="under stratified recall (γ = 1) popularity remains second "
    "only to pLSA", source="§7, Fig. 9", paper_value="popularity", paper_dataset=_ML1M,
    rule="order rule (bootstrap intervals over users) on AR TI-AN stratified recall@n among the "
         "systems other than pLSA",
    needs=("settings", "fig9"))
def _srecall(r):
    f = _design(r["fig9"], "AR TI-AN")
    systems = [s for s in _systems(f) if s != "pLSA"]
    t = _fig9_table(r, "AR TI-AN", ["SRecall"], systems)
    return order_rule({sy: _boot(r, t, lambda get, sy=sy: get("SRecall", sy)) for sy in systems}, "popularity")


@_claim(
    "bellogin2017.fig9.bpref-1r", statement="in 1R bpref is 1 for every system", source="§7",
    paper_value=1.0, paper_dataset=_ML1M,
    rule="value rule on the smallest 1R TI-NN bpref over the systems (bootstrap over users) against 1",
    needs=("settings", "fig9"))
def _bpref_1r(r):
    f = _design(r["fig9"], "1R TI-NN")
    systems = _systems(f)
    t = _fig9_table(r, "1R TI-NN", ["bpref"], systems)
    ests = {sy: _boot(r, t, lambda get, sy=sy: get("bpref", sy)) for sy in systems}
    sy = min(ests, key=lambda k: ests[k].value)
    judged = "our 1R sets sample their non-relevant items among judged and unjudged ones alike"
    return _append(value_rule(1.0, ests[sy], label=f"{sy}'s bpref"), judged)


# ------------------------------------------------------------------------------------- for prose


def outcome(claim_id: str, results: Mapping[str, Any]) -> Outcome:
    """The outcome of one claim of :data:`LEDGER` on ``results``."""
    return LEDGER[claim_id].outcome(results)


def compare(claim_id: str, results: Mapping[str, Any]) -> str:
    """One Markdown sentence setting a claim's paper value beside ours, with the verdict and why."""
    c = LEDGER[claim_id]
    out = c.outcome(results)
    ours = out.detail or format_estimate(out.ours)
    paper = paper_text({"paper_value": c.paper_value, "paper_dataset": c.paper_dataset})
    return (f"*{c.statement}* ({c.source}) — paper: {paper}; ours ({results['dataset']}): {ours}; "
            f"**{out.verdict}**: {out.reason}.")
