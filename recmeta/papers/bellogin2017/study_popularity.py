"""The popularity experiments of the statistical-biases chapter (Bellogín et al. 2017, §5–§6):
non-personalised rankings, the simulated popularity of Fig. 5, the positive ratings of Fig. 7,
and the designs that neutralise popularity (Figs. 8–9, §6.3)."""

from __future__ import annotations

from typing import Any, Literal

import numpy as np
import pandas as pd

from ... import analyses, protocols
from ...data import popularity as pop
from ...data.splits import coin_flip
from ...protocols import Protocol, Relevant
from .designs import percentile_violations, uniform_violations
from .settings import ORACLE
from .study_base import StudyBase
from .trials import (
    Scorer,
    liked_scorer,
    mean_rating_scorer,
    oracle_scorer,
    roster_scorer,
    score_all,
    split_sets,
    trials,
)

__all__ = ["PopularityStudy"]


class PopularityStudy(StudyBase):
    """The experiments of §5–§6; every method stores its result in :attr:`results`."""

    # -- §5: popularity ----------------------------------------------------------------------------

    @analyses.analysis_method
    def nonpersonalised(self) -> pd.DataFrame:
        """Per-set AR TI-AN precision of non-personalised rankings (§5.1), with the ceiling."""
        s = self.s
        others = {
            "most liked": liked_scorer(s.threshold),
            "mean rating": mean_rating_scorer(s.damping),
            ORACLE: oracle_scorer,
        }
        p = self.protocol("TI", "AR", "AN", ar_users="all")
        out = self.run(p, systems={**self.systems, **others})
        self.results["nonpersonalised"] = out
        return out

    @analyses.analysis_method
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
                cf = (
                    {
                        role: roster_scorer(
                            name, dataset=f"{self.dataset}-simulated", split=f"alpha{a}"
                        )
                        for role, name in s.roster.items()
                    }
                    if with_cf
                    else {}
                )
                runs.append(
                    trials(
                        sim,
                        one_r,
                        {**self.systems, **cf},
                        seeds=[sd],
                        sigma=s.sigma,
                        n=s.n,
                        per_set=True,
                    ).assign(alpha=a)
                )
            share = pop.cumulative_share(pop.item_counts(sim))
            curves.append(
                pd.DataFrame(
                    {
                        "alpha": a,
                        "item share": np.arange(1, len(share) + 1) / len(share),
                        "rating share": share,
                    }
                )
            )
        sim_runs, curve = pd.concat(runs, ignore_index=True), pd.concat(curves, ignore_index=True)
        self.results.update(simulation=sim_runs, curves=curve, fit=fit)
        return sim_runs, curve

    @analyses.analysis_method
    def positive_shares(self) -> dict[str, Any]:
        """Cumulative share of positive ratings held by the most liked items (Fig. 5 right)."""
        liked = self.positive.sort_values(ascending=False)
        share = pop.cumulative_share(liked.to_numpy())
        n_users = self.ratings["user"].nunique()
        out = {
            "curve": pd.DataFrame(
                {
                    "item share": np.arange(1, len(share) + 1) / len(self.items),
                    "positive share": share,
                }
            ),
            "top_liked": float(liked.iloc[0] / n_users),
            "top count": int(liked.iloc[0]),
            "users": n_users,
            "single": float((liked == 1).mean()),
            "liked items": len(liked),
            "liked once": int((liked == 1).sum()),
        }
        self.results["positive_shares"] = out
        return out

    @analyses.analysis_method
    def positive_ratio(self) -> pd.DataFrame:
        """|PR(i)|/|R(i)| of every item with its popularity rank (Fig. 7)."""
        out = pop.positive_ratio_by_rank(self.ratings, self.s.threshold, segments=None)
        self.results["positive_ratio"] = out
        return out

    # -- §6: neutralising popularity -------------------------------------------------------------

    @analyses.analysis_method
    def uniform_size(self) -> dict[str, Any]:
        """|T| and η of the uniform-test split (§6.2)."""
        size, eta = protocols.uniform_test_size(
            pop.item_counts(self.ratings).to_numpy(), self.s.sigma, self.s.epsilon
        )
        out = {"size": size, "eta": eta, "test share": size * eta / len(self.ratings)}
        self.results["uniform_size"] = out
        return out

    @analyses.analysis_method
    def fig6(self) -> dict[str, Any]:
        """The two splits of Fig. 6 on the run's ratings: per item in popularity order, |R(i)|,
        its test ratings in a coin-flip split (expected σ|R(i)|) and in the uniform-test split
        (η for the items of T), its P1R percentile; with the checks of both constructions
        (:func:`~.designs.uniform_violations`, :func:`~.designs.percentile_violations`)."""
        s = self.s
        counts = pop.item_counts(self.ratings)
        uniform = protocols.uniform_test_split(self.ratings, s.sigma, s.epsilon, seed=s.seed)
        coin = coin_flip(self.ratings, s.sigma, seed=s.seed).test
        curve = pd.DataFrame(
            {
                "rank": np.arange(1, len(counts) + 1),
                "ratings": counts.to_numpy(),
                "coin-flip test": coin.groupby("item").size().reindex(counts.index, fill_value=0),
                "uniform test": uniform.test.groupby("item")
                .size()
                .reindex(counts.index, fill_value=0),
                "stratum": pop.percentile_strata(self.ratings, s.percentiles)
                .reindex(counts.index)
                .to_numpy(),
            },
            index=counts.index,
        ).reset_index(drop=True)
        out = {
            "curve": curve,
            "uniform": uniform_violations(self.ratings, uniform, s.sigma, s.epsilon),
            "percentiles": percentile_violations(self.ratings, s.percentiles),
        }
        self.results["fig6"] = out
        return out

    @analyses.analysis_method
    def fig8(self) -> pd.DataFrame:
        """Per-set P@n and nDCG@n (rating gains) under the designs of Fig. 8, with TI and AI
        versions of P1R and UAR."""
        s = self.s
        size = self.results.get("uniform_size") or self.uniform_size()
        uniform = {"split": "uniform", "epsilon": s.epsilon}
        designs: dict[str, tuple[Protocol, dict[str, Any]]] = {
            "1R": (self.protocol("TI", "1R", "NN"), {}),
            "U1R": (self.protocol("TI", "1R", "NN", short_pool="shrink"), uniform),
            "P1R": (
                self.protocol("TI", "1R", "NN", percentiles=s.percentiles, short_pool="shrink"),
                {},
            ),
            "P1R (AI)": (
                self.protocol("AI", "1R", "NN", percentiles=s.percentiles, short_pool="shrink"),
                {},
            ),
            "1R −10% head": (self.protocol("TI", "1R", "NN"), {"head": s.head}),
            "AR TI-NN": (self.protocol("TI", "AR", "NN", size["size"], short_pool="shrink"), {}),
            "UAR": (self.protocol("TI", "AR", "AN"), uniform),
            "AI-UAR": (self.protocol("AI", "AR", "AN"), uniform),
        }
        if not s.ai_designs:
            for name in ("P1R (AI)", "AI-UAR"):
                designs.pop(name)
        out = pd.concat(
            [
                self.run(p, seeds=s.design_seeds, gain="rating", **kw).assign(design=name)
                for name, (p, kw) in designs.items()
            ],
            ignore_index=True,
        )
        self.results["fig8"] = out
        return out

    @analyses.analysis_method
    def fig9(self) -> pd.DataFrame:
        """Per-set P@n, bpref, infAP and stratified recall from the metric engine (Fig. 9)."""
        s = self.s
        names = [f"P@{s.n}", "bpref", "infAP", f"SRecall(gamma={s.gamma:g})@{s.n}"]
        labels = dict(zip(names, ("P", "bpref", "infAP", "SRecall"), strict=True))
        frames = []
        for sd in s.metric_seeds:
            for name, p in (
                ("AR TI-AN", self.protocol("TI", "AR", "AN", ar_users="all")),
                ("1R TI-NN", self.protocol("TI", "1R", "NN")),
            ):
                train, _, sets, _ = split_sets(self.ratings, p, sd, sigma=s.sigma, cache=self.cache)
                with protocols.shared_pairs(sets):
                    scores = score_all(
                        {**self.systems, **(self.cf if sd in s.roster_seeds else {})},
                        train,
                        sets,
                        sd,
                    )
                    res = protocols.engine_metrics(
                        sets,
                        scores,
                        names,
                        s.threshold,
                        popularity=self.positive,
                        per_set=True,
                        depth="judged",
                    )
                frames.append(res.assign(design=name, seed=sd))
        out = pd.concat(frames, ignore_index=True)
        out["metric"] = out["metric"].map(labels)
        self.results["fig9"] = out
        return out

    @analyses.analysis_method
    def identities(self) -> pd.DataFrame:
        """AP and RR in 1R (§6.3: MAP ≡ MRR), bpref in 1R with only the relevant item judged
        (§7: then 1), and nDCG with rating and binary gains in 1R and AR, at the graded threshold
        (relevant items of two or more grades), from the metric engine."""
        s = self.s
        sp = coin_flip(self.ratings, s.sigma, seed=s.seed)
        rows = []
        lin, binary = f"nDCG(gain=linear)@{s.n}", f"nDCG(gain=binary)@{s.n}"
        # with only relevant items judged, lists cut after their last relevant item change nothing
        # (design, relevant, threshold, metrics, depth, systems)
        runs: tuple[
            tuple[str, Relevant, float, list[str], int | Literal["judged"], dict[str, Scorer]], ...
        ] = (
            (
                "1R TI-NN",
                "1R",
                s.graded_threshold,
                ["AP", "RR", "bpref", lin, binary],
                "judged",
                self.systems,
            ),
            ("AR TI-NN", "AR", s.graded_threshold, [lin, binary], s.n, self.systems),
        )
        for design, rel, threshold, metrics, depth, scorers in runs:
            p = Protocol("TI", rel, "NN", s.n_nonrelevant, threshold=threshold, short_pool="shrink")
            sets = protocols.target_sets(sp.train, sp.test, p, seed=s.seed, items=self.items)
            scores = score_all(scorers, sp.train, sets, s.seed)
            res = protocols.engine_metrics(
                sets, scores, metrics, threshold, judged="relevant", per_set=True, depth=depth
            )
            wide = res.pivot_table(
                index=["system", "set"], columns="metric", values="value"
            ).reset_index()
            rows.append(wide.assign(design=design, threshold=threshold))
        out = pd.concat(rows, ignore_index=True).rename(
            columns={lin: "nDCG rating gain", binary: "nDCG binary gain"}
        )
        self.results["identities"] = out
        return out
