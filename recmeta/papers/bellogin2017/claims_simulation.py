"""The ledger's claims on non-personalised rankings and simulated popularity (Bellogín, Castells
& Cantador 2017, §5.1–§5.2, Fig. 5), registered on
:data:`recmeta.papers.bellogin2017.claims.LEDGER` after the claims of §3–§4.

The simulation of Fig. 5 is shaped like the run's data (:func:`recmeta.data.popularity.
simulate_like` on the chapter's ratings), as the paper shapes its own on MovieLens 1M: its
claims name ML-1M (:data:`SIMULATION`), so they replicate on ML-1M and transfer elsewhere, where
the magnitudes at α = 0 are shown and not graded. Random's 1R precision at α = 0 is eq. 5
(a derivation); "around random" and "closely matches" are graded on any data (``data_free``):
simulated ratings carry no preference pattern whatever data they are shaped like.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any

import numpy as np
import pandas as pd

from ...ledger import (
    DERIVED,
    Estimate,
    Margin,
    Outcome,
    all_of,
    format_number,
    not_reproduced,
    order_rule,
    sign_rule,
    value_rule,
)
from .claims_sparsity import FORMULA, LEDGER  # the claims of §3–§4 first
from .evidence import (
    Getter,
    append_reason,
    boot,
    mean_difference,
    missing_roles,
    order_in,
    user_table,
)
from .settings import ML1M, NONPERSONALISED, PAPER

__all__ = ["ALPHA0_GAP", "SIMULATION"]

#: the setting of Fig. 5's claims: a simulation shaped like the data it runs on (ML-1M in the paper)
SIMULATION = "simulation shaped like ML-1M"
#: half the paper's gap between random (0.0100) and popularity (0.0077) at α = 0
ALPHA0_GAP = (PAPER["alpha0_random"] - PAPER["alpha0_popularity"]) / 2
_NO_PATTERN = (
    "simulated ratings carry no preference pattern, whatever data the simulation is shaped like"
)


def _gap_margin(paper: float, what: str) -> Margin:
    return Margin.printed(paper, ALPHA0_GAP, f"half the paper's α = 0 gap to random: {what}")


@LEDGER.claim(
    "bellogin2017.sec5.1.popularity-best",
    statement="popularity is the best non-personalised recommender",
    source="§5.1",
    paper_value="popularity",
    paper_dataset=ML1M,
    rule="order rule (bootstrap intervals over users) on AR TI-AN P@n among popularity, the most "
    "liked items, the damped mean rating and random",
    needs=("dataset", "settings", "nonpersonalised"),
)
def _best_np(r):
    f = r["nonpersonalised"]
    systems = [s for s in NONPERSONALISED if s in set(pd.unique(f["system"]))]
    return order_rule(order_in(r, f, systems), "popularity")


def _alpha(frame: pd.DataFrame, which: str) -> float:
    return float(frame["alpha"].min() if which == "min" else frame["alpha"].max())


def _sim_estimate(
    r: Mapping[str, Any], alpha: float, stat: Callable[[Getter], Any], systems: Sequence[str]
) -> Estimate:
    f = r["simulation"]
    t = user_table({"a": (f.loc[np.isclose(f["alpha"], alpha)], systems)})
    return boot(r, t, stat)


def _alpha_zero(r: Mapping[str, Any]) -> Outcome | None:
    if not np.isclose(_alpha(r["simulation"], "min"), 0.0):
        return not_reproduced("the simulation does not include α = 0 (parameter alphas)")
    return None


@LEDGER.claim(
    "bellogin2017.fig5.random-alpha0",
    statement="random 1R P@10 on simulated data with uniform popularity (α = 0) is 1/t, "
    "0.0100 at |T_u| = 100 (eq. 5)",
    source="§5.2, Fig. 5 centre",
    paper_value=0.0,
    paper_dataset=DERIVED,
    rule="value rule (equivalence) on random's 1R TI-NN P@n at α = 0 over 1/t of the same sets, "
    "minus 1 (bootstrap over simulated users), against 0 with a margin of 0.1",
    needs=("dataset", "settings", "simulation"),
)
def _rnd0(r):
    if (gone := _alpha_zero(r)) is not None:
        return gone
    f = r["simulation"]
    inv_t = float(f.loc[np.isclose(f["alpha"], 0.0), "formula"].mean())
    out = value_rule(
        0.0,
        _sim_estimate(r, 0.0, lambda get: get("a", "random") / inv_t - 1, ["random"]),
        Margin(0.0, FORMULA, "a tenth of 1/t, under the paper's 23 % of popularity below random"),
        label="random P@n · t − 1",
    )
    return append_reason(out, f"1/t = {format_number(inv_t)}")


@LEDGER.claim(
    "bellogin2017.fig5.popularity-alpha0",
    statement="popularity 1R P@10 on simulated data with uniform popularity (α = 0)",
    source="§5.2, Fig. 5 centre",
    paper_value=PAPER["alpha0_popularity"],
    paper_dataset=SIMULATION,
    rule="value rule (equivalence) on popularity's 1R TI-NN P@n at α = 0 (bootstrap over "
    "simulated users), margin 0.00005 (the printed digit) + 0.00115 (half the paper's gap to "
    "random); a magnitude of the simulation shaped like ML-1M, shown and not graded elsewhere",
    needs=("dataset", "settings", "simulation"),
)
def _pop0(r):
    return _alpha_zero(r) or value_rule(
        PAPER["alpha0_popularity"],
        _sim_estimate(r, 0.0, lambda get: get("a", "popularity"), ["popularity"]),
        _gap_margin(PAPER["alpha0_popularity"], "still 'slightly below random'"),
        label="popularity",
    )


@LEDGER.claim(
    "bellogin2017.fig5.below-random",
    statement="with uniform popularity (α = 0) popularity falls slightly below random",
    source="§5.1–5.2, Fig. 5 centre",
    paper_value="popularity < random",
    paper_dataset=SIMULATION,
    rule="sign rule on popularity − random 1R P@n at α = 0 (paired bootstrap over simulated users)",
    needs=("dataset", "settings", "simulation"),
)
def _below0(r):
    return _alpha_zero(r) or sign_rule(
        _sim_estimate(
            r,
            0.0,
            lambda get: get("a", "popularity") - get("a", "random"),
            ["popularity", "random"],
        ),
        "negative",
        label="popularity − random",
    )


@LEDGER.claim(
    "bellogin2017.fig5.rises",
    statement="popularity's precision grows with the popularity skew α",
    source="§5.2, Fig. 5 centre",
    paper_value="rises",
    paper_dataset=SIMULATION,
    rule="sign rule on popularity's 1R P@n at the largest α minus at the smallest (bootstrap over "
    "simulated users)",
    needs=("dataset", "settings", "simulation"),
)
def _rises(r):
    f = r["simulation"]
    lo, hi = _alpha(f, "min"), _alpha(f, "max")
    t = user_table({str(a): (f.loc[np.isclose(f["alpha"], a)], ["popularity"]) for a in (lo, hi)})
    return sign_rule(
        boot(r, t, lambda get: get(str(hi), "popularity") - get(str(lo), "popularity")),
        "positive",
        label=f"P(α={hi:g}) − P(α={lo:g})",
    )


@LEDGER.claim(
    "bellogin2017.fig5.cf-near-random",
    statement="kNN and MF stay around random on the simulated data",
    source="§5.2, Fig. 5 centre",
    paper_value=0.0,
    paper_dataset=SIMULATION,
    data_free=_NO_PATTERN,
    rule="value rule (equivalence) on system − random 1R P@n at the largest α (paired bootstrap "
    "over simulated users) against 0 with a margin of 0.00115, for MF and user-kNN: every one "
    "inside → agrees, any outside → differs",
    needs=("dataset", "settings", "simulation"),
)
def _cf_random(r):
    f = r["simulation"]
    hi = _alpha(f, "max")
    at = f.loc[np.isclose(f["alpha"], hi)]
    roles = [x for x in ("MF", "user-kNN") if x in set(pd.unique(at["system"]))]
    if not roles:
        return not_reproduced(
            missing_roles(["MF", "user-kNN"], at) or "no MF or kNN run at the largest α"
        )
    ests = [_sim_estimate(r, hi, mean_difference("a", x, "random"), [x, "random"]) for x in roles]
    outs = {
        x: value_rule(
            0.0,
            est,
            Margin(0.0, ALPHA0_GAP, "half the gap the paper calls 'slightly below random'"),
            label=f"{x} − random at α={hi:g}",
        )
        for x, est in zip(roles, ests, strict=True)
    }
    # the estimate farthest from 0 (the first of equals) is shown
    far = max(outs, key=lambda x: abs(ests[roles.index(x)].value))
    joined = all_of(outs)
    return replace(joined, ours=outs[far].ours, margin=outs[far].margin)


@LEDGER.claim(
    "bellogin2017.fig5.plsa-tracks",
    statement="pLSA closely matches popularity on the simulated data",
    source="§5.2, Fig. 5 centre",
    paper_value=0.0,
    paper_dataset=SIMULATION,
    data_free=_NO_PATTERN,
    rule="value rule (equivalence) on pLSA − popularity 1R P@n at the largest α (paired bootstrap "
    "over simulated users) against 0 with a margin of 0.00115",
    needs=("dataset", "settings", "simulation"),
)
def _plsa_sim(r):
    f = r["simulation"]
    hi = _alpha(f, "max")
    at = f.loc[np.isclose(f["alpha"], hi)]
    why = missing_roles(["pLSA"], at)
    if why:
        return not_reproduced(why)
    return value_rule(
        0.0,
        _sim_estimate(
            r, hi, lambda get: get("a", "pLSA") - get("a", "popularity"), ["pLSA", "popularity"]
        ),
        Margin(0.0, ALPHA0_GAP, "half the gap the paper calls 'slightly below random'"),
        label=f"pLSA − popularity at α={hi:g}",
    )


@LEDGER.claim(
    "bellogin2017.fig5.alpha",
    statement="the popularity skew of MovieLens 1M is α ≈ 1.4",
    source="§5.2",
    paper_value=PAPER["alpha"],
    paper_dataset=ML1M,
    rule="value rule (equivalence) on our fitted α (least squares on the whole dataset, no "
    "sampling), margin 0.05 (the printed digit) + 0.05; a magnitude of ML-1M, shown and not "
    "graded elsewhere",
    needs=("settings", "dataset", "fit"),
)
def _alpha_fit(r):
    fit = r["fit"]
    est = Estimate.exact(fit.alpha, method=f"least-squares fit on the dataset (c2 = {fit.c2:.3g})")
    margin = Margin.printed(PAPER["alpha"], 0.05, "the paper writes 'α ~ 1.4', an approximate fit")
    return value_rule(PAPER["alpha"], est, margin, label="α")


@LEDGER.claim(
    "bellogin2017.fig5.top-liked",
    statement="the most liked MovieLens item is liked by 32.7 % of the users",
    source="§5.2, Fig. 5 right",
    paper_value=PAPER["top_liked"],
    paper_dataset=ML1M,
    rule="value rule (equivalence) on the exact share, margin 0.0005 (the printed digit); a "
    "magnitude of ML-1M, shown and not graded elsewhere",
    needs=("settings", "dataset", "positive_shares"),
)
def _top_liked(r):
    x = r["positive_shares"]["top_liked"]
    margin = Margin.printed(PAPER["top_liked"], 0.0, "a count on the same data: only the printing")
    return value_rule(PAPER["top_liked"], Estimate.exact(x), margin, label="share")
