"""Scheel, Lommatzsch & Albayrak (2011), *Performance Measures for Multi-Graded Relevance*: the
claims of the multi-graded relevance chapter, as a ledger.

Every figure, table, numbered equation and headline claim of the paper has a row. Our copy of the
paper lost its tables and the values of its figures; where a printed value cannot be read, the
row keeps the paper's wording and says so instead of guessing a number. The paper's numbers that
can be read are the constants below; the chapter takes them from here.

The chapter passes these results (see :mod:`recmeta.multigraded` for the functions making them):

*Artificial data (the same for every dataset)*

- ``weights_example``: :func:`~recmeta.multigraded.level_weights` of :data:`EQ4_EXAMPLE_LEVELS`;
- ``threshold_ap``: AP of the chapter's own 0–4 example list at each threshold (a Series);
- ``swap_study``: :func:`~recmeta.multigraded.swap_study` on integer levels, with thresholds;
- ``swap_study_unit``: the same study on levels spread over [0, 1];
- ``single_swaps``: :func:`~recmeta.multigraded.single_swap_scores` of one uniform reference;
- ``level_counts``: items per level of each reference (distribution, levels, level, items).

*Real data (one set per dataset)*

- ``scale_per_user``: :func:`~recmeta.multigraded.scale_study` with ``per_user=True``, scales
  ``native`` and ``doubled`` at least;
- ``virtual_per_user``: :func:`~recmeta.multigraded.virtual_user_study` with ``per_user=True``,
  levels including ``ordinal_levels``, a larger ordinal count and the raw scores (``-1``);
- ``virtual_reference`` (system name), ``ordinal_levels`` (the paper's 9),
  ``candidate_scores`` (system, user, item, score), ``n_boot`` and ``seed`` (bootstrap).

Uncertainty: on artificial data a normal interval from the spread over the repetitions
(:func:`recmeta.multigraded.curve_difference`); on real data a bootstrap over users
(:meth:`Estimate.bootstrap_mean`, :meth:`Estimate.bootstrap_diff`, or percentile intervals of
user-resampled replicates for correlations); exact values for enumerations and identities.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from . import register
from ..ledger import (
    Estimate,
    Ledger,
    Outcome,
    Verdict,
    format_estimate,
    format_paper,
    not_reproduced,
    sign_rule,
    top_set,
    value_rule,
)

if TYPE_CHECKING:
    from ..costs import Plan, Size

__all__ = [
    "cost_plan",
    "CHAPTER",
    "LEDGER",
    "PAPER_ITEMS",
    "PAPER_MAX_SWAPS",
    "PAPER_REPETITIONS",
    "EQ4_EXAMPLE_LEVELS",
    "EQ4_EXAMPLE_WEIGHTS",
    "OHSUMED",
    "VIRTUAL_LEVELS",
    "VIRTUAL_USER_CORRELATION",
    "CLOSEST_STRATEGY",
    "STABLE",
    "EXACT",
    "outcome",
    "sentence",
    "describe_run",
    "describe_levels_effect",
    "describe_virtual_users",
    "gain_or_levels",
]


def cost_plan(size: Size, systems: list[str], *, repetitions: int) -> Plan:
    """The steps of the real-data sections on a dataset of ``size`` that :mod:`recmeta.costs`
    can estimate: the runs of ``systems`` on the per-user holdout."""
    from ..costs import Plan

    return (Plan(size).runs(systems)
            .unmodelled(f"the artificial rankings ({repetitions} per swap count; they do not "
                        "depend on the dataset) and the bootstrap intervals"))


CHAPTER = "multigraded-relevance"

#: the artificial study (sec. 2.1): items per reference, largest swap count, rankings per count
PAPER_ITEMS = 100
PAPER_MAX_SWAPS = 99
PAPER_REPETITIONS = 100

#: the worked example of eq. 4 (sec. 3.1): three levels and the weights of the two thresholds
EQ4_EXAMPLE_LEVELS = (0.0, 0.3, 1.0)
EQ4_EXAMPLE_WEIGHTS = (0.3, 0.7)

#: the OHSUMED collection as LETOR provides it (sec. 2.2)
OHSUMED = {"queries": 106, "strategies": 25, "shown": 8, "levels": 3}

#: levels of the two virtual users (sec. 2.2): strategy 1 (TF of title), strategy 9 (TF-IDF)
VIRTUAL_LEVELS = {"strategy 1 (TF of title)": 9, "strategy 9 (TF-IDF of title)": 158}

#: Pearson's correlation of the two virtual users' relevance scores (sec. 2.2), printed as 0.96
VIRTUAL_USER_CORRELATION = 0.96
#: half a unit of its last printed digit
CORRELATION_TOLERANCE = 0.005

#: the strategy every measure finds closest to the reference strategy 1 (sec. 4, Fig. 7)
CLOSEST_STRATEGY = "strategy 9 (TF-IDF of title)"

#: "does not differ much": within half a grid step of the paper's figures, whose value axes
#: have a line every 0.1 (Figs. 4–8)
STABLE = 0.05

#: tolerance of identities that hold exactly up to floating-point rounding
EXACT = 1e-9

_METRICS = {"muAP": "µAP", "nDCG(gain=exp)": "NDCG", "NDCNG": "NDCNG"}
_Z95 = 1.959963984540054  # scipy.stats.norm.ppf(0.975)

LEDGER = register(Ledger(CHAPTER, paper="scheel2011multigraded",
                         title="Multi-graded relevance (Scheel, Lommatzsch & Albayrak 2011)"))


# --------------------------------------------------------------------------------------------
# helpers


def _normal(value: float, se: float, what: str) -> Estimate:
    """``value ± 1.96 se``: a normal 95 % interval."""
    return Estimate(value, value - _Z95 * se, value + _Z95 * se,
                    f"normal interval, 95 %, from the spread over {what}")


def _with_reason(out: Outcome, extra: str, detail: str | None = None) -> Outcome:
    return Outcome(out.verdict, out.ours, f"{out.reason}; {extra}", detail or out.detail)


def _settings(study: pd.DataFrame, distribution: str) -> tuple[int, int]:
    levels = sorted(study.loc[study["distribution"] == distribution, "levels"].unique())
    if len(levels) < 2:
        raise ValueError(f"the study has fewer than two level counts for {distribution!r}")
    return int(levels[0]), int(levels[-1])


def _level_gap(study: pd.DataFrame, distribution: str, metric: str) -> tuple[Estimate, int, int]:
    from ..multigraded import curve_difference

    few, many = _settings(study, distribution)
    value, se = curve_difference(
        study, {"distribution": distribution, "levels": few, "metric": metric},
        {"distribution": distribution, "levels": many, "metric": metric})
    reps = int(study["n"].iloc[0])
    est = _normal(value, se, f"{reps} rankings per swap count")
    return est, few, many


def _falls(study: pd.DataFrame, distribution: str, metric: str) -> Outcome:
    est, few, many = _level_gap(study, distribution, metric)
    name = _METRICS[metric]
    out = sign_rule(est, "positive", label=f"mean {name}({few} levels) − {name}({many} levels)")
    return _with_reason(out, "averaged over every swap count ≥ 1")


def _stable(study: pd.DataFrame, distribution: str, metric: str) -> Outcome:
    est, few, many = _level_gap(study, distribution, metric)
    out = value_rule(0.0, est, tolerance=STABLE, max_width=STABLE,
                     label=f"mean {_METRICS[metric]}({few} levels) − {_METRICS[metric]}({many} levels)")
    return _with_reason(out, f"'stable' means within ±{STABLE:g} of no difference")


def _per_user(frame: pd.DataFrame, metric: str, exclude: str | None = None, **where: Any) -> pd.Series:
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
    return Estimate.bootstrap_diff(both["a"].to_numpy(), both["b"].to_numpy(), seed=seed,
                                   n_resamples=n_boot)


def _virtual_gap(r: Mapping[str, Any], metric: str, levels: int) -> Estimate:
    """Per-user mean over the non-reference systems of ``metric`` against a virtual user with
    ``levels`` (-1: raw scores) minus the same against the ordinal (paper's 9-level) user."""
    v, ref = r["virtual_per_user"], r["virtual_reference"]
    a = _per_user(v, metric, exclude=ref, levels=levels)
    b = _per_user(v, metric, exclude=ref, levels=int(r["ordinal_levels"]))
    return _paired(a, b, int(r["n_boot"]), int(r["seed"]))


def _many_levels(r: Mapping[str, Any]) -> int:
    levels = r["virtual_per_user"]["levels"]
    return int(levels[levels > 0].max())


def _scale_values(r: Mapping[str, Any], metric: str) -> pd.DataFrame:
    s = r["scale_per_user"]
    means = s[s["metric"] == metric].groupby(["scale", "system"])["value"].mean().unstack("scale")
    if "native" not in means or "doubled" not in means:
        raise ValueError("the scale study needs the scales 'native' and 'doubled'")
    return means


def _exact_zero(value: float, label: str) -> Outcome:
    return value_rule(0.0, Estimate.exact(value), tolerance=EXACT, label=label)


def _closest(r: Mapping[str, Any]) -> tuple[dict[str, dict[str, Estimate]], dict[str, tuple[str, ...]]]:
    """Bootstrap means over users of every non-reference system against the ordinal virtual
    user, per measure, and each measure's top set (systems tied with the best)."""
    v, ref = r["virtual_per_user"], r["virtual_reference"]
    part = v[(v["levels"] == int(r["ordinal_levels"])) & (v["system"] != ref)]
    estimates: dict[str, dict[str, Estimate]] = {}
    tops: dict[str, tuple[str, ...]] = {}
    for metric in _METRICS:
        rows = part[part["metric"] == metric]
        est = {str(name): Estimate.bootstrap_mean(g["value"].to_numpy(), seed=int(r["seed"]),
                                                   n_resamples=int(r["n_boot"]))
               for name, g in rows.groupby("system")}
        estimates[metric] = est
        tops[metric] = top_set(est)
    return estimates, tops


def _closest_by_mean(r: Mapping[str, Any], metric: str = "muAP") -> str:
    """The non-reference system with the highest mean ``metric`` against the ordinal virtual user."""
    v, ref = r["virtual_per_user"], r["virtual_reference"]
    part = v[(v["levels"] == int(r["ordinal_levels"])) & (v["system"] != ref) & (v["metric"] == metric)]
    return str(part.groupby("system")["value"].mean().idxmax())


def _correlation(
    x: np.ndarray, y: np.ndarray, users: np.ndarray, r: Mapping[str, Any], what: str
) -> Estimate:
    from ..multigraded import pearson_over_users

    value, reps = pearson_over_users(x, y, users, n_resamples=int(r["n_boot"]), seed=int(r["seed"]))
    return Estimate.from_samples(reps[np.isfinite(reps)], value=value,
                                 method=f"Pearson's r over all {what}; percentile interval of "
                                        f"{reps.size} bootstrap resamples of the users, 95 %")


# --------------------------------------------------------------------------------------------
# the claims, in the paper's order


@LEDGER.claim(
    "scheel2011.sec2.ideal-scores-one",
    statement="The ideal ranking (no swap) scores 1 on every measure",
    source="§2", paper_value=1.0, paper_dataset="artificial rankings",
    rule="exact: the unswapped rankings of both swap studies, every measure; agrees within 1e-9",
    needs=("swap_study", "swap_study_unit"),
)
def _(r):
    rows = pd.concat([r["swap_study"], r["swap_study_unit"]])
    values = rows.loc[rows["swaps"] == 0, "value"].to_numpy()
    worst = float(values[np.argmax(np.abs(values - 1.0))])
    est = Estimate.exact(worst, "exact (every unswapped ranking; the value farthest from 1)")
    return value_rule(1.0, est, tolerance=EXACT)


@LEDGER.claim(
    "scheel2011.tab1.threshold-changes-ap",
    statement="The threshold t that makes grades binary strongly affects AP (t = 0 makes every "
              "item relevant, a t above the top grade none)",
    source="§3.1, Table 1; eqs. 1–2",
    paper_value="AP differs across t (Table 1's values are not legible in our copy)",
    paper_dataset="8-item list, grades 0–4",
    rule="exact: range of AP^t over the positive grades of our own 8-item list; agrees if > 0",
    needs=("threshold_ap",),
)
def _(r):
    ap = pd.Series(r["threshold_ap"], dtype=float)
    lo, hi = ap.idxmin(), ap.idxmax()
    est = Estimate.exact(float(ap.max() - ap.min()), "exact (max − min of AP over the thresholds)")
    out = sign_rule(est, "positive", label="range of AP^t")
    return _with_reason(out, f"AP^t runs from {ap.min():.3f} (t = {lo:g}) to {ap.max():.3f} (t = {hi:g}) "
                             "on our own list, since the paper's is not legible")


@LEDGER.claim(
    "scheel2011.eq4.example-weights",
    statement=f"With levels {', '.join(f'{x:g}' for x in EQ4_EXAMPLE_LEVELS)}, µAP weighs the "
              f"thresholds {EQ4_EXAMPLE_LEVELS[1]:g} and {EQ4_EXAMPLE_LEVELS[2]:g} by "
              f"{EQ4_EXAMPLE_WEIGHTS[0]:g} and {EQ4_EXAMPLE_WEIGHTS[1]:g}",
    source="§3.1, eq. 4", paper_value=", ".join(f"{w:g}" for w in EQ4_EXAMPLE_WEIGHTS),
    paper_dataset="worked example",
    rule="exact: both weights of level_weights equal the paper's within 1e-9",
    needs=("weights_example",),
)
def _(r):
    w = pd.Series(r["weights_example"], dtype=float)
    ours = w.to_numpy()
    paper = np.asarray(EQ4_EXAMPLE_WEIGHTS)
    text = ", ".join(f"{x:g}" for x in ours)
    est = Estimate.exact(float(ours[-1]), "exact (eq. 4)")
    if ours.shape == paper.shape and np.allclose(ours, paper, rtol=0, atol=EXACT):
        return Outcome(Verdict.AGREES, est, f"our weights {text} equal the paper's", text)
    return Outcome(Verdict.DIFFERS, est, f"our weights {text} differ from the paper's", text)


@LEDGER.claim(
    "scheel2011.sec5.two-levels-equal-ap",
    statement="With two relevance levels µAP equals AP (µMAP equals MAP)",
    source="§5; eq. 4", paper_value="identical", paper_dataset="(a property of eq. 4)",
    rule="exact: largest |µMAP − MAP| over the two-level swap studies; agrees within 1e-9",
    needs=("swap_study",),
)
def _(r):
    s = r["swap_study"]
    two = s[s["levels"] == 2]
    if two.empty:
        raise ValueError("the swap study has no two-level reference")
    mu = two[two["metric"] == "muAP"].set_index(["distribution", "swaps"])["value"]
    ap = two[two["metric"] == "MAP"].set_index(["distribution", "swaps"])["value"]
    gap = float((mu - ap.reindex(mu.index)).abs().max())
    return _exact_zero(gap, "largest |µMAP − MAP|")


@LEDGER.claim(
    "scheel2011.sec4.mu-map-mean-of-thresholds",
    statement="µMAP is the distance-weighted mean of the MAP at each threshold (OHSUMED: t = 1 "
              "and t = 2; the 9-level virtual user: 8 MAP values)",
    source="§4 (Figs. 6–7); eq. 4", paper_value="weighted mean", paper_dataset="OHSUMED",
    rule="exact: largest |µMAP − Σ_t w_t MAP^t| over every setting of the swap study; within 1e-9",
    needs=("swap_study",),
)
def _(r):
    from ..multigraded import level_weights

    s = r["swap_study"]
    worst = 0.0
    for _, part in s.groupby(["distribution", "levels"]):
        maps = part[part["metric"] == "MAP"].pivot(index="swaps", columns="threshold", values="value")
        mu = part[part["metric"] == "muAP"].set_index("swaps")["value"].reindex(maps.index)
        w = level_weights(maps.columns.to_numpy())
        worst = max(worst, float(np.abs(maps.to_numpy() @ w.to_numpy() - mu.to_numpy()).max()))
    return _exact_zero(worst, "largest |µMAP − Σ w_t MAP^t|")


@LEDGER.claim(
    "scheel2011.sec2.1.performance-falls-with-swaps",
    statement="Every measure falls as the number of random swaps grows",
    source="§2.1, Fig. 1; §4, Fig. 4", paper_value="decreases", paper_dataset="artificial rankings",
    rule="sign rule on the smallest drop 1 − mean(at the most swaps) over every setting and measure "
         "(normal interval over the repetitions)",
    needs=("swap_study",),
)
def _(r):
    s = r["swap_study"]
    s = s[s["threshold"].isna() & s["metric"].isin(list(_METRICS))]
    top = s["swaps"].max()
    start = s[s["swaps"] == 0].set_index(["distribution", "levels", "metric"])["value"]
    end = s[s["swaps"] == top].set_index(["distribution", "levels", "metric"])
    drop = start.reindex(end.index) - end["value"]
    key = drop.idxmin()
    se = float(end.loc[key, "sd"] / np.sqrt(end.loc[key, "n"]))
    est = _normal(float(drop.loc[key]), se, f"{int(end.loc[key, 'n'])} rankings")
    out = sign_rule(est, "positive", label=f"smallest drop after {top} swaps")
    dist, levels, metric = key
    return _with_reason(out, f"the smallest drop is that of {_METRICS[metric]} ({dist}, {levels} levels)")


@LEDGER.claim(
    "scheel2011.sec2.1.cost-depends-on-distance",
    statement="How much a swap costs depends on the distance between the levels of the two items",
    source="§2.1", paper_value="depends on the distance", paper_dataset="artificial rankings",
    rule="exact: Spearman's ρ between level distance and loss 1 − score over every single swap of "
         "a uniform reference, the smallest over the three measures; agrees if > 0",
    needs=("single_swaps",),
)
def _(r):
    from scipy.stats import spearmanr

    sw = r["single_swaps"]
    rho = {m: float(spearmanr(sw["distance"], 1.0 - sw[m]).statistic) for m in _METRICS if m in sw}
    if not rho:
        raise ValueError("single_swaps holds none of the paper's measures")
    low = min(rho, key=rho.get)
    est = Estimate.exact(rho[low], f"exact (all {len(sw)} single swaps)")
    out = sign_rule(est, "positive", label=f"Spearman ρ of {_METRICS[low]}")
    detail = ", ".join(f"{_METRICS[m]} {v:.3f}" for m, v in rho.items())
    return _with_reason(out, f"ρ per measure: {detail}")


@LEDGER.claim(
    "scheel2011.fig2-3.level-distributions",
    statement="Uniform references spread their items evenly over the levels; non-uniform ones "
              "draw level probabilities at random, so that some levels may stay unused",
    source="§2.1, Figs. 2–3", paper_value="some levels unused (non-uniform)",
    paper_dataset="artificial rankings",
    rule="exact: uniform counts differ by at most one item; count the empty levels of the "
         "non-uniform references (agrees if at least one)",
    needs=("level_counts",),
)
def _(r):
    c = r["level_counts"]
    uni = c[c["distribution"] == "uniform"].groupby("levels")["items"].agg(lambda x: x.max() - x.min())
    empty = int((c.loc[c["distribution"] == "non-uniform", "items"] == 0).sum())
    est = Estimate.exact(empty, "exact (count)")
    even = bool((uni <= 1).all())
    if even and empty > 0:
        return Outcome(Verdict.AGREES, est, f"uniform references are even; the non-uniform ones leave "
                                            f"{empty} levels empty")
    if not even:
        return Outcome(Verdict.DIFFERS, est, "a uniform reference is not even")
    return Outcome(Verdict.INCONCLUSIVE, est, "no level of the non-uniform references is empty in this "
                                              "draw (the paper says levels *may* stay unused)")


def _fig_claims(fig: str, distribution: str) -> None:
    where = f"{distribution} levels"
    LEDGER.claim(
        f"scheel2011.{fig}.ndcg-falls-with-levels",
        statement=f"NDCG is lower with more relevance levels ({where}, integer levels)",
        source=f"§4, {fig.replace('fig', 'Fig. ')}; §5", paper_value="lower with more levels",
        paper_dataset="artificial rankings",
        rule="sign rule on mean NDCG(fewest levels) − NDCG(most levels) over the swap counts "
             "(normal interval over the repetitions)",
        needs=("swap_study",),
    )(lambda r: _falls(r["swap_study"], distribution, "nDCG(gain=exp)"))
    for metric, key in (("muAP", "muap"), ("NDCNG", "ndcng")):
        LEDGER.claim(
            f"scheel2011.{fig}.{key}-stable-across-levels",
            statement=f"{_METRICS[metric]} hardly depends on the number of levels ({where})",
            source=f"§4, {fig.replace('fig', 'Fig. ')}; §5",
            paper_value="almost independent of the number of levels",
            paper_dataset="artificial rankings",
            rule=f"value rule: mean {_METRICS[metric]}(fewest) − {_METRICS[metric]}(most levels) "
                 f"within ±{STABLE:g} of 0 (normal interval over the repetitions)",
            needs=("swap_study",),
        )(lambda r, metric=metric: _stable(r["swap_study"], distribution, metric))


_fig_claims("fig4", "uniform")


@LEDGER.claim(
    "scheel2011.fig4.gain-size-not-level-count",
    statement="The low NDCG with many levels comes from their high gains: on levels spread over "
              "[0, 1], NDCG hardly depends on the number of levels",
    source="§5 (on Fig. 4)", paper_value="high gains cause the low NDCG",
    paper_dataset="artificial rankings (level values not given)",
    rule=f"value rule: mean NDCG(fewest) − NDCG(most levels), uniform levels on [0, 1], within "
         f"±{STABLE:g} of 0 (normal interval over the repetitions)",
    needs=("swap_study_unit",),
)
def _(r):
    return _stable(r["swap_study_unit"], "uniform", "nDCG(gain=exp)")


_fig_claims("fig5", "non-uniform")


@LEDGER.claim(
    "scheel2011.tab2.doubling-lowers-ndcg",
    statement="Writing the same ratings on a scale twice as fine lowers NDCG",
    source="§3.2, Table 2; eq. 3", paper_value="lower (Table 2's values are not legible in our copy)",
    paper_dataset="worked example",
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
    return _with_reason(out, f"{down} of {change.size} systems go down, {up} up")


for _metric, _key, _eq in (("NDCNG", "ndcng", "eq. 5"), ("muAP", "muap", "eq. 4")):
    LEDGER.claim(
        f"scheel2011.tab2.{_key}-scale-free",
        statement=f"{_METRICS[_metric]} gives the same values on the doubled scale",
        source=f"§3.2, Table 2; {_eq}", paper_value="unchanged",
        paper_dataset="worked example",
        rule="exact: largest |doubled − native| over the systems' means; agrees within 1e-9",
        needs=("scale_per_user",),
    )(lambda r, metric=_metric: _exact_zero(
        float((lambda m: (m["doubled"] - m["native"]).abs().max())(_scale_values(r, metric))),
        f"largest |{_METRICS[metric]} doubled − native|"))
del _metric, _key, _eq


@LEDGER.claim(
    "scheel2011.fig6.ohsumed-user-ratings",
    statement="µMAP, NDCG and NDCNG of eight LETOR strategies on OHSUMED's three-level expert "
              "judgments",
    source="§4, Fig. 6", paper_value="per-strategy values (not legible in our copy)",
    paper_dataset=f"OHSUMED ({OHSUMED['queries']} queries)",
    rule="not run",
)
def _(r):
    return not_reproduced("OHSUMED and its LETOR strategies are not available here; the MovieLens "
                          "scale study stands in for user-given grades")


@LEDGER.claim(
    "scheel2011.fig7.reference-scores-one",
    statement="The strategy that serves as virtual user scores 1 on µMAP, NDCG and NDCNG",
    source="§4, Fig. 7", paper_value=1.0, paper_dataset="OHSUMED, virtual user",
    rule="exact: the reference system's mean on every measure, ordinal and raw virtual users; "
         "agrees within 1e-9",
    needs=("virtual_per_user", "virtual_reference"),
)
def _(r):
    v = r["virtual_per_user"]
    own = v[(v["system"] == r["virtual_reference"]) & v["metric"].isin(list(_METRICS))]
    means = own.groupby(["levels", "metric"])["value"].mean().to_numpy()
    worst = float(means[np.argmax(np.abs(means - 1.0))])
    return value_rule(1.0, Estimate.exact(worst, "exact (the value farthest from 1)"), tolerance=EXACT)


@LEDGER.claim(
    "scheel2011.fig7.closest-strategy",
    statement="All measures agree on which strategy is closest to the virtual user",
    source="§4, Fig. 7", paper_value=f"{CLOSEST_STRATEGY}, under all three measures",
    paper_dataset="OHSUMED, 9-level virtual user",
    rule="order rule per measure (bootstrap over users): agrees if one system is best under every "
         "measure with no tie; differs if no system is in every measure's top set",
    needs=("virtual_per_user", "virtual_reference", "ordinal_levels", "n_boot", "seed"),
)
def _(r):
    estimates, tops = _closest(r)
    best = {m: tops[m][0] for m in tops}
    common = set.intersection(*(set(t) for t in tops.values()))
    name = best["muAP"]
    detail = "; ".join(f"{_METRICS[m]}: {' ≈ '.join(t)}" for m, t in tops.items())
    est = estimates["muAP"][name]
    if len(set(best.values())) == 1 and all(len(t) == 1 for t in tops.values()):
        return Outcome(Verdict.AGREES, est, f"{name} is closest under every measure, clear of the "
                                            f"others (µAP {format_estimate(est)})", detail)
    if not common:
        return Outcome(Verdict.DIFFERS, est, "no system is among the closest under every measure", detail)
    return Outcome(Verdict.INCONCLUSIVE, est, f"{_join(sorted(common))} tie among the closest under "
                                              "every measure (overlapping intervals)", detail)


def _join(names) -> str:
    names = list(names)
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


@LEDGER.claim(
    "scheel2011.fig7.closest-correlation",
    statement="The strategy closest to the virtual user correlates strongly with it "
              "(strategies 1 and 9: Pearson's r)",
    source="§2.2; §4, Fig. 7", paper_value=VIRTUAL_USER_CORRELATION, paper_dataset="OHSUMED",
    rule=f"value rule (tolerance {CORRELATION_TOLERANCE:g}) on Pearson's r of the reference's and "
         "the closest system's candidate scores (bootstrap over users)",
    needs=("virtual_per_user", "virtual_reference", "ordinal_levels", "candidate_scores", "n_boot", "seed"),
)
def _(r):
    name = _closest_by_mean(r)
    c = r["candidate_scores"]
    cols = ["user", "item", "score"]
    pair = c.loc[c["system"] == r["virtual_reference"], cols].merge(
        c.loc[c["system"] == name, cols], on=["user", "item"], suffixes=("_ref", "_other"))
    est = _correlation(pair["score_ref"].to_numpy(), pair["score_other"].to_numpy(),
                       pair["user"].to_numpy(), r, "candidate (user, item) pairs")
    out = value_rule(VIRTUAL_USER_CORRELATION, est, tolerance=CORRELATION_TOLERANCE,
                     label=f"r({r['virtual_reference']}, {name})")
    return _with_reason(out, f"{name} is the closest system under µAP")


@LEDGER.claim(
    "scheel2011.sec2.2.virtual-users-correlation",
    statement="The two virtual users' grades correlate strongly (ours: the ordinal and the "
              "real-valued user made of one system)",
    source="§2.2", paper_value=VIRTUAL_USER_CORRELATION, paper_dataset="OHSUMED",
    rule=f"value rule (tolerance {CORRELATION_TOLERANCE:g}) on Pearson's r of the two users' grades "
         "(bootstrap over users)",
    needs=("candidate_scores", "virtual_reference", "ordinal_levels", "n_boot", "seed"),
)
def _(r):
    from ..multigraded import quantise_levels

    c = r["candidate_scores"]
    ref = c[c["system"] == r["virtual_reference"]]
    ordinal = quantise_levels(ref, int(r["ordinal_levels"]))
    raw = quantise_levels(ref, None)
    est = _correlation(ordinal, raw, ref["user"].to_numpy(), r, "candidate (user, item) pairs")
    return value_rule(VIRTUAL_USER_CORRELATION, est, tolerance=CORRELATION_TOLERANCE,
                      label=f"r({r['ordinal_levels']} levels, raw scores)")


def _virtual_claims(kind: str) -> None:
    real = kind == "real-valued"
    versus = ("the raw scores (real-valued, as many levels as distinct scores)" if real
              else "many ordinal levels (the sweep's largest count; not in the paper)")
    source = "§4, Figs. 7–8" + ("" if real else ", ordinal analogue")
    needs = ("virtual_per_user", "virtual_reference", "ordinal_levels", "n_boot", "seed")

    def levels_of(r):
        return -1 if real else _many_levels(r)

    def falls(r):
        est = _virtual_gap(r, "nDCG(gain=exp)", levels_of(r))
        n = levels_of(r)
        label = f"NDCG({'raw' if n < 0 else n} levels) − NDCG({r['ordinal_levels']} levels)"
        return sign_rule(est, "negative", label=label)

    LEDGER.claim(
        f"scheel2011.fig8.{kind}.ndcg-lower",
        statement=f"Against a virtual user with {versus}, the other systems' NDCG is lower than "
                  "against the 9-level one",
        source=source,
        paper_value=f"disproportionately lower ({VIRTUAL_LEVELS[CLOSEST_STRATEGY]} levels)",
        paper_dataset="OHSUMED, virtual users",
        rule="sign rule on the per-user mean over the other systems of the difference (bootstrap "
             "over users)",
        needs=needs,
    )(falls)

    for metric, key in (("muAP", "muap"), ("NDCNG", "ndcng")):
        def stable(r, metric=metric):
            n = levels_of(r)
            est = _virtual_gap(r, metric, n)
            name = _METRICS[metric]
            label = f"{name}({'raw' if n < 0 else n} levels) − {name}({r['ordinal_levels']} levels)"
            out = value_rule(0.0, est, tolerance=STABLE, max_width=STABLE, label=label)
            return _with_reason(out, f"'stable' means within ±{STABLE:g} of no difference")

        LEDGER.claim(
            f"scheel2011.fig8.{kind}.{key}-stable",
            statement=f"Against a virtual user with {versus}, {_METRICS[metric]} hardly differs "
                      "from its value against the 9-level one",
            source=source, paper_value="does not differ much",
            paper_dataset="OHSUMED, virtual users",
            rule=f"value rule: per-user mean difference within ±{STABLE:g} of 0 (bootstrap over users)",
            needs=needs,
        )(stable)


_virtual_claims("real-valued")
_virtual_claims("ordinal")


# --------------------------------------------------------------------------------------------
# sentences for the chapter


def outcome(claim_id: str, results: Mapping[str, Any]) -> Outcome:
    """The outcome of one claim of the ledger on ``results`` (the id with or without the
    ``scheel2011.`` prefix)."""
    key = claim_id if claim_id.startswith("scheel2011.") else f"scheel2011.{claim_id}"
    return LEDGER[key].outcome(results)


def sentence(claim_id: str, results: Mapping[str, Any]) -> str:
    """One Markdown sentence: the claim, the paper's value, ours with its uncertainty, and the
    verdict with its reason."""
    key = claim_id if claim_id.startswith("scheel2011.") else f"scheel2011.{claim_id}"
    claim = LEDGER[key]
    out = claim.outcome(results)
    ours = out.detail or format_estimate(out.ours)
    method = f" ({out.ours.method})" if out.ours is not None else ""
    data = f", {claim.paper_dataset}" if claim.paper_dataset else ""
    return (f"*{claim.statement}* ({claim.source}). Paper: {format_paper(claim.paper_value)}{data}. "
            f"Ours: {ours}{method}. Verdict: **{out.verdict.value}**: {out.reason}.")


def describe_run(*, n_items: int, levels, max_swaps: int, repetitions: int) -> str:
    """The sizes of this run's artificial study beside the paper's."""
    from ..multigraded import PAPER_LEVELS

    same = (n_items == PAPER_ITEMS and tuple(levels) == tuple(PAPER_LEVELS)
            and max_swaps == PAPER_MAX_SWAPS and repetitions == PAPER_REPETITIONS)
    ours = (f"{n_items} items, {', '.join(map(str, levels))} levels, 0 to {max_swaps} swaps, "
            f"{repetitions} rankings per swap count")
    paper = (f"{PAPER_ITEMS} items, {', '.join(map(str, PAPER_LEVELS))} levels, 0 to "
             f"{PAPER_MAX_SWAPS} swaps, {PAPER_REPETITIONS} rankings per swap count")
    if same:
        return f"This run uses the paper's sizes for the artificial study: {ours}."
    return f"This run's artificial study uses {ours}; the paper used {paper}."


def describe_levels_effect(results: Mapping[str, Any], distribution: str) -> str:
    """The three measures' curves with the fewest and the most levels, averaged over the swap
    counts, and the verdicts of the corresponding claims."""
    study = results["swap_study"]
    few, many = _settings(study, distribution)
    s = study[(study["distribution"] == distribution) & (study["swaps"] >= 1) & study["threshold"].isna()]
    mean = s.groupby(["metric", "levels"])["value"].mean()
    fig = "fig4" if distribution == "uniform" else "fig5"
    parts = [f"Averaged over the swap counts ≥ 1, with {distribution} level counts:"]
    for metric, claim in (("nDCG(gain=exp)", "ndcg-falls-with-levels"), ("muAP", "muap-stable-across-levels"),
                          ("NDCNG", "ndcng-stable-across-levels")):
        out = outcome(f"{fig}.{claim}", results)
        parts.append(f"{_METRICS[metric]} scores {mean[(metric, few)]:.3f} with {few} levels and "
                     f"{mean[(metric, many)]:.3f} with {many}, a difference of "
                     f"{format_estimate(out.ours)} (paper: “{LEDGER[f'scheel2011.{fig}.{claim}'].paper_value}”;"
                     f" verdict: **{out.verdict.value}**).")
    return " ".join(parts)


def describe_virtual_users(results: Mapping[str, Any]) -> str:
    """The ordinal and the real-valued virtual users against the 9-level one, measure by
    measure, with the verdicts of the Fig. 8 claims (split by kind of grade)."""
    v, ref = results["virtual_per_user"], results["virtual_reference"]
    nine = int(results["ordinal_levels"])
    many = _many_levels(results)
    others = v[(v["system"] != ref) & v["metric"].isin(list(_METRICS))]
    mean = others.groupby(["metric", "levels"])["value"].mean()
    parts = []
    for kind, n, what in (("ordinal", many, f"{many} ordinal levels"),
                          ("real-valued", -1, "the raw scores")):
        items = []
        for metric, claim in (("nDCG(gain=exp)", "ndcg-lower"), ("muAP", "muap-stable"),
                              ("NDCNG", "ndcng-stable")):
            out = outcome(f"fig8.{kind}.{claim}", results)
            items.append(f"{_METRICS[metric]} {mean[(metric, nine)]:.3f} → {mean[(metric, n)]:.3f} "
                         f"(difference {format_estimate(out.ours)}: **{out.verdict.value}**)")
        parts.append(f"From {nine} levels to {what}, the other systems' mean moves: "
                     + "; ".join(items) + ".")
    return " ".join(parts)


def gain_or_levels(results: Mapping[str, Any]) -> str:
    """Whether NDCG reacts to the size of the gains or to the number of levels, from two pairs of
    experiments that separate them: integer against unit levels in the swap study (same level
    counts, different gains), and, when the virtual users are in ``results``, many ordinal
    levels against the raw scores (both with many levels; large against small top gains)."""
    from ..multigraded import levels_per_user, virtual_judgments

    ints = outcome("fig4.ndcg-falls-with-levels", results)
    unit = outcome("fig4.gain-size-not-level-count", results)
    parts = [f"In the swap study, NDCG's drop from the fewest to the most levels is "
             f"{format_estimate(ints.ours)} on integer levels and {format_estimate(unit.ours)} on "
             f"the same levels spread over [0, 1]."]
    swap_says = ints.verdict is Verdict.AGREES and unit.verdict is Verdict.AGREES
    virtual_says = True
    if "virtual_per_user" in results:
        nine, many = int(results["ordinal_levels"]), _many_levels(results)
        c = results["candidate_scores"]
        ref = c[c["system"] == results["virtual_reference"]]
        used_many = float(levels_per_user(virtual_judgments(ref, many)).mean())
        raw = virtual_judgments(ref, None)
        used_raw = float(levels_per_user(raw).mean())
        top_raw = float(raw.groupby("user")["rating"].max().mean())
        fewer = outcome("fig8.ordinal.ndcg-lower", results)
        rawer = outcome("fig8.real-valued.ndcg-lower", results)
        parts.append(
            f"Against the virtual users, NDCG moves by {format_estimate(fewer.ours)} from {nine} to "
            f"{many} ordinal levels and by {format_estimate(rawer.ours)} from {nine} levels to the raw "
            f"scores. A user's candidates use {used_many:.1f} distinct levels on average with {many} "
            f"ordinal levels and {used_raw:.1f} with the raw scores; the top grade is {many - 1} in "
            f"the first case (gain {2.0 ** (many - 1) - 1:.3g}) and {top_raw:.2f} on average in the "
            f"second (gain {2.0 ** top_raw - 1:.3g}).")
        virtual_says = (fewer.verdict is Verdict.AGREES and rawer.verdict is not Verdict.AGREES
                        and used_raw >= used_many)
    if swap_says and virtual_says:
        parts.append("Both comparisons point the same way: NDCG reacts to the size of the gains, "
                     "not to the number of levels; many levels lower it only when they make the "
                     "top gains large.")
    else:
        parts.append("In this run the comparisons do not separate the size of the gains from the "
                     "number of levels cleanly; see the verdicts in the table of claims.")
    return " ".join(parts)
