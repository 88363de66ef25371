"""More of the paper's statements on the systems and on neutralising popularity (Bellogín,
Castells & Cantador 2017, §3.3, §6.3 and §7: Figs. 2, 8 and 9), registered on
:data:`recmeta.papers.bellogin2017.claims.LEDGER` after the claims on the definitions
(:mod:`~recmeta.papers.bellogin2017.claims_designs`).

They read the results the study computes anyway (``fig2``, ``fig8``, ``fig9``). "At the level of
random" is an equivalence between popularity and random in one experiment (the share of
popularity's 1R advantage that a design leaves), a comparison within the run's data like an order,
so it is graded on any data.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Literal

import numpy as np
import pandas as pd

from ...ledger import Estimate, Outcome, equivalence_rule, every, not_reproduced, sign_rule
from ...metaeval.bootstrap import sign_pvalues
from .claims import most
from .claims_designs import LEDGER  # the claims on the definitions first
from .claims_popularity import lift_difference
from .evidence import (
    Getter,
    absent_designs,
    boot,
    boot_replicates,
    design_rows,
    lift,
    mean_difference,
    missing_roles,
    user_table,
)
from .settings import FIG2_DESIGNS, ML1M

__all__ = ["RANDOM_LEVEL", "NDCG_PATTERNS", "lift_parts", "remaining_share"]

#: the share of popularity's 1R advantage over random that "at the level of random" leaves
RANDOM_LEVEL = 0.1

#: Fig. 8's patterns of popularity's lift, as the P claims state them: (design, against, sign)
NDCG_PATTERNS: tuple[tuple[str, tuple[str, ...], Literal["positive", "negative"]], ...] = (
    ("U1R", ("1R",), "negative"),
    ("P1R", ("U1R",), "negative"),
    ("1R −10% head", ("U1R", "P1R"), "positive"),
    ("UAR", ("AR TI-NN",), "negative"),
    ("AI-UAR", ("UAR",), "positive"),
)


def remaining_share(get: Getter, design: str, base: str) -> np.ndarray:
    """(lift(design) − 1)/(lift(base) − 1): the share of popularity's advantage over random under
    ``base`` that ``design`` leaves (0: at random, 1: none removed)."""
    return (lift(get, design) - 1) / (lift(get, base) - 1)


def _share(r: Mapping[str, Any], design: str, base: str) -> Estimate | Outcome:
    f = r["fig8"]
    if (gone := absent_designs(f, [design, base])) is not None:
        return gone
    t = user_table({d: (design_rows(f, d), ["popularity", "random"]) for d in (design, base)})
    return boot(r, t, lambda get: remaining_share(get, design, base))


def _random_level(r: Mapping[str, Any], design: str) -> Outcome:
    est = _share(r, design, "1R")
    if isinstance(est, Outcome):
        return est
    return equivalence_rule(
        est, RANDOM_LEVEL, label=f"(lift({design}) − 1)/(lift(1R) − 1), lift = popularity/random"
    )


_LEVEL_RULE = (
    "equivalence on the share of popularity's 1R advantage over random that {d} leaves, "
    "(lift({d}) − 1)/(lift(1R) − 1) with lift = popularity P@n / random P@n (bootstrap over "
    "users): inside ± 0.1 (at most a tenth of the advantage left, either way) → agrees, wholly "
    "outside → differs; a comparison of two systems in one experiment, graded on any data"
)


def _level_of(design: str) -> Callable[[Mapping[str, Any]], Outcome]:
    return lambda r: _random_level(r, design)


for _d in ("P1R", "U1R"):
    LEDGER.claim(
        f"bellogin2017.fig8.{_d.lower()}-random",
        statement=f"{_d} places popularity at the level of random",
        source="§6.3, Fig. 8",
        paper_value=0.0,
        paper_dataset=ML1M,
        rule=_LEVEL_RULE.format(d=_d),
        needs=("dataset", "settings", "fig8"),
    )(_level_of(_d))


def _share_gap(design: str) -> Callable[[Getter], np.ndarray]:
    """The share of popularity's 1R advantage ``design`` leaves, minus the share UAR leaves of
    the AR (TI-NN) advantage."""
    return lambda get: remaining_share(get, design, "1R") - remaining_share(get, "UAR", "AR TI-NN")


@LEDGER.claim(
    "bellogin2017.fig8.more-effective-1r",
    statement="the proposed designs are more effective on 1R than on AR: U1R and P1R leave "
    "popularity less of its advantage over random than UAR does",
    source="§6.3, Fig. 8",
    paper_value="share(U1R), share(P1R) < share(UAR)",
    paper_dataset=ML1M,
    rule="every: sign rule on (lift(X) − 1)/(lift(1R) − 1) − (lift(UAR) − 1)/(lift(AR TI-NN) − 1) "
    "for X = U1R and P1R, the shares of popularity's advantage over random that each design "
    "leaves in 1R and in AR (bootstrap over users), one-sided bootstrap p-values under Holm's "
    "correction (α = 0.05)",
    needs=("dataset", "settings", "fig8"),
)
def _more_effective(r):
    f = r["fig8"]
    parts: dict[str, Outcome] = {}
    p_right: dict[str, float] = {}
    p_wrong: dict[str, float] = {}
    for x in ("U1R", "P1R"):
        designs = (x, "1R", "UAR", "AR TI-NN")
        if absent_designs(f, designs) is not None:
            continue
        t = user_table({d: (design_rows(f, d), ["popularity", "random"]) for d in designs})
        est, reps = boot_replicates(r, t, _share_gap(x))
        label = f"share left by {x} − share left by UAR"
        parts[label] = sign_rule(est, "negative", label=label)
        p_wrong[label], p_right[label] = sign_pvalues(reps, point=est.value)
    if not parts:
        return absent_designs(f, ("U1R", "P1R", "1R", "UAR", "AR TI-NN")) or not_reproduced(
            "neither U1R nor P1R ran beside UAR in this profile"
        )
    return every(parts, p_right, p_wrong)


def lift_parts(
    r: Mapping[str, Any], metric: str
) -> tuple[dict[str, Outcome], dict[str, float], dict[str, float]]:
    """The parts of :data:`NDCG_PATTERNS` under ``metric`` whose designs ran: each part's sign
    outcome, and its one-sided bootstrap p-values in the expected and the opposite direction."""
    parts: dict[str, Outcome] = {}
    p_right: dict[str, float] = {}
    p_wrong: dict[str, float] = {}
    for a, bs, expected in NDCG_PATTERNS:
        got = lift_difference(r, a, list(bs), metric=metric)
        if isinstance(got, Outcome):
            continue
        est, reps, label = got
        parts[label] = sign_rule(est, expected, label=label)
        p_pos, p_neg = sign_pvalues(reps, point=est.value)
        p_right[label], p_wrong[label] = (
            (p_pos, p_neg) if expected == "positive" else (p_neg, p_pos)
        )
    return parts, p_right, p_wrong


@LEDGER.claim(
    "bellogin2017.fig8.ndcg-patterns",
    statement="under nDCG the patterns of Fig. 8 hold just the same: U1R below 1R, P1R below "
    "U1R, the removed head above both, UAR below AR, AI-UAR above UAR",
    source="§6.3, Fig. 8 (nDCG panel)",
    paper_value="the P patterns",
    paper_dataset=ML1M,
    rule="every: sign rule on each difference of popularity's nDCG@n lift over random (as the P "
    "claims fig8.u1r, .p1r, .head, .uar, .ai-uar state them; bootstrap over users) in the "
    "designs that ran, one-sided bootstrap p-values under Holm's correction (α = 0.05)",
    needs=("dataset", "settings", "fig8"),
)
def _ndcg_patterns(r):
    parts, p_right, p_wrong = lift_parts(r, "nDCG")
    if not parts:
        return not_reproduced("none of Fig. 8's designs ran in this profile")
    return every(parts, p_right, p_wrong)


def _fig9_lift_of(r: Mapping[str, Any], system: str, metric: str) -> Outcome:
    f = design_rows(r["fig9"], "AR TI-AN")
    why = missing_roles([system], f)
    if why:
        return not_reproduced(why)
    parts = {
        m: (f.loc[f["metric"] == m].rename(columns={"value": "v"}), [system, "random"])
        for m in (metric, "P")
    }
    t = user_table(parts, "v")
    return sign_rule(
        boot(r, t, lambda get: lift(get, metric, system) - lift(get, "P", system)),
        "negative",
        label=f"{system}/random under {metric} − under P",
    )


_DRAG = (
    "sign rule on pLSA's ratio to random under {m} minus under P@n, AR TI-AN (bootstrap over "
    "users): negative when {m} pulls pLSA towards random as it does popularity"
)


def _drags(metric: str) -> Callable[[Mapping[str, Any]], Outcome]:
    return lambda r: _fig9_lift_of(r, "pLSA", metric)


for _m in ("bpref", "infAP"):
    LEDGER.claim(
        f"bellogin2017.fig9.{_m.lower()}-drags-plsa",
        statement=f"{_m} drags pLSA down along with popularity",
        source="§7, Fig. 9",
        paper_value=f"lift_pLSA({_m}) < lift_pLSA(P@10)",
        paper_dataset=ML1M,
        rule=_DRAG.format(m=_m),
        needs=("dataset", "settings", "fig9"),
    )(_drags(_m))


@LEDGER.claim(
    "bellogin2017.sec3.3.mf-knn",
    statement="MF is generally superior to kNN",
    source="§3.3, Fig. 2",
    paper_value="MF > kNN",
    paper_dataset=ML1M,
    rule="sign rule on MF − user-kNN P@n (paired bootstrap over users) in each design of Fig. 2 "
    "that ran, on the splits both ran on; 'generally': agrees when more than half of the "
    "designs agree, differs when more than half differ, else inconclusive",
    needs=("dataset", "settings", "fig2"),
)
def _mf_knn(r):
    f = r["fig2"]
    why = missing_roles(["MF", "user-kNN"], f)
    if why:
        return not_reproduced(why)
    outs = {}
    for d in [d for d in FIG2_DESIGNS if d in set(pd.unique(f["design"]))]:
        t = user_table({d: (design_rows(f, d), ["MF", "user-kNN"])})
        outs[d] = sign_rule(
            boot(r, t, mean_difference(d, "MF", "user-kNN")), "positive", label="MF − user-kNN"
        )
    return most(outs)
