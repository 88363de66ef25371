"""The ledger's claims on real data: rating scales (sec. 3.2, Table 2) and virtual users
(sec. 2.2, sec. 4, Figs. 6–8), in the paper's order.

Uncertainty: a bootstrap over users (:meth:`Estimate.bootstrap_mean`,
:meth:`Estimate.bootstrap_diff`, or BC intervals of user-resampled replicates for
correlations and for the paired differences of "all measures agree", whose one-sided p-values
:func:`~recmeta.metaeval.bootstrap.sign_pvalues` reads from the same replicates); exact values
for identities.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from functools import partial
from typing import Any

import numpy as np
import pandas as pd

from ...ledger import (
    DERIVED,
    Estimate,
    Outcome,
    SignPart,
    equivalence_rule,
    every_sign,
    format_order,
    not_reproduced,
    sign_rule,
    value_rule,
)
from .claims import (
    CLOSEST_STRATEGY,
    CORRELATION_MARGIN,
    LEDGER,
    OHSUMED,
    STABLE,
    STABLE_REASON,
    VIRTUAL_LEVELS,
    VIRTUAL_USER_CORRELATION,
    exact_value,
    exact_zero,
    with_reason,
)
from .measures import PAPER_METRICS
from .virtual import pearson_over_users, quantise_levels

__all__ = ["many_levels"]


def _per_user(
    frame: pd.DataFrame, metric: str, exclude: str | None = None, **where: Any
) -> pd.Series:
    """Per-user mean over the systems (but ``exclude``) of ``metric``, for the rows ``where``."""
    mask = frame["metric"] == metric
    for key, value in where.items():
        mask &= frame[key] == value
    if exclude is not None:
        mask &= frame["system"] != exclude
    part = frame[mask]
    if part.empty:
        raise ValueError(f"no per-user rows for {metric!r} where {where}")
    return part.groupby("user")["value"].mean()


def _paired(a: pd.Series, b: pd.Series, n_boot: int, seed: int) -> Estimate:
    both = pd.concat([a.rename("a"), b.rename("b")], axis=1, join="inner").dropna()
    return Estimate.bootstrap_diff(
        both["a"].to_numpy(), both["b"].to_numpy(), seed=seed, n_resamples=n_boot
    )


def _virtual_gap(r: Mapping[str, Any], metric: str, levels: int) -> Estimate:
    """Per-user mean over the non-reference systems of ``metric`` against a virtual user with
    ``levels`` (-1: raw scores) minus the same against the ordinal (paper's 9-level) user."""
    v, ref = r["virtual_per_user"], r["virtual_reference"]
    a = _per_user(v, metric, exclude=ref, levels=levels)
    b = _per_user(v, metric, exclude=ref, levels=int(r["ordinal_levels"]))
    return _paired(a, b, int(r["n_boot"]), int(r["seed"]))


def many_levels(r: Mapping[str, Any]) -> int:
    """The largest ordinal level count of the virtual users in ``r['virtual_per_user']``."""
    levels = r["virtual_per_user"]["levels"]
    return int(levels[levels > 0].max())


def _scale_values(r: Mapping[str, Any], metric: str) -> pd.DataFrame:
    s = r["scale_per_user"]
    means = s[s["metric"] == metric].groupby(["scale", "system"])["value"].mean().unstack("scale")
    if "native" not in means or "doubled" not in means:
        raise ValueError("the scale study needs the scales 'native' and 'doubled'")
    return means


def _ordinal_part(r: Mapping[str, Any], metric: str) -> pd.DataFrame:
    """Per-user rows of ``metric`` of the non-reference systems against the ordinal user."""
    v, ref = r["virtual_per_user"], r["virtual_reference"]
    return v[
        (v["levels"] == int(r["ordinal_levels"])) & (v["system"] != ref) & (v["metric"] == metric)
    ]


def _closest(r: Mapping[str, Any]) -> dict[str, dict[str, Estimate]]:
    """Bootstrap means over users of every non-reference system against the ordinal virtual
    user, per measure."""
    return {
        metric: {
            str(name): Estimate.bootstrap_mean(
                g["value"].to_numpy(), seed=int(r["seed"]), n_resamples=int(r["n_boot"])
            )
            for name, g in _ordinal_part(r, metric).groupby("system")
        }
        for metric in PAPER_METRICS
    }


def paired_replicates(diff: np.ndarray, n_boot: int, seed: int) -> np.ndarray:
    """``n_boot`` bootstrap replicates of the mean of the per-user differences ``diff``
    (users resampled with replacement, in batches to bound memory)."""
    d = np.asarray(diff, dtype=float)
    if d.ndim != 1 or d.size < 2 or not np.isfinite(d).all():
        raise ValueError("need at least two finite per-user differences")
    rng = np.random.default_rng(seed)
    batch = max(1, 2_000_000 // d.size)
    reps = [
        d[rng.integers(0, d.size, size=(min(batch, n_boot - i), d.size))].mean(axis=1)
        for i in range(0, n_boot, batch)
    ]
    return np.concatenate(reps)


def _closest_by_mean(r: Mapping[str, Any], metric: str = "muAP") -> str:
    """The non-reference system with the highest mean ``metric`` against the ordinal virtual
    user."""
    v, ref = r["virtual_per_user"], r["virtual_reference"]
    part = v[
        (v["levels"] == int(r["ordinal_levels"])) & (v["system"] != ref) & (v["metric"] == metric)
    ]
    return str(part.groupby("system")["value"].mean().idxmax())


def _correlation(
    x: np.ndarray, y: np.ndarray, users: np.ndarray, r: Mapping[str, Any], what: str
) -> Estimate:
    value, reps = pearson_over_users(x, y, users, n_resamples=int(r["n_boot"]), seed=int(r["seed"]))
    return Estimate.from_replicates(
        value,
        reps[np.isfinite(reps)],
        method=f"Pearson's r over all {what}; BC interval of "
        f"{reps.size} bootstrap resamples of the users, 95 %",
    )


@LEDGER.claim(
    "scheel2011.tab2.doubling-lowers-ndcg",
    statement="Writing the same ratings on a scale twice as fine lowers NDCG",
    source="§3.2, Table 2; eq. 3",
    paper_value="lower (Table 2's values are not legible in our copy)",
    paper_dataset="Table 2 (worked example)",
    data_free="the paper states the direction for any graded data (Table 2 illustrates it); "
    "ours tests it on the chapter's ratings",
    rule="sign rule on the per-user mean over systems of NDCG(doubled) − NDCG(native) "
    "(bootstrap over users)",
    needs=("scale_per_user", "n_boot", "seed"),
)
def _(r):
    s = r["scale_per_user"]
    a = _per_user(s, "nDCG(gain=exp)", scale="doubled")
    b = _per_user(s, "nDCG(gain=exp)", scale="native")
    est = _paired(a, b, int(r["n_boot"]), int(r["seed"]))
    means = _scale_values(r, "nDCG(gain=exp)")
    change = means["doubled"] - means["native"]
    up, down = int((change > 0).sum()), int((change < 0).sum())
    out = sign_rule(est, "negative", label="NDCG(doubled) − NDCG(native)")
    return with_reason(out, f"{down} of {change.size} systems go down, {up} up")


def _doubling_moves_nothing(r: Mapping[str, Any], metric: str) -> Outcome:
    m = _scale_values(r, metric)
    return exact_zero(
        float((m["doubled"] - m["native"]).abs().max()),
        f"largest |{PAPER_METRICS[metric]} doubled − native|",
    )


for _metric, _key, _eq in (("NDCNG", "ndcng", "eq. 5"), ("muAP", "muap", "eq. 4")):
    LEDGER.claim(
        f"scheel2011.tab2.{_key}-scale-free",
        statement=f"{PAPER_METRICS[_metric]} gives the same values on the doubled scale",
        source=f"§3.2, Table 2; {_eq}",
        paper_value="unchanged",
        paper_dataset=DERIVED,
        rule="identity: largest |doubled − native| over the systems' means; holds within 1e-9",
        needs=("scale_per_user",),
    )(partial(_doubling_moves_nothing, metric=_metric))
del _metric, _key, _eq


@LEDGER.claim(
    "scheel2011.fig6.ohsumed-user-ratings",
    statement="µMAP, NDCG and NDCNG of eight LETOR strategies on OHSUMED's three-level expert "
    "judgments",
    source="§4, Fig. 6",
    paper_value="per-strategy values (not legible in our copy)",
    paper_dataset=f"OHSUMED ({OHSUMED['queries']} queries)",
    rule="not run",
)
def _(r):
    return not_reproduced(
        "OHSUMED and its LETOR strategies are not available here; the MovieLens "
        "scale study stands in for user-given grades"
    )


@LEDGER.claim(
    "scheel2011.fig7.reference-scores-one",
    statement="The strategy that serves as virtual user scores 1 on µMAP, NDCG and NDCNG",
    source="§4, Fig. 7",
    paper_value=1.0,
    paper_dataset=DERIVED,
    rule="identity: the reference system's mean on every measure, ordinal and raw virtual users; "
    "holds within 1e-9",
    needs=("virtual_per_user", "virtual_reference"),
)
def _(r):
    v = r["virtual_per_user"]
    own = v[(v["system"] == r["virtual_reference"]) & v["metric"].isin(list(PAPER_METRICS))]
    means = own.groupby(["levels", "metric"])["value"].mean().to_numpy()
    worst = float(means[np.argmax(np.abs(means - 1.0))])
    return exact_value(1.0, worst, "the reference's mean farthest from 1")


@LEDGER.claim(
    "scheel2011.fig7.closest-strategy",
    statement="All measures agree on which strategy is closest to the virtual user",
    source="§4, Fig. 7",
    paper_value=f"{CLOSEST_STRATEGY}, under all three measures",
    paper_dataset="OHSUMED, 9-level virtual user",
    rule="every: the system closest under µAP (highest mean) lies above every other system "
    "under every measure, Holm across the (measure, system) pairs (one-sided p-values from "
    "bootstrap replicates of the paired per-user differences)",
    needs=("virtual_per_user", "virtual_reference", "ordinal_levels", "n_boot", "seed"),
)
def _(r):
    name = _closest_by_mean(r)
    estimates = _closest(r)
    parts: dict[str, SignPart] = {}
    for metric in PAPER_METRICS:
        wide = _ordinal_part(r, metric).pivot(index="user", columns="system", values="value")
        for other in (c for c in wide.columns if c != name):
            both = wide[[name, other]].dropna()
            diff = (both[name] - both[other]).to_numpy()
            reps = paired_replicates(diff, int(r["n_boot"]), int(r["seed"]))
            key = f"{PAPER_METRICS[metric]}: {name} − {other}"
            est = Estimate.from_replicates(
                float(diff.mean()),
                reps,
                method=f"paired bootstrap over {diff.size} users (BC, {reps.size} resamples), 95 %",
            )
            parts[key] = SignPart.from_replicates(est, reps)
    out = every_sign(parts, "positive", label="the difference")
    order = "; ".join(f"{PAPER_METRICS[m]}: {format_order(e)}" for m, e in estimates.items())
    return replace(
        out,
        ours=estimates["muAP"][name],
        reason=f"{out.reason}; {name} has the highest mean µAP",
        detail=order,
    )


@LEDGER.claim(
    "scheel2011.sec2.2.virtual-users-correlation",
    statement="The relevance assessments of the two virtual users, an ordinal one with 9 levels "
    "and a real-valued one from another strategy, correlate strongly (ours: the reference's "
    "9-level grades and the raw scores of the system closest to it under µAP)",
    source="§2.2; §4, Fig. 7",
    paper_value=VIRTUAL_USER_CORRELATION,
    paper_dataset="OHSUMED (strategies 1 and 9 of LETOR)",
    rule=f"value rule (equivalence, margin {CORRELATION_MARGIN.rounding:g} + "
    f"{CORRELATION_MARGIN.substantive:g}) on Pearson's r over the candidate (user, item) pairs "
    "(bootstrap over users)",
    needs=(
        "virtual_per_user",
        "virtual_reference",
        "ordinal_levels",
        "candidate_scores",
        "n_boot",
        "seed",
    ),
)
def _(r):
    name = _closest_by_mean(r)
    c = r["candidate_scores"]
    cols = ["user", "item", "score"]
    ref = c.loc[c["system"] == r["virtual_reference"], cols].reset_index(drop=True)
    ref = ref.assign(grade=quantise_levels(ref, int(r["ordinal_levels"])))
    other = c.loc[c["system"] == name, cols]
    other = other.assign(raw=other["score"] - other.groupby("user")["score"].transform("min"))
    pair = ref.merge(other[["user", "item", "raw"]], on=["user", "item"])
    est = _correlation(
        pair["grade"].to_numpy(),
        pair["raw"].to_numpy(),
        pair["user"].to_numpy(),
        r,
        "candidate (user, item) pairs",
    )
    out = value_rule(
        VIRTUAL_USER_CORRELATION,
        est,
        CORRELATION_MARGIN,
        label=f"r({r['virtual_reference']} in {r['ordinal_levels']} levels, {name} raw)",
    )
    return with_reason(
        out,
        f"{name} is the system closest to the reference under µAP, as the paper's second "
        "virtual user (strategy 9) is to its first",
    )


def _levels_of(r: Mapping[str, Any], real: bool) -> int:
    return -1 if real else many_levels(r)


def _virtual_falls(r: Mapping[str, Any], real: bool) -> Outcome:
    est = _virtual_gap(r, "nDCG(gain=exp)", _levels_of(r, real))
    n = _levels_of(r, real)
    label = f"NDCG({'raw' if n < 0 else n} levels) − NDCG({r['ordinal_levels']} levels)"
    return sign_rule(est, "negative", label=label)


def _virtual_stable(r: Mapping[str, Any], real: bool, metric: str) -> Outcome:
    n = _levels_of(r, real)
    est = _virtual_gap(r, metric, n)
    name = PAPER_METRICS[metric]
    label = f"{name}({'raw' if n < 0 else n} levels) − {name}({r['ordinal_levels']} levels)"
    out = equivalence_rule(est, STABLE, label=label)
    return replace(with_reason(out, STABLE_REASON), margin=STABLE)


# Fig. 8: the real-valued virtual user (the paper's), then an ordinal one with many levels
_NEEDS = ("virtual_per_user", "virtual_reference", "ordinal_levels", "n_boot", "seed")
for _kind in ("real-valued", "ordinal"):
    _real = _kind == "real-valued"
    _versus = (
        "the raw scores (real-valued, as many levels as distinct scores)"
        if _real
        else "many ordinal levels (the sweep's largest count; not in the paper)"
    )
    _source = "§4, Figs. 7–8" + ("" if _real else ", ordinal analogue")
    LEDGER.claim(
        f"scheel2011.fig8.{_kind}.ndcg-lower",
        statement=f"Against a virtual user with {_versus}, the other systems' NDCG is lower than "
        "against the 9-level one",
        source=_source,
        paper_value=f"disproportionately lower ({VIRTUAL_LEVELS[CLOSEST_STRATEGY]} levels)",
        paper_dataset="OHSUMED, virtual users",
        rule="sign rule on the per-user mean over the other systems of the difference (bootstrap "
        "over users)",
        needs=_NEEDS,
    )(partial(_virtual_falls, real=_real))
    for _metric, _key in (("muAP", "muap"), ("NDCNG", "ndcng")):
        LEDGER.claim(
            f"scheel2011.fig8.{_kind}.{_key}-stable",
            statement=f"Against a virtual user with {_versus}, {PAPER_METRICS[_metric]} hardly "
            "differs from its value against the 9-level one",
            source=_source,
            paper_value="does not differ much",
            paper_dataset="OHSUMED, virtual users",
            rule=f"equivalence: per-user mean difference inside ±{STABLE:g} (bootstrap over users)",
            needs=_NEEDS,
        )(partial(_virtual_stable, real=_real, metric=_metric))
del _kind, _real, _versus, _source, _metric, _key
