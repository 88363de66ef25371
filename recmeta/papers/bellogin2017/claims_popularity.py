"""The ledger's claims on the popularity bias (Bellogín, Castells & Cantador 2017, §6–§7: Figs. 7,
8 and 9, the uniform-test split and the 1R identities), registered on
:data:`recmeta.papers.bellogin2017.claims.LEDGER` after those of §3–§5
(:mod:`~recmeta.papers.bellogin2017.claims_simulation`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal

import numpy as np
import pandas as pd
from scipy import stats

from ...ledger import (
    DERIVED,
    Estimate,
    Outcome,
    Verdict,
    dataset_identity,
    format_number,
    not_reproduced,
    order_rule,
    sign_rule,
)
from ...metaeval.bootstrap import resampled_ranks
from .claims_simulation import LEDGER  # the claims of §3–§5 first
from .evidence import (
    Getter,
    absent_designs,
    boot,
    boot_replicates,
    design_rows,
    exact_bound,
    join_verdicts,
    lift,
    missing_roles,
    order_in,
    settings_of,
    system_mean,
    systems_in,
    user_table,
)
from .settings import ML1M, PAPER

__all__ = ["lift_difference"]


def _ml1m_only(r: Mapping[str, Any], what: str, ours: str) -> Outcome:
    return Outcome(
        Verdict.NOT_REPRODUCED,
        None,
        f"{what} is a property of ML-1M, which is not run here; ours on {r['dataset']}: {ours}",
        ours,
        rule="none",
    )


def _is_ml1m(r: Mapping[str, Any]) -> bool:
    return dataset_identity(str(r["dataset"])) == ML1M


@LEDGER.claim(
    "bellogin2017.fig7.ratio-grows",
    statement="the share of positive ratings grows with popularity",
    source="§6.2, Fig. 7",
    paper_value="grows",
    paper_dataset=ML1M,
    rule="sign rule on Spearman's correlation of |R(i)| and |PR(i)|/|R(i)| over items (BC "
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
    rx, ry = resampled_ranks(x, idx), resampled_ranks(y, idx)
    rx -= rx.mean(axis=1, keepdims=True)
    ry -= ry.mean(axis=1, keepdims=True)
    reps = (rx * ry).sum(axis=1) / np.sqrt((rx**2).sum(axis=1) * (ry**2).sum(axis=1))
    est = Estimate.from_replicates(
        float(rho),
        reps,
        s.level,
        method=f"BC bootstrap over {len(x)} items ({s.resamples} resamples), 95 %",
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
        Verdict.AGREES if ok else Verdict.DIFFERS,
        Estimate.exact(u["size"]),
        f"ours {text}",
        text,
        rule="exact",
    )


def lift_difference(
    r: Mapping[str, Any],
    a: str,
    b: str | Sequence[str],
    *,
    worst: str = "max",
    metric: str = "P",
) -> tuple[Estimate, np.ndarray, str] | Outcome:
    """lift(a) − lift(b) (popularity over random under ``metric``) in Fig. 8's designs, with
    several b the max or min of their lifts: (estimate, bootstrap replicates, label), or not
    reproduced when a design did not run."""
    f = r["fig8"]
    bs = [b] if isinstance(b, str) else list(b)
    if (gone := absent_designs(f, [a, *bs])) is not None:
        return gone
    t = user_table({d: (design_rows(f, d), ["popularity", "random"]) for d in [a, *bs]}, metric)
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
    est, reps = boot_replicates(r, t, stat)
    return est, reps, label


def _fig8_lift(
    r: Mapping[str, Any],
    a: str,
    b: str | Sequence[str],
    expected: Literal["positive", "negative"],
    *,
    worst: str = "max",
) -> Outcome:
    """Sign rule on lift(a) − lift(b) (popularity over random); with several b, the max or min."""
    got = lift_difference(r, a, b, worst=worst)
    if isinstance(got, Outcome):
        return got
    est, _, label = got
    return sign_rule(est, expected, label=label)


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
        verdict,
        outs["1R"].ours,
        reason,
        "; ".join(f"{d}: {o.detail}" for d, o in outs.items()),
        rule="every order",
    )


@LEDGER.claim(
    "bellogin2017.sec6.3.map-mrr",
    statement="in 1R, MAP is equivalent to MRR",
    source="§6.3",
    paper_value="AP = RR",
    paper_dataset=DERIVED,
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
    paper_dataset=DERIVED,
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
    return Outcome(Verdict.AGREES if ok else Verdict.DIFFERS, ours, text, rule="identity")


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
    statement="in 1R, where no non-relevant item is judged, bpref is 1 for every system",
    source="§7",
    paper_value=1.0,
    paper_dataset=DERIVED,
    rule="exact: on 1R TI-NN sets whose only judged item is the relevant one (metric engine), the "
    "largest |bpref − 1| over every set and system must be 0",
    needs=("dataset", "settings", "identities"),
)
def _bpref_1r(r):
    f = r["identities"]
    f = f.loc[f["design"] == "1R TI-NN"]
    if "bpref" not in f.columns:
        raise ValueError("the identities results hold no bpref column; rerun Study.identities")
    gap = float((f["bpref"] - 1.0).abs().max())
    return exact_bound(gap, 0.0, f"the largest |bpref − 1| over {len(f)} sets")
