"""The experiments of the statistical-biases chapter (Bellogín, Castells & Cantador 2017).

:class:`Study` runs the paper's experiments on one ratings frame — target sets of Table 3,
Figs. 2–5 and 7–9, the checks of eqs. 1–5 and of the §5.1, §6.2 and §6.3 statements — with the
protocols of :mod:`recmeta.protocols`, the trials of :mod:`~recmeta.papers.bellogin2017.trials`
and the simulation of :mod:`recmeta.data.popularity`. Each method returns a tidy frame and keeps it
in :attr:`Study.results` under a fixed name; :meth:`Study.run_all` runs them all (the chapter
does so for its second dataset).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from ... import analyses, protocols
from ...data import popularity as pop
from ...data.splits import coin_flip
from ...metaeval.significance import system_pairs, wilcoxon_test
from .designs import design_violations
from .study_popularity import PopularityStudy
from .trials import (
    TrialCache,
    popularity_scorer,
    score_all,
    split_sets,
    trials,
)

__all__ = ["Study"]


class Study(PopularityStudy):
    """The chapter's experiments on one dataset; every method stores its frame in :attr:`results`.

    This class holds the experiments of §3–§4 and :meth:`run_all`; those of §5–§6 come from
    :class:`~.study_popularity.PopularityStudy`, the shared machinery (systems, protocols,
    trials) from :class:`~.study_base.StudyBase`. ``ratings`` must be graded (a rating column);
    ``dataset`` names it (for the run cache of the roster systems,
    :func:`~recmeta.papers.bellogin2017.trials.roster_scorer`).
    """

    # -- §3: target sets and Fig. 2 ----------------------------------------------------------------

    @analyses.analysis_method
    def table3(self) -> pd.DataFrame:
        """The eight target-set designs of Table 3 on one split: sizes, ρ and popularity's P@n.

        The 1R-AN rows are read off the AR-AN sets (:func:`recmeta.protocols.one_r_an_metrics`).
        """
        s = self.s
        rows, checks = [], []
        for cand in ("AI", "TI"):
            train, test, ar, _ = split_sets(
                self.ratings,
                self.protocol(cand, "AR", "AN", ar_users="all"),
                s.seed,
                sigma=s.sigma,
                cache=self.cache,
            )
            scored = protocols.attach_scores(ar, popularity_scorer(train, ar))
            an = self.protocol(cand, "AR", "AN", ar_users="all")
            checks.append(
                {"design": f"{cand}-AN AR", **design_violations(train, test, ar, an, self.items)}
            )
            for rel in ("AR", "1R"):
                for non in ("AN", "NN"):
                    name = f"{cand}-{non} {rel}"
                    if non == "AN" and rel == "AR":
                        per, size = protocols.target_metrics(scored, s.n), ar.groupby("set").size()
                        rho = protocols.random_precision(ar)
                    elif non == "AN":
                        per = protocols.one_r_an_metrics(scored, s.n)
                        size, rho = per["size"], float((1.0 / per["size"]).mean())
                    else:
                        p = self.protocol(cand, rel, non, short_pool="shrink")
                        sets = protocols.target_sets(train, test, p, seed=s.seed, items=self.items)
                        checks.append(
                            {"design": name, **design_violations(train, test, sets, p, self.items)}
                        )
                        per = protocols.target_metrics(
                            protocols.attach_scores(sets, popularity_scorer(train, sets)), s.n
                        )
                        size, rho = sets.groupby("set").size(), protocols.random_precision(sets)
                    rows.append(
                        {
                            "protocol": name,
                            "target sets": len(size),
                            "mean |T|": float(np.mean(size)),
                            "rho": rho,
                            f"popularity P@{s.n}": protocols.protocol_mean(per),
                        }
                    )
        out = pd.DataFrame(rows).set_index("protocol")
        self.results["table3"] = out
        self.results["table3_check"] = pd.DataFrame(checks)
        return out

    @analyses.analysis_method
    def coverage(self) -> pd.DataFrame:
        """Per split: the share of items without a test rating (outside the TI candidates), and
        the exact ρ of the AR AI-AN and AR TI-AN sets
        (:func:`recmeta.protocols.random_precision_an`)."""
        rows = []
        for sd in sorted({*self.s.seeds, *self.s.check_seeds}):  # cheap: no target set is built
            sp = coin_flip(self.ratings, self.s.sigma, seed=sd)
            rho = {
                c: protocols.random_precision_an(
                    sp.train, sp.test, self.s.threshold, c, items=self.items
                )
                for c in ("AI", "TI")
            }
            rows.append(
                {
                    "seed": sd,
                    "items": len(self.items),
                    "test items": sp.test["item"].nunique(),
                    "rho AI-AN": rho["AI"],
                    "rho TI-AN": rho["TI"],
                }
            )
        out = pd.DataFrame(rows)
        out["no test rating"] = 1 - out["test items"] / out["items"]
        self.results["coverage"] = out
        return out

    @analyses.analysis_method
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
        out = pd.concat(
            [
                self.run(p, seeds=self.s.design_seeds if name == "AR AI-AN" else None).assign(
                    design=name
                )
                for name, p in designs.items()
            ],
            ignore_index=True,
        )
        self.results["fig2"] = out
        return out

    @analyses.analysis_method
    def wilcoxon(self) -> pd.DataFrame:
        """Wilcoxon signed-rank p-values of every pair of systems under 1R TI-NN (§3.3).

        Each user's value is her mean 1R P@n over her sets in the splits every system ran on.
        """
        f = self.results["fig2"] if "fig2" in self.results else self.fig2()
        f = f.loc[f["design"] == "1R TI-NN"]
        systems = [s for s in self.order if s in set(pd.unique(f["system"]))]
        common = set.intersection(
            *(set(pd.unique(f.loc[f["system"] == s, "seed"])) for s in systems)
        )
        per_user = (
            f.loc[f["seed"].isin(common)]
            .groupby(["system", "user"])["P"]
            .mean()
            .unstack("user")
            .reindex(systems)
        )
        a, b = system_pairs(len(systems))
        p = wilcoxon_test(per_user.to_numpy(), (a, b))
        out = pd.DataFrame(
            {
                "a": [systems[i] for i in a],
                "b": [systems[j] for j in b],
                "p": p,
                "users": per_user.shape[1],
            }
        )
        self.results["wilcoxon"] = out
        return out

    # -- §3.4: eq. 2 and Fig. 3 --------------------------------------------------------------------

    @analyses.analysis_method
    def lemma(self) -> tuple[pd.DataFrame, pd.DataFrame]:
        """1R TI-NN with one shared non-relevant sample per user, by removed share and by |T_u|."""
        s = self.s
        shared = self.protocol("TI", "1R", "NN", shared_nonrelevant=True)
        by_removal = pd.concat(
            [self.run(shared, seeds=s.size_seeds, removed=r) for r in s.removed_rates],
            ignore_index=True,
        )
        by_size = pd.concat(
            [
                self.run(
                    self.protocol(
                        "TI", "1R", "NN", size - 1, shared_nonrelevant=True, short_pool="shrink"
                    ),
                    seeds=s.size_seeds,
                    roster_seeds=s.roster_seeds[:1],
                ).assign(size=size)
                for size in s.target_sizes
            ],
            ignore_index=True,
        )
        self.results["lemma_removal"], self.results["lemma_size"] = by_removal, by_size
        return by_removal, by_size

    @analyses.analysis_method
    def proof_step(self) -> pd.DataFrame:
        """Share of 1R sets where each step of the lemma's proof holds, per system (one split)."""
        s = self.s
        sp = coin_flip(self.ratings, s.sigma, seed=s.seed)
        sets = protocols.target_sets(
            sp.train,
            sp.test,
            self.protocol("TI", "1R", "NN", shared_nonrelevant=True),
            seed=s.seed,
            items=self.items,
        )
        scorers = {**self.systems, **(self.cf if s.seed in s.roster_seeds else {})}
        rows = []
        for name, scores in score_all(scorers, sp.train, sets, s.seed).items():
            r = protocols.lemma_ranks(protocols.attach_scores(sets, scores, missing="last"))
            rows.append(
                {
                    "system": name,
                    "sets": len(r),
                    "own <= union": float((r["own"] <= r["union"]).mean()),
                    "union <= own + |PR|-1": float(
                        (r["union"] <= r["own"] + r["relevant"] - 1).mean()
                    ),
                    "printed: own >= union + |PR|-1": float(
                        (r["own"] >= r["union"] + r["relevant"] - 1).mean()
                    ),
                    "one relevant item": float((r["relevant"] == 1).mean()),
                }
            )
        out = pd.DataFrame(rows)
        self.results["proof_step"] = out
        return out

    # -- §4: eqs. 3–5 ------------------------------------------------------------------------------

    @analyses.analysis_method
    def ar_checks(self) -> pd.DataFrame:
        """Per split (σ × seed) of AR TI-AN over all users: ρ and its parts, eq. 4, random's
        P@n (a fresh random ranking per split), and at the study's σ popularity's P@n beside
        eq. 3, its per-item conditional form and the exact expectation of a fixed ranking."""
        s = self.s
        p = self.protocol("TI", "AR", "AN", ar_users="all")
        n_pos = int(self.positive.sum())
        n_users = self.ratings["user"].nunique()
        counts = pop.item_counts(self.ratings)
        exact = protocols.expected_precision_fixed_ranking(
            self.ratings, counts.index, s.sigma, s.n, s.threshold
        )
        rows = []
        for sigma in s.sigmas:
            here = sigma == s.sigma
            systems = self.systems if here else {"random": self.systems["random"]}
            for sd in s.check_seeds:
                # off the study's σ a cache of one split lets the trial reuse the sets built here
                cache = self.cache if here else TrialCache(keep_sets=1)
                train, _, sets, _ = split_sets(self.ratings, p, sd, sigma=sigma, cache=cache)
                terms = protocols.random_precision_terms(sets, sigma, n_pos, n_users)
                per = trials(
                    self.ratings,
                    p,
                    systems,
                    seeds=[sd],
                    sigma=sigma,
                    n=s.n,
                    per_set=True,
                    cache=cache,
                    metrics=self.ar_metrics if here else (),
                )
                means = per.groupby("system")["P"].mean()
                row = {
                    "sigma": sigma,
                    "seed": sd,
                    **terms.to_dict(),
                    "random": means["random"],
                    "candidates": int(sets["item"].nunique()),
                }
                if here:
                    scored = protocols.attach_scores(sets, popularity_scorer(train, sets))
                    pc = protocols.top_positive_counts(scored, s.n, self.positive)
                    rc = protocols.top_positive_counts(scored, s.n, counts)
                    row.update(
                        {
                            "popularity": means["popularity"],
                            "eq3": protocols.nonpersonalised_precision_ar(
                                pc, sigma, sets["item"].nunique(), n_users, 1.0 / terms["inv_t"]
                            ),
                            "conditional": protocols.conditional_precision_ar(
                                pc, rc, sigma, n_users
                            ),
                            "exact": exact,
                        }
                    )
                rows.append(row)
        out = pd.DataFrame(rows)
        self.results["ar_checks"] = out
        return out

    @analyses.analysis_method
    def eq5(self) -> pd.DataFrame:
        """Random 1R TI-NN precision against 1/t over the check splits, for each σ."""
        s = self.s
        p = self.protocol("TI", "1R", "NN")
        rnd = {"random": self.systems["random"]}
        out = pd.concat(
            [
                trials(self.ratings, p, rnd, seeds=s.check_seeds, sigma=sigma, n=s.n).assign(
                    sigma=sigma
                )
                for sigma in s.sigmas
            ],
            ignore_index=True,
        )
        self.results["eq5"] = out
        return out

    @analyses.analysis_method
    def sparsity(self) -> pd.DataFrame:
        """AR TI-AN over all users against the removed share of test ratings (Fig. 4 left): P@n
        and nDCG@n per set, and recall@n from the metric engine (§4.2; NaN for users left without
        a relevant test item)."""
        s = self.s
        p_all = self.protocol("TI", "AR", "AN", ar_users="all")
        out = pd.concat(
            [self.run(p_all, removed=r, metrics=[f"R@{s.n}"]) for r in s.removed_rates],
            ignore_index=True,
        ).rename(columns={f"R@{s.n}": "recall"})
        self.results["ar_removal"] = out
        return out

    def steps(self, *, table3: bool = False) -> list[str]:
        """The experiments :meth:`run_all` runs, in its order (Table 3 if asked): the longest
        first (the simulation, Fig. 8), the quick ones last, so that of two processes sharing
        the steps, one from each end (:func:`recmeta.book.background.start`), neither is left
        with a long one when the other has finished; Fig. 2 and the sparsity runs, which share
        designs, stay in that order."""
        names = ["coverage", "simulation", "fig8", "fig2", "wilcoxon", "nonpersonalised"]
        names += ["fig9"] if self.s.engine_designs else []
        names += ["ar_checks", "sparsity", "eq5", "lemma", "uniform_size"]
        names += ["proof_step", "positive_shares", "positive_ratio", "fig6", "identities"]
        return ["table3", *names] if table3 else names

    def late_steps(self) -> list[str]:
        """The experiments the chapter's page asks for last: a worker computes them while the
        page computes the ones before (:func:`recmeta.book.background.start`). Eq. 5 first: it
        runs the random recommender only, so the worker does not wait on the roster runs the
        page is training for Fig. 2 (the lemma needs them)."""
        return ["eq5", "lemma", "simulation", "fig8"]

    def run_all(self, *, table3: bool = False) -> dict[str, Any]:
        """Every experiment the ledger reads (and Table 3 if asked); returns :attr:`results`."""
        for name in self.steps(table3=table3):
            getattr(self, name)()
        self.release()
        return self.results
