"""Verdicts of the multi-graded relevance ledger that mean what they say (Scheel et al. 2011).

Hand-made inputs with known answers: each claim's setting is declared (derivation, data-free
setting or the paper's dataset), "stable" claims are equivalence tests with a declared margin,
"every"/"all" claims control the family-wise error with Holm, and orders are written as groups.
"""

from __future__ import annotations

import inspect
import math

import numpy as np
import pandas as pd
import pytest
from scipy.stats import norm

from recmeta.ledger import DERIVED, Verdict
from recmeta.papers import scheel2011 as sch
from recmeta.papers.scheel2011 import claims_artificial, claims_real

A, D, INC = Verdict.AGREES, Verdict.DIFFERS, Verdict.INCONCLUSIVE

#: the claims that cannot fail by construction: identities, constructions, enumerations
DERIVATIONS = {
    "sec2.ideal-scores-one", "tab1.threshold-changes-ap", "eq4.example-weights",
    "sec5.two-levels-equal-ap", "sec4.mu-map-mean-of-thresholds",
    "sec2.1.cost-depends-on-distance", "fig2-3.level-distributions", "tab2.ndcng-scale-free",
    "tab2.muap-scale-free", "fig7.reference-scores-one",
}


# ---------------------------------------------------------------- settings and kinds
def test_every_claim_declares_its_setting_and_the_ten_derivations_are_derivations():
    assert all(c.setting_known for c in sch.LEDGER), [
        c.id for c in sch.LEDGER if not c.setting_known]
    derived = {c.id.removeprefix("scheel2011.") for c in sch.LEDGER if c.paper_dataset == DERIVED}
    assert derived == DERIVATIONS
    for c in sch.LEDGER:
        if c.id.startswith(("scheel2011.fig6", "scheel2011.fig7.closest", "scheel2011.fig8",
                            "scheel2011.sec2.2")):
            # the paper's real-data claims name OHSUMED: on MovieLens they transfer
            assert "OHSUMED" in c.paper_dataset and c.kind("ml-100k").value == "transfer"
        elif c.paper_dataset != DERIVED:
            # artificial rankings and the worked example: data-free settings, with the reason
            assert c.data_free and c.kind("ml-100k").value == "replication"


def test_no_claim_uses_the_former_non_rejection_rule():
    for module in (sch.claims, claims_artificial, claims_real):
        assert "legacy_value_rule" not in inspect.getsource(module)


# ---------------------------------------------------------------- "stable": equivalence
def _curves(gap: float, sd: float, n: int = 10, swaps: int = 20, metric: str = "muAP",
            distribution: str = "uniform") -> pd.DataFrame:
    """A swap study with two level counts whose curves differ by ``gap`` at every swap count."""
    s = np.arange(swaps + 1)
    rows = [pd.DataFrame({"distribution": distribution, "levels": levels, "metric": metric,
                          "swaps": s, "value": 1.0 - 0.01 * s - shift, "sd": sd, "n": n,
                          "threshold": np.nan})
            for levels, shift in ((2, 0.0), (50, gap))]
    return pd.concat(rows, ignore_index=True)


def _se(sd: float, n: int = 10, swaps: int = 20) -> float:
    return math.sqrt(swaps * 2 * sd**2 / n) / swaps


@pytest.mark.parametrize("gap, sd, verdict", [
    (0.01, 0.02, A),     # interval well inside ± 0.05
    (0.2, 0.02, D),      # interval wholly beyond 0.05
    (0.05, 0.02, INC),     # the gap sits on the margin's edge: the interval straddles it
    (0.0, 2.0, INC),       # centred on 0 but too wide to show equivalence
])
def test_stable_across_levels_is_an_equivalence_test(gap, sd, verdict):
    study = _curves(gap, sd)
    out = sch.outcome("fig4.muap-stable-across-levels", {"swap_study": study})
    assert out.ours.value == pytest.approx(gap)
    assert out.ours.high - out.ours.low == pytest.approx(2 * 1.959964 * _se(sd), rel=1e-5)
    assert out.verdict is verdict and out.rule == "equivalence" and out.margin == sch.STABLE


def test_a_gap_at_the_margin_no_longer_agrees():
    # the former rule called this "agrees" (0 lies within the interval widened by 0.05, and the
    # interval is narrower than 0.05); our interval reaches beyond 0.05: not shown stable
    study = _curves(0.045, 0.05)
    out = sch.outcome("fig4.muap-stable-across-levels", {"swap_study": study})
    assert out.ours.low < 0.05 < out.ours.high and out.ours.high - out.ours.low < 0.05
    assert out.verdict is INC


def test_stable_claims_on_other_data_are_still_graded():
    # an equivalence of a difference to 0 is a shape, not a magnitude of the paper's data
    rng = np.random.default_rng(0)
    ref = rng.uniform(1, 5, size=800)
    scores = pd.concat([
        pd.DataFrame({"system": s, "user": np.repeat(np.arange(40), 20),
                      "item": np.tile(np.arange(20), 40), "score": v})
        for s, v in (("ref", ref), ("near", ref + rng.normal(scale=0.3, size=800)))])
    r = {"virtual_per_user": sch.virtual_user_study(scores, "ref", [9, 100, None], per_user=True),
         "virtual_reference": "ref", "ordinal_levels": 9, "n_boot": 199, "seed": 0}
    row = sch.LEDGER.row("scheel2011.fig8.ordinal.muap-stable", r, dataset="ml-100k",
                         profile="quick")
    assert row["kind"] == "transfer" and row["rule"] == "equivalence"
    assert row["verdict"] in (A.value, D.value, INC.value) and row["margin"] == sch.STABLE


# ---------------------------------------------------------------- "every measure falls": Holm
def _falls(z: dict[tuple[str, int, str], float], drop: float = 0.3, n: int = 10) -> pd.DataFrame:
    """A swap study whose drop after the most swaps is ``± drop`` with the z-score
    ``z[setting]`` (a negative z: the measure rises)."""
    rows = []
    for (dist, levels, metric), zk in z.items():
        se, d = drop / abs(zk), math.copysign(drop, zk)
        for swaps, value, sd in ((0, 1.0, 0.0), (50, 1.0 - d, se * math.sqrt(n))):
            rows.append({"distribution": dist, "levels": levels, "metric": metric,
                         "swaps": swaps, "value": value, "sd": sd, "n": n, "threshold": np.nan})
    return pd.DataFrame(rows)


SETTINGS = [(d, lv, m) for d in ("uniform", "non-uniform") for lv in (2, 10, 20, 50)
            for m in sch.PAPER_METRICS]


def test_every_measure_falls_needs_every_part_after_holm():
    assert len(SETTINGS) == 24
    # each of the 24 drops alone is significant one-sided (z = 2.2, p = 0.014), and the former
    # rule (the smallest drop's 95 % interval above 0) agreed; Holm over 24 parts does not
    marginal = _falls(dict.fromkeys(SETTINGS, 2.2))
    out = sch.outcome("sec2.1.performance-falls-with-swaps", {"swap_study": marginal})
    assert out.verdict is INC and "24 parts" in out.reason
    clear = _falls(dict.fromkeys(SETTINGS, 5.0))  # p = 2.9e-7 each: 24 p < 0.05
    out = sch.outcome("sec2.1.performance-falls-with-swaps", {"swap_study": clear})
    assert out.verdict is A and out.rule == "every sign"
    assert out.ours.value == pytest.approx(0.3)  # the smallest drop is shown
    rising = _falls({**dict.fromkeys(SETTINGS, 5.0), SETTINGS[3]: -5.0})
    out = sch.outcome("sec2.1.performance-falls-with-swaps", {"swap_study": rising})
    dist, levels, metric = SETTINGS[3]
    assert out.verdict is D
    assert f"{sch.PAPER_METRICS[metric]} ({dist}, {levels} levels)" in out.reason


def test_normal_pvalues_are_the_one_sided_normal_tails():
    p_up, p_down = claims_artificial.normal_pvalues(0.3, 0.1)
    assert p_up == pytest.approx(norm.sf(3.0)) and p_down == pytest.approx(norm.cdf(3.0))
    assert claims_artificial.normal_pvalues(0.2, 0.0) == (0.0, 1.0)
    assert claims_artificial.normal_pvalues(-0.2, 0.0) == (1.0, 0.0)
    with pytest.raises(ValueError, match="finite"):
        claims_artificial.normal_pvalues(float("nan"), 0.1)


# ---------------------------------------------------------------- "all measures agree": Holm
def _per_user(means: dict[str, dict[str, float]], n_users: int = 200, noise: float = 0.05,
              seed: int = 0) -> pd.DataFrame:
    """Per-user values against the 9-level virtual user: ``means[metric][system]`` plus noise;
    the reference scores 1."""
    rng = np.random.default_rng(seed)
    frames = []
    for metric, by_system in means.items():
        for system, mean in {**by_system, "ref": 1.0}.items():
            frames.append(pd.DataFrame({
                "system": system, "user": np.arange(n_users), "levels": 9, "metric": metric,
                "value": mean + (0 if system == "ref" else noise * rng.normal(size=n_users))}))
    return pd.concat(frames, ignore_index=True)


def _closest(means: dict[str, dict[str, float]]) -> object:
    r = {"virtual_per_user": _per_user(means), "virtual_reference": "ref", "ordinal_levels": 9,
         "n_boot": 999, "seed": 0}
    return sch.outcome("fig7.closest-strategy", r)


def test_all_measures_agree_on_the_closest_system_hand_cases():
    same = {m: {"a": 0.8, "b": 0.6, "c": 0.4} for m in sch.PAPER_METRICS}
    out = _closest(same)
    assert out.verdict is A and "all 6 parts" in out.reason and out.rule == "every sign"
    assert out.detail == "; ".join(f"{sch.PAPER_METRICS[m]}: a > b > c" for m in same)
    # NDCG puts b clearly first: the measures disagree
    split = {**same, "nDCG(gain=exp)": {"a": 0.6, "b": 0.8, "c": 0.4}}
    out = _closest(split)
    assert out.verdict is D and "NDCG: a − b goes the other way" in out.reason
    # a and b tied under one measure: not established, and the order says so
    tie = {**same, "NDCNG": {"a": 0.7, "b": 0.7, "c": 0.4}}
    out = _closest(tie)
    assert out.verdict is INC and "NDCNG: a − b" in out.reason
    assert "NDCNG: a ≈ b > c" in out.detail or "NDCNG: b ≈ a > c" in out.detail


def test_paired_replicates_resample_users():
    d = np.array([1.0, 2.0, 3.0, 4.0])
    reps = claims_real.paired_replicates(d, 5000, 0)
    assert reps.shape == (5000,) and reps.min() >= 1.0 and reps.max() <= 4.0
    assert reps.mean() == pytest.approx(2.5, abs=0.03)
    assert reps.std() == pytest.approx(d.std() / 2, rel=0.05)  # sd of a mean of 4 draws
    with pytest.raises(ValueError, match="two finite"):
        claims_real.paired_replicates(np.array([1.0]), 10, 0)
