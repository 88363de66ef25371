"""The tables the statistical-biases chapter shows, built from a :class:`~.study.Study`'s results.

Each function returns a plain frame (the chapter styles it); the experiments must have run.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .designs import TOY_SETS, toy_sets
from .settings import FIG8_DESIGNS, NONPERSONALISED, ORACLE, PAPER
from .study import Study
from .trials import summarise

__all__ = [
    "ai_ti_table",
    "eq3_table",
    "fig1_table",
    "fig2_table",
    "fig8_designs",
    "fig8_table",
    "formula_table",
    "identities_table",
    "nonpersonalised_table",
    "removal_table",
    "uniform_table",
]


def fig1_table() -> pd.DataFrame:
    """Fig. 1's toy example: user u's target sets in each design of Table 3, as the chapter's
    builder makes them and as worked out by hand from the paper's caption (x: one item of the
    pool in brackets, the NN sample)."""

    def hand(fixed: frozenset[str], pool: frozenset[str]) -> str:
        items = ", ".join(sorted(fixed))
        return items + (f" + x ∈ {{{', '.join(sorted(pool))}}}" if pool else "")

    built = toy_sets()
    return pd.DataFrame(
        {
            "built": {
                d: ", ".join("{" + ", ".join(b) + "}" for b in sets) for d, sets in built.items()
            },
            "Fig. 1 (by hand)": {
                d: "; ".join("{" + hand(f, p) + "}" for f, p in want)
                for d, want in TOY_SETS.items()
            },
        }
    ).rename_axis("design")


def fig2_table(study: Study) -> pd.DataFrame:
    """Mean P@n over splits, designs × systems (Fig. 2), with the number of splits each design's
    baselines ran on (the designs over all items run on fewer)."""
    split = summarise(study.results["fig2"], by=["design"])
    table = split.groupby(["design", "system"])["P"].mean().unstack("system")[study.order]
    base = split.loc[split["system"].isin(["popularity", "random"])]
    table["splits"] = base.groupby("design")["seed"].nunique()
    return table


def ai_ti_table(study: Study) -> pd.DataFrame:
    """AR P@n under AI-AN and TI-AN on the splits both designs ran on, and the relative change
    TI/AI − 1, per system (the comparison of §3.3 on the same splits); empty when AI-AN did not
    run. The chapter's sentence on AI against TI reads this table."""
    split = summarise(study.results["fig2"], by=["design"])
    ai = split.loc[split["design"] == "AR AI-AN"]
    ti = split.loc[split["design"] == "AR TI-AN"]
    both = ai.merge(ti, on=["system", "seed"], suffixes=(" AI", " TI"))
    if both.empty:
        return pd.DataFrame(columns=["AI-AN", "TI-AN", "change", "splits"], dtype=float)
    means = both.groupby("system")[["P AI", "P TI"]].mean()
    out = pd.DataFrame(
        {
            "AI-AN": means["P AI"],
            "TI-AN": means["P TI"],
            "change": means["P TI"] / means["P AI"] - 1,
            "splits": both.groupby("system")["seed"].nunique(),
        }
    )
    return out.loc[[s for s in study.order if s in out.index]]


def formula_table(study: Study) -> pd.DataFrame:
    """Per σ: eq. 4, the exact ρ, random's AR P@n and ρ's two parts; eq. 5's 1/t beside random's
    1R P@n (means over the check splits)."""
    ar_checks, eq5 = study.results["ar_checks"], study.results["eq5"]
    table = ar_checks.groupby("sigma")[["eq4", "rho", "random", "cov", "split"]].mean()
    table = table.join(
        eq5.groupby("sigma")[["formula", "P"]]
        .mean()
        .rename(columns={"formula": "1R: 1/t (eq. 5)", "P": "1R: random P"})
    )
    return table.rename(
        columns={
            "eq4": "AR: eq. 4",
            "rho": "AR: rho (exact)",
            "random": "AR: random P",
            "cov": "AR: covariance part",
            "split": "AR: split part",
        }
    )


def removal_table(study: Study) -> pd.DataFrame:
    """Popularity's AR TI-AN P@n, nDCG@n and recall@n per removed share, over their value on the
    full test data (§4.2)."""
    ar_removal = study.results["ar_removal"]
    pop_rm = ar_removal.loc[ar_removal["system"] == "popularity"]
    rel = pd.DataFrame({m: pop_rm.groupby("removed")[m].mean() for m in ("P", "nDCG", "recall")})
    return rel / rel.iloc[0]


def eq3_table(study: Study) -> pd.DataFrame:
    """Mean and standard deviation over the check splits of popularity's measured AR TI-AN P@n,
    eq. 3, its conditional form and the exact expectation of a fixed ranking."""
    eq3 = study.results["ar_checks"].dropna(subset=["popularity"])
    return (
        eq3[["popularity", "eq3", "conditional", "exact"]]
        .agg(["mean", "std"])
        .rename(
            columns={
                "popularity": "measured",
                "eq3": "eq. 3",
                "conditional": "eq. 3, conditional",
                "exact": "exact, fixed ranking",
            }
        )
    )


def nonpersonalised_table(study: Study) -> pd.DataFrame:
    """Mean and standard deviation over splits of the non-personalised rankings' AR TI-AN P@n,
    with the ceiling last (§5.1)."""
    per_split = summarise(study.results["nonpersonalised"])
    return per_split.groupby("system")["P"].agg(["mean", "std"]).loc[[*NONPERSONALISED, ORACLE]]


def uniform_table(study: Study) -> pd.DataFrame:
    """|T|, η and the test share of the uniform-test split, ours beside the paper's (§6.2)."""
    u = study.results["uniform_size"]
    return pd.DataFrame(
        {
            "ours": {
                "dataset": study.dataset,
                "|T|": u["size"],
                "eta": u["eta"],
                "test share": u["test share"],
            },
            "paper": {
                "dataset": PAPER["dataset"],
                "|T|": PAPER["uniform_size"],
                "eta": PAPER["uniform_eta"],
                "test share": np.nan,
            },
        }
    )


def fig8_designs(study: Study) -> list[str]:
    """The designs of Fig. 8 that ran, in the paper's order."""
    ran = set(study.results["fig8"]["design"])
    return [d for d in FIG8_DESIGNS if d in ran]


def fig8_table(study: Study) -> pd.DataFrame:
    """Mean P@n over splits, designs × systems (Fig. 8), with popularity over random."""
    split = summarise(study.results["fig8"], by=["design"])
    table = split.groupby(["design", "system"])["P"].mean().unstack("system")[study.order]
    table["popularity / random"] = table["popularity"] / table["random"]
    return table.loc[fig8_designs(study)]


def identities_table(study: Study) -> pd.DataFrame:
    """The largest |AP − RR| and |nDCG(rating gain) − nDCG(binary gain)| per design (§6.3)."""
    ident = study.results["identities"]
    gaps = ident.assign(
        **{
            "|AP - RR|": (ident["AP"] - ident["RR"]).abs(),
            "|nDCG rating - binary|": (ident["nDCG rating gain"] - ident["nDCG binary gain"]).abs(),
        }
    )
    return gaps.groupby(["design", "threshold"])[["|AP - RR|", "|nDCG rating - binary|"]].max()
