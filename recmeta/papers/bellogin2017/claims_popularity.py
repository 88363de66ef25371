"""The ledger's claims on the popularity bias (Bellogín, Castells & Cantador 2017, §5–§7: eq. 3's
consequences, Figs. 5, 7, 8 and 9, the uniform-test split and the 1R identities), registered on
:data:`recmeta.papers.bellogin2017.claims.LEDGER` after the claims of §3–§4.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal

import numpy as np
import pandas as pd
from scipy import stats

from ...ledger import (
    Estimate,
    Outcome,
    Verdict,
    format_number,
    legacy_value_rule,
    not_reproduced,
    order_rule,
    sign_rule,
)
from .claims import LEDGER
from .evidence import (
    Getter,
    absent_designs,
    append_reason,
    boot,
    design_rows,
    exact_bound,
    join_verdicts,
    lift,
    mean_difference,
    missing_roles,
    order_in,
    settings_of,
    system_mean,
    systems_in,
    user_table,
)
from .settings import ML1M, NONPERSONALISED, PAPER

__all__: list[str] = []


@LEDGER.claim(
    "bellogin2017.sec5.1.popularity-best",
    statement="popularity is the best non-personalised recommender",
    source="§5.1",
    paper_value="popularity",
    paper_dataset="any",
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
    statement="random 1R P@10 on simulated data with uniform popularity (α = 0)",
    source="§5.2, Fig. 5 centre",
    paper_value=PAPER["alpha0_random"],
    paper_dataset="ML-1M-shaped simulation",
    rule="value rule on random's 1R TI-NN P@n at α = 0 (bootstrap over simulated users), tolerance "
    "0.00005 (half a printed digit)",
    needs=("dataset", "settings", "simulation"),
)
def _rnd0(r):
    return _alpha_zero(r) or legacy_value_rule(
        PAPER["alpha0_random"],
        _sim_estimate(r, 0.0, lambda get: get("a", "random"), ["random"]),
        0.00005,
        label="random",
    )


@LEDGER.claim(
    "bellogin2017.fig5.popularity-alpha0",
    statement="popularity 1R P@10 on simulated data with uniform popularity (α = 0)",
    source="§5.2, Fig. 5 centre",
    paper_value=PAPER["alpha0_popularity"],
    paper_dataset="ML-1M-shaped simulation",
    rule="value rule on popularity's 1R TI-NN P@n at α = 0 (bootstrap over simulated users), "
    "tolerance 0.00005",
    needs=("dataset", "settings", "simulation"),
)
def _pop0(r):
    return _alpha_zero(r) or legacy_value_rule(
        PAPER["alpha0_popularity"],
        _sim_estimate(r, 0.0, lambda get: get("a", "popularity"), ["popularity"]),
        0.00005,
        label="popularity",
    )


@LEDGER.claim(
    "bellogin2017.fig5.below-random",
    statement="with uniform popularity (α = 0) popularity falls slightly below random",
    source="§5.1–5.2, Fig. 5 centre",
    paper_value="popularity < random",
    paper_dataset="ML-1M-shaped simulation",
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
    paper_dataset="ML-1M-shaped simulation",
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
    paper_dataset="ML-1M-shaped simulation",
    rule="value rule on system − random 1R P@n at the largest α (paired bootstrap over simulated "
    "users) against 0, for MF and user-kNN; the one farther from 0 decides",
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
    outs = [
        legacy_value_rule(0.0, est, label=f"{x} − random at α={hi:g}")
        for x, est in zip(roles, ests, strict=True)
    ]
    # the outcome whose estimate lies farthest from 0 (the first of equals)
    worst = outs[max(range(len(outs)), key=lambda k: abs(ests[k].value))]
    return Outcome(worst.verdict, worst.ours, "; ".join(o.reason for o in outs))


@LEDGER.claim(
    "bellogin2017.fig5.plsa-tracks",
    statement="pLSA closely matches popularity on the simulated data",
    source="§5.2, Fig. 5 centre",
    paper_value=0.0,
    paper_dataset="ML-1M-shaped simulation",
    rule="value rule on pLSA − popularity 1R P@n at the largest α (paired bootstrap over simulated "
    "users) against 0",
    needs=("dataset", "settings", "simulation"),
)
def _plsa_sim(r):
    f = r["simulation"]
    hi = _alpha(f, "max")
    at = f.loc[np.isclose(f["alpha"], hi)]
    why = missing_roles(["pLSA"], at)
    if why:
        return not_reproduced(why)
    return legacy_value_rule(
        0.0,
        _sim_estimate(
            r, hi, lambda get: get("a", "pLSA") - get("a", "popularity"), ["pLSA", "popularity"]
        ),
        label=f"pLSA − popularity at α={hi:g}",
    )


def _ml1m_only(r: Mapping[str, Any], what: str, ours: str) -> Outcome:
    return Outcome(
        Verdict.NOT_REPRODUCED,
        None,
        f"{what} is a property of ML-1M, which is not run here; ours on {r['dataset']}: {ours}",
        ours,
    )


def _is_ml1m(r: Mapping[str, Any]) -> bool:
    return str(r["dataset"]).lower() in ("ml-1m", "ml1m", "movielens-1m")


@LEDGER.claim(
    "bellogin2017.fig5.alpha",
    statement="the popularity skew of MovieLens 1M is α ≈ 1.4",
    source="§5.2",
    paper_value=PAPER["alpha"],
    paper_dataset=ML1M,
    rule="on ML-1M: value rule on our fitted α (least squares, no interval), tolerance 0.05; "
    "elsewhere not reproduced",
    needs=("settings", "dataset", "fit"),
)
def _alpha_fit(r):
    fit = r["fit"]
    if not _is_ml1m(r):
        return _ml1m_only(r, "α", f"α = {fit.alpha:.2f} with c2 = {fit.c2:.3g}")
    return legacy_value_rule(
        PAPER["alpha"], Estimate.point(fit.alpha, method="least-squares fit"), 0.05, label="α"
    )


@LEDGER.claim(
    "bellogin2017.fig5.top-liked",
    statement="the most liked MovieLens item is liked by 32.7 % of the users",
    source="§5.2, Fig. 5 right",
    paper_value=PAPER["top_liked"],
    paper_dataset=ML1M,
    rule="on ML-1M: value rule on the exact share, tolerance 0.0005; elsewhere not reproduced",
    needs=("settings", "dataset", "positive_shares"),
)
def _top_liked(r):
    x = r["positive_shares"]["top_liked"]
    if not _is_ml1m(r):
        return _ml1m_only(r, "the share", f"{x:.1%}")
    return legacy_value_rule(PAPER["top_liked"], Estimate.exact(x), 0.0005, label="share")


@LEDGER.claim(
    "bellogin2017.fig7.ratio-grows",
    statement="the share of positive ratings grows with popularity",
    source="§6.2, Fig. 7",
    paper_value="grows",
    paper_dataset=ML1M,
    rule="sign rule on Spearman's correlation of |R(i)| and |PR(i)|/|R(i)| over items (percentile "
    "bootstrap over items)",
    needs=("dataset", "settings", "positive_ratio"),
)
def _fig7(r):
    s = settings_of(r)
    f = r["positive_ratio"]
    x, y = f["count"].to_numpy(float), f["ratio"].to_numpy(float)
    rho = stats.spearmanr(x, y).statistic
    rng = np.random.default_rng(s.seed)
    idx = rng.integers(0, len(x), size=(s.resamples, len(x)))
    rx = stats.rankdata(x[idx], axis=1)
    ry = stats.rankdata(y[idx], axis=1)
    rx -= rx.mean(axis=1, keepdims=True)
    ry -= ry.mean(axis=1, keepdims=True)
    reps = (rx * ry).sum(axis=1) / np.sqrt((rx**2).sum(axis=1) * (ry**2).sum(axis=1))
    est = Estimate.from_samples(
        reps,
        s.level,
        value=float(rho),
        method=f"percentile bootstrap over {len(x)} items ({s.resamples} resamples), 95 %",
    )
    return sign_rule(est, "positive", label="Spearman ρ")


@LEDGER.claim(
    "bellogin2017.sec6.2.uniform-size",
    statement="the uniform-test split of MovieLens 1M (σ = 0.2, "
    "ε = 0.2) has |T| = 1,703 items with η = 118 test ratings each",
    source="§6.2",
    paper_value=f"|T| = {PAPER['uniform_size']}, η = {PAPER['uniform_eta']}",
    paper_dataset=ML1M,
    rule="on ML-1M: exact |T| and η must equal the paper's; elsewhere not reproduced",
    needs=("settings", "dataset", "uniform_size"),
)
def _uniform(r):
    u = r["uniform_size"]
    text = f"|T| = {u['size']}, η = {u['eta']}"
    if not _is_ml1m(r):
        return _ml1m_only(r, "|T| (with η)", text)
    ok = (u["size"], u["eta"]) == (PAPER["uniform_size"], PAPER["uniform_eta"])
    return Outcome(
        Verdict.AGREES if ok else Verdict.DIFFERS, Estimate.exact(u["size"]), f"ours {text}", text
    )


def _fig8_lift(
    r: Mapping[str, Any],
    a: str,
    b: str | Sequence[str],
    expected: Literal["positive", "negative"],
    *,
    worst: str = "max",
) -> Outcome:
    """Sign rule on lift(a) − lift(b) (popularity over random); with several b, the max or min."""
    f = r["fig8"]
    bs = [b] if isinstance(b, str) else list(b)
    if (gone := absent_designs(f, [a, *bs])) is not None:
        return gone
    t = user_table({d: (design_rows(f, d), ["popularity", "random"]) for d in [a, *bs]})
    pick = np.maximum if worst == "max" else np.minimum

    def stat(get: Getter) -> np.ndarray:
        other = lift(get, bs[0])
        for d in bs[1:]:
            other = pick(other, lift(get, d))
        return lift(get, a) - other

    label = (
        f"lift({a}) − {worst}({', '.join(f'lift({d})' for d in bs)})"
        if len(bs) > 1
        else f"lift({a}) − lift({bs[0]})"
    )
    return sign_rule(boot(r, t, stat), expected, label=label)


@LEDGER.claim(
    "bellogin2017.fig8.u1r",
    statement="U1R reduces popularity's advantage over random",
    source="§6.3, Fig. 8",
    paper_value="lift(U1R) < lift(1R)",
    paper_dataset=ML1M,
    rule="sign rule on lift(U1R) − lift(1R), lift = popularity P@n / random P@n "
    "(bootstrap over users)",
    needs=("dataset", "settings", "fig8"),
)
def _u1r(r):
    return _fig8_lift(r, "U1R", "1R", "negative")


@LEDGER.claim(
    "bellogin2017.fig8.p1r",
    statement="P1R neutralises popularity even more than U1R",
    source="§6.3, Fig. 8",
    paper_value="lift(P1R) < lift(U1R)",
    paper_dataset=ML1M,
    rule="sign rule on lift(P1R, TI candidates) − lift(U1R) (bootstrap over users)",
    needs=("dataset", "settings", "fig8"),
)
def _p1r(r):
    return _fig8_lift(r, "P1R", "U1R", "negative")


@LEDGER.claim(
    "bellogin2017.fig8.head",
    statement="removing the 10 % most popular items reduces popularity's "
    "advantage less than the proposed designs",
    source="§6.3, Fig. 8",
    paper_value="lift(−10% head) > lift(U1R), lift(P1R)",
    paper_dataset=ML1M,
    rule="sign rule on lift(1R −10% head) − max(lift(U1R), lift(P1R)) (bootstrap over users)",
    needs=("dataset", "settings", "fig8"),
)
def _head(r):
    return _fig8_lift(r, "1R −10% head", ["U1R", "P1R"], "positive")


@LEDGER.claim(
    "bellogin2017.fig8.uar",
    statement="UAR lowers popularity's advantage in AR",
    source="§6.3, Fig. 8",
    paper_value="lift(UAR) < lift(AR)",
    paper_dataset=ML1M,
    rule="sign rule on lift(UAR) − lift(AR TI-NN with |N_u| = |T|) (bootstrap over users)",
    needs=("dataset", "settings", "fig8"),
)
def _uar(r):
    return _fig8_lift(r, "UAR", "AR TI-NN", "negative")


@LEDGER.claim(
    "bellogin2017.fig8.ai-uar",
    statement="without the TI policy (AI-UAR) a higher popularity bias remains",
    source="§6.3, Fig. 8",
    paper_value="lift(AI-UAR) > lift(UAR)",
    paper_dataset=ML1M,
    rule="sign rule on lift(AI-UAR) − lift(UAR) (bootstrap over users)",
    needs=("dataset", "settings", "fig8"),
)
def _ai_uar(r):
    return _fig8_lift(r, "AI-UAR", "UAR", "positive")


@LEDGER.claim(
    "bellogin2017.fig8.uar-knn",
    statement="in UAR popularity stays above kNN",
    source="§6.3, Fig. 8",
    paper_value="popularity > kNN",
    paper_dataset=ML1M,
    rule="sign rule on popularity − user-kNN UAR P@n (paired bootstrap over users)",
    needs=("dataset", "settings", "fig8"),
)
def _uar_knn(r):
    f = design_rows(r["fig8"], "UAR")
    why = missing_roles(["user-kNN"], f)
    if why:
        return not_reproduced(why)
    t = user_table({"UAR": (f, ["popularity", "user-kNN"])})
    return sign_rule(
        boot(r, t, lambda get: get("UAR", "popularity") - get("UAR", "user-kNN")),
        "positive",
        label="popularity − user-kNN",
    )


@LEDGER.claim(
    "bellogin2017.fig8.plsa-best",
    statement="pLSA remains the best system in every design of Fig. 8",
    source="§6.3, Fig. 8",
    paper_value="pLSA",
    paper_dataset=ML1M,
    rule="order rule (bootstrap intervals over users) in each design of Fig. 8 the paper runs: all "
    "agree → agrees, any differs → differs",
    needs=("dataset", "settings", "fig8"),
)
def _plsa8(r):
    f = r["fig8"]
    why = missing_roles(["pLSA"], f)
    if why:
        return not_reproduced(why)
    outs = {}
    for d in ("1R", "U1R", "P1R", "1R −10% head", "AR TI-NN", "UAR"):
        g = design_rows(f, d)
        outs[d] = order_rule(order_in(r, g, systems_in(g)), "pLSA")
    verdict = join_verdicts(list(outs.values()))
    bad = [d for d, o in outs.items() if o.verdict != Verdict.AGREES]
    reason = (
        "pLSA is alone at the top in every design"
        if not bad
        else "; ".join(f"{d}: {outs[d].reason}" for d in bad)
    )
    return Outcome(
        verdict, outs["1R"].ours, reason, "; ".join(f"{d}: {o.detail}" for d, o in outs.items())
    )


@LEDGER.claim(
    "bellogin2017.sec6.3.map-mrr",
    statement="in 1R, MAP is equivalent to MRR",
    source="§6.3",
    paper_value="AP = RR",
    paper_dataset="any",
    rule="exact: the largest |AP − RR| over every 1R set and system (metric engine) must be 0",
    needs=("dataset", "settings", "identities"),
)
def _map_mrr(r):
    f = r["identities"]
    f = f.loc[f["design"] == "1R TI-NN"]
    gap = float((f["AP"] - f["RR"]).abs().max())
    return exact_bound(gap, 0.0, f"the largest |AP − RR| over {len(f)} sets")


@LEDGER.claim(
    "bellogin2017.sec6.3.grades",
    statement="nDCG ignores the relevance grades in 1R, not in AR",
    source="§6.3",
    paper_value="1R: equal; AR: differ",
    paper_dataset="any",
    rule="exact, at the graded threshold (several grades of relevance): the largest |nDCG(rating "
    "gain) − nDCG(binary gain)| must be 0 over the 1R sets and above 0 over the AR sets",
    needs=("dataset", "settings", "identities"),
)
def _grades(r):
    s = settings_of(r)
    f = r["identities"]
    f = f.loc[f["threshold"] == s.graded_threshold]
    gap = (f["nDCG rating gain"] - f["nDCG binary gain"]).abs().groupby(f["design"]).max()
    one, ar = float(gap.get("1R TI-NN", np.nan)), float(gap.get("AR TI-NN", np.nan))
    ours = Estimate.exact(ar, method="largest gap over the AR sets")
    ok = one <= 1e-12 and ar > 1e-12
    text = (
        f"largest gap {format_number(one)} over the 1R sets and {format_number(ar)} over the AR "
        f"sets (threshold {s.graded_threshold:g})"
    )
    return Outcome(Verdict.AGREES if ok else Verdict.DIFFERS, ours, text)


def _fig9_table(
    r: Mapping[str, Any], design: str, metrics: Sequence[str], systems: Sequence[str]
) -> pd.DataFrame:
    f = design_rows(r["fig9"], design)
    return user_table(
        {m: (f.loc[f["metric"] == m].rename(columns={"value": "v"}), systems) for m in metrics}, "v"
    )


@LEDGER.claim(
    "bellogin2017.fig9.bpref",
    statement="bpref counters the popularity bias in AR",
    source="§7, Fig. 9",
    paper_value="lift(bpref) < lift(P@10)",
    paper_dataset=ML1M,
    rule="sign rule on lift under bpref − lift under P@n, AR TI-AN, lift = popularity/random "
    "(bootstrap over users)",
    needs=("dataset", "settings", "fig9"),
)
def _bpref(r):
    t = _fig9_table(r, "AR TI-AN", ["bpref", "P"], ["popularity", "random"])
    return sign_rule(
        boot(r, t, lambda get: lift(get, "bpref") - lift(get, "P")),
        "negative",
        label="lift(bpref) − lift(P)",
    )


@LEDGER.claim(
    "bellogin2017.fig9.infap",
    statement="infAP counters the popularity bias in AR",
    source="§7, Fig. 9",
    paper_value="lift(infAP) < lift(P@10)",
    paper_dataset=ML1M,
    rule="sign rule on lift under infAP − lift under P@n, AR TI-AN (bootstrap over users)",
    needs=("dataset", "settings", "fig9"),
)
def _infap(r):
    t = _fig9_table(r, "AR TI-AN", ["infAP", "P"], ["popularity", "random"])
    return sign_rule(
        boot(r, t, lambda get: lift(get, "infAP") - lift(get, "P")),
        "negative",
        label="lift(infAP) − lift(P)",
    )


@LEDGER.claim(
    "bellogin2017.fig9.srecall",
    statement="under stratified recall (γ = 1) popularity remains second only to pLSA",
    source="§7, Fig. 9",
    paper_value="popularity",
    paper_dataset=ML1M,
    rule="order rule (bootstrap intervals over users) on AR TI-AN stratified recall@n among the "
    "systems other than pLSA",
    needs=("dataset", "settings", "fig9"),
)
def _srecall(r):
    f = design_rows(r["fig9"], "AR TI-AN")
    systems = [s for s in systems_in(f) if s != "pLSA"]
    t = _fig9_table(r, "AR TI-AN", ["SRecall"], systems)
    return order_rule({sy: boot(r, t, system_mean("SRecall", sy)) for sy in systems}, "popularity")


@LEDGER.claim(
    "bellogin2017.fig9.bpref-1r",
    statement="in 1R bpref is 1 for every system",
    source="§7",
    paper_value=1.0,
    paper_dataset=ML1M,
    rule="value rule on the smallest 1R TI-NN bpref over the systems (bootstrap over users) "
    "against 1",
    needs=("dataset", "settings", "fig9"),
)
def _bpref_1r(r):
    f = design_rows(r["fig9"], "1R TI-NN")
    systems = systems_in(f)
    t = _fig9_table(r, "1R TI-NN", ["bpref"], systems)
    ests = {sy: boot(r, t, system_mean("bpref", sy)) for sy in systems}
    sy = min(ests, key=lambda k: ests[k].value)
    judged = "our 1R sets sample their non-relevant items among judged and unjudged ones alike"
    return append_reason(legacy_value_rule(1.0, ests[sy], label=f"{sy}'s bpref"), judged)
