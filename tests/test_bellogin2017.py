"""The statistical-biases ledger (Bellogín, Castells & Cantador 2017): the study, the bootstrap, the
claims' rules, and the chapter's text."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from recmeta import papers, protocols
from recmeta.data import popularity as pop
from recmeta.ledger import Verdict, prose
from recmeta.papers import bellogin2017 as b17
from recmeta.papers.bellogin2017 import text, trials

ROOT = Path(__file__).resolve().parents[1]
CHAPTER = ROOT / "notebooks" / "statistical-biases.md"
PRIOR = {1.0: 0.1, 2.0: 0.15, 3.0: 0.3, 4.0: 0.25, 5.0: 0.2}


def toy(seed: int = 0) -> pd.DataFrame:
    return pop.simulate_ratings(150, 120, 4000, 1.0, PRIOR, c1=1.0, c2=10.0, seed=seed)


def settings(**kw) -> b17.Settings:
    base = {
        "threshold": 4.0,
        "graded_threshold": 3.0,
        "n": 5,
        "n_nonrelevant": 19,
        "percentiles": 3,
        "seeds": 2,
        "check_seeds": 3,
        "removed_rates": (0.0, 0.5),
        "target_sizes": (20, 40),
        "alphas": (0.0, 2.0),
        "roster_systems": {},
        "resamples": 199,
    }
    base.update(kw)
    return b17.Settings.resolve("quick", **base)


@pytest.fixture(scope="module")
def study() -> b17.Study:
    st = b17.Study(toy(), settings(), dataset="toy")
    st.run_all(table3=True)
    return st


# ---- registration and the ledger as a whole ----------------------------------------------------


def test_ledger_is_registered_with_many_claims() -> None:
    assert papers.get("statistical-biases") is b17.LEDGER
    ids = b17.LEDGER.ids
    assert len(ids) >= 15 and len(set(ids)) == len(ids)
    for claim in b17.LEDGER:
        assert claim.source and claim.rule and "settings" in claim.needs
    # the items each have a row
    for needed in (
        "fig2.wilcoxon",
        "eq2.proof-step",
        "eq4.exact",
        "eq3.popularity",
        "sec5.1.popularity-best",
        "sec4.2.recall",
        "sec4.2.ndcg",
        "sec6.3.map-mrr",
        "sec6.3.grades",
        "fig8.ai-uar",
    ):
        assert f"bellogin2017.{needed}" in ids


def test_every_claim_evaluates_on_a_small_study(study) -> None:
    frame = b17.LEDGER.evaluate(study.results, dataset="toy", profile="quick")
    assert len(frame) == len(b17.LEDGER)
    assert set(frame["verdict"]) <= {v.value for v in Verdict}
    # without roster systems the claims on pLSA, kNN and MF say so, with the reason
    for cid in (
        "fig2.plsa-best",
        "fig5.plsa-tracks",
        "fig8.uar-knn",
        "fig8.plsa-best",
        "fig5.cf-near-random",
    ):
        row = frame.set_index("claim").loc[f"bellogin2017.{cid}"]
        assert row["verdict"] == Verdict.NOT_REPRODUCED.value and "did not run" in row["reason"]
    # the identities of §6.3, the lemma and its proof's step are derivations that hold
    v = frame.set_index("claim")["verdict"]
    for cid in (
        "eq1.bound",
        "eq2.bounds",
        "eq2.proof-step",
        "sec6.3.map-mrr",
        "sec6.3.grades",
        "fig9.bpref-1r",
    ):
        assert v[f"bellogin2017.{cid}"] == "holds"


def test_a_design_builds_each_splits_sets_once_for_the_baselines_and_the_roster(
    monkeypatch,
) -> None:
    # a stand-in roster system on the first two of five seeds: five splits built, not seven
    # (the study keeps the last three splits' target sets)
    st = b17.Study(toy(), settings(seeds=5, roster_seeds=2), dataset="toy")
    st.cf = {"MF": st.systems["popularity"]}
    built: list[int] = []
    real = trials.target_sets

    def counted(*args, **kwargs):
        built.append(kwargs["seed"])
        return real(*args, **kwargs)

    monkeypatch.setattr(trials, "target_sets", counted)
    out = st.run(st.protocol("TI", "1R", "NN"))
    assert sorted(built) == [0, 1, 2, 3, 4]
    # the baselines' rows on every seed first, then the roster system's on its seeds
    roster = out["system"].eq("MF").to_numpy()
    assert roster.any() and not roster[: (~roster).sum()].any()
    assert set(out.loc[roster, "seed"]) == {0, 1}
    assert set(out.loc[~roster, "seed"]) == {0, 1, 2, 3, 4}
    alone = trials.trials(
        st.ratings,
        st.protocol("TI", "1R", "NN"),
        st.cf,
        seeds=[0, 1],
        sigma=st.s.sigma,
        n=st.s.n,
        per_set=True,
    )
    pd.testing.assert_frame_equal(out[roster].reset_index(drop=True), alone)


def test_second_dataset_profile_leaves_out_costly_designs_and_says_so() -> None:
    st = b17.Study(
        toy(1),
        settings(ai_designs=False, engine_designs=False, seeds=1, check_seeds=2),
        dataset="toy2",
    )
    res = st.run_all()
    assert "fig9" not in res and "AI-UAR" not in set(res["fig8"]["design"])
    frame = b17.LEDGER.evaluate(res, dataset="toy2", profile="quick").set_index("claim")
    assert frame.loc["bellogin2017.fig8.ai-uar", "verdict"] == Verdict.NOT_REPRODUCED.value
    assert "did not run in this profile" in frame.loc["bellogin2017.fig8.ai-uar", "reason"]
    assert "not computed" in frame.loc["bellogin2017.fig9.bpref", "reason"]


def test_settings_resolve_profiles() -> None:
    quick, full = b17.Settings.resolve("quick"), b17.Settings.resolve("full")
    second = b17.Settings.resolve("quick", secondary=True)
    assert len(quick.seeds) < len(full.seeds) and len(second.seeds) <= len(quick.seeds)
    assert dict(full.roster_systems).keys() == {"pLSA", "MF", "user-kNN"}
    assert not second.ai_designs and quick.ai_designs and full.engine_designs
    s = b17.Settings.resolve("quick", seed=5, seeds=[7, 9], roster_seeds=1, n=20)
    assert s.seeds == (7, 9) and s.roster_seeds == (7,) and s.n == 20 and s.seed == 5


# ---- the bootstrap over users -----------------------------------------------------------------


def per_set_frame(
    values: dict[str, np.ndarray], users: np.ndarray, strata: np.ndarray, seed: int = 0
) -> pd.DataFrame:
    rows = [
        pd.DataFrame(
            {
                "seed": seed,
                "system": name,
                "set": np.arange(len(v)),
                "user": users,
                "stratum": strata,
                "removed": 0.0,
                "P": v,
                "nDCG": v,
            }
        )
        for name, v in values.items()
    ]
    return pd.concat(rows, ignore_index=True)


def test_user_table_ratio_is_the_protocol_mean() -> None:
    rng = np.random.default_rng(0)
    users = rng.integers(0, 30, 200)
    strata = rng.integers(0, 4, 200)
    a, b = rng.random(200), rng.random(200)
    f = per_set_frame({"a": a, "b": b}, users, strata)
    t = b17.user_table({"x": (f, ["a", "b"])})
    for name, v in (("a", a), ("b", b)):
        # independent: mean within each stratum, then mean of the strata (P1R)
        expected = pd.Series(v).groupby(strata).mean().mean()
        assert t[f"x|{name}"].sum() / t["x|w"].sum() == pytest.approx(expected)
        assert protocols.protocol_mean(f[f.system == name]) == pytest.approx(expected)
    assert t.index.nunique() == len(np.unique(users))


def test_user_bootstrap_matches_scipy_for_a_plain_mean() -> None:
    rng = np.random.default_rng(3)
    x = rng.gamma(0.7, size=400)
    f = per_set_frame({"s": x}, np.arange(400), np.zeros(400, int))
    t = b17.user_table({"x": (f, ["s"])})
    ours = b17.protocol_interval(t, lambda get: get("x", "s"), resamples=4000, seed=1)
    ref = stats.bootstrap(
        (x,), np.mean, n_resamples=4000, method="percentile", rng=np.random.default_rng(9)
    ).confidence_interval
    assert ours.value == pytest.approx(x.mean())
    width = ref.high - ref.low
    assert abs(ours.low - ref.low) < 0.1 * width and abs(ours.high - ref.high) < 0.1 * width


def test_user_bootstrap_keeps_a_users_sets_together() -> None:
    # every user has 10 identical sets: the cluster bootstrap sees 20 users, not 200 sets
    users = np.repeat(np.arange(20), 10)
    x = np.repeat(np.random.default_rng(0).random(20), 10)
    f = per_set_frame({"s": x}, users, np.zeros(200, int))
    est = b17.protocol_interval(
        b17.user_table({"x": (f, ["s"])}), lambda get: get("x", "s"), resamples=2000
    )
    per_user = stats.bootstrap(
        (x[::10],), np.mean, n_resamples=2000, method="percentile", rng=np.random.default_rng(0)
    ).confidence_interval
    assert est.width == pytest.approx(per_user.high - per_user.low, rel=0.2)


# ---- single claims on hand-made results ------------------------------------------------------


def fake(**results) -> dict:
    return {"settings": settings(), "dataset": "toy", **results}


def test_wilcoxon_claim_reads_the_largest_p() -> None:
    w = pd.DataFrame({"a": ["x", "x"], "b": ["y", "z"], "p": [1e-9, 0.02], "users": 50})
    out = b17.outcome("bellogin2017.fig2.wilcoxon", fake(wilcoxon=w))
    assert out.verdict == Verdict.DIFFERS and "x against z" in out.reason
    w["p"] = [1e-9, 1e-5]
    assert b17.outcome("bellogin2017.fig2.wilcoxon", fake(wilcoxon=w)).verdict == Verdict.AGREES


def test_proof_step_claim_is_a_derivation_that_can_fail() -> None:
    p = pd.DataFrame(
        {
            "system": ["a", "b"],
            "sets": [100, 300],
            "own <= union": 1.0,
            "union <= own + |PR|-1": 1.0,
            "printed: own >= union + |PR|-1": [0.1, 0.2],
            "one relevant item": [0.1, 0.2],
        }
    )
    out = b17.outcome("bellogin2017.eq2.proof-step", fake(proof_step=p))
    # the step the bound needs holds in every set; the printed one in a share 0.175
    assert out.verdict == Verdict.AGREES and out.ours.value == 0.0
    assert "0.175" in out.reason
    p["union <= own + |PR|-1"] = [1.0, 0.99]  # 3 of 400 sets break the step: the proof fails
    out = b17.outcome("bellogin2017.eq2.proof-step", fake(proof_step=p))
    assert out.verdict == Verdict.DIFFERS and out.ours.value == pytest.approx(0.0075)


def test_ml1m_properties_are_compared_only_on_ml1m() -> None:
    u = {"size": 1703, "eta": 118, "test share": 0.2}
    assert (
        b17.outcome("bellogin2017.sec6.2.uniform-size", fake(uniform_size=u)).verdict
        == Verdict.NOT_REPRODUCED
    )
    r = fake(uniform_size=u)
    r["dataset"] = "ml-1m"
    assert b17.outcome("bellogin2017.sec6.2.uniform-size", r).verdict == Verdict.AGREES
    r["uniform_size"] = {**u, "eta": 117}
    assert b17.outcome("bellogin2017.sec6.2.uniform-size", r).verdict == Verdict.DIFFERS


def test_ai_ti_claim_uses_the_exact_rho_of_each_split() -> None:
    c = pd.DataFrame(
        {
            "seed": [0, 1, 2],
            "no test rating": 0.16,
            "rho AI-AN": [0.01, 0.01, 0.01],
            "rho TI-AN": [0.0121, 0.0120, 0.0122],
        }
    )
    out = b17.outcome("bellogin2017.fig2.ai-ti", fake(coverage=c))
    assert out.verdict == Verdict.DIFFERS and out.ours.value == pytest.approx(0.21)
    c["rho TI-AN"] = [0.0100, 0.0101, 0.0099]
    assert b17.outcome("bellogin2017.fig2.ai-ti", fake(coverage=c)).verdict == Verdict.AGREES


def test_eq4_claims_separate_monte_carlo_from_the_exact_rho() -> None:
    # a 20 % bias, beyond the margin of a tenth: the Monte-Carlo interval (wide) cannot tell,
    # the exact ρ (tight) differs
    rows = pd.DataFrame(
        {
            "sigma": 0.2,
            "seed": range(6),
            "eq4": 0.01,
            "rho": 0.012 + np.arange(6) * 1e-6,
            "cov": 0.002,
            "split": 0.0,
            "random": [0.0095, 0.0142, 0.0101, 0.0140, 0.0098, 0.0143],
        }
    )
    r = fake(ar_checks=rows)
    mc = b17.outcome("bellogin2017.eq4.monte-carlo", r)
    assert mc.verdict == Verdict.INCONCLUSIVE and mc.margin == pytest.approx(0.1)
    exact = b17.outcome("bellogin2017.eq4.exact", r)
    assert exact.verdict == Verdict.DIFFERS and exact.ours.value == pytest.approx(0.2, abs=1e-3)
    # a 2 % bias, known tightly: inside the margin, so eq. 4 agrees
    r = fake(ar_checks=rows.assign(rho=0.0102 + np.arange(6) * 1e-6))
    assert b17.outcome("bellogin2017.eq4.exact", r).verdict == Verdict.AGREES


def test_fig8_lift_claims_on_a_study(study) -> None:
    f = study.results["fig8"]
    assert {"P1R", "P1R (AI)", "UAR", "AI-UAR"} <= set(f["design"])
    # P1R uses TI candidates: every target item has a test rating in its split
    out = b17.outcome("bellogin2017.fig8.u1r", study.results)
    t = b17.user_table({d: (f[f.design == d], ["popularity", "random"]) for d in ("U1R", "1R")})
    direct = (t["U1R|popularity"].sum() / t["U1R|random"].sum()) - (
        t["1R|popularity"].sum() / t["1R|random"].sum()
    )
    assert out.ours.value == pytest.approx(direct)


def test_cited_claim_names_paper_ours_and_verdict(study) -> None:
    sentence = text.cite(study, "fig2.popularity-ar")
    assert "the paper's 0.08 ± 0.015 (ML-1M)" in sentence and "ours (toy)" in sentence
    assert re.search(r"\*\*(agrees|differs|inconclusive|shown, not graded)", sentence)
    assert text.cite(study, "bellogin2017.fig2.popularity-ar") == sentence


def test_direction_words() -> None:
    assert text.direction(0.3) == "rises" and text.direction(-1) == "falls"
    assert text.direction(0) == "stays level"


# ---- the study's experiments ------------------------------------------------------------------


def test_p1r_of_fig8_uses_test_items_only() -> None:
    df = toy(2)
    s = settings()
    st = b17.Study(df, s, dataset="toy")
    p = st.protocol("TI", "1R", "NN", percentiles=s.percentiles, short_pool="shrink")
    train, test, sets, _ = trials.split_sets(df, p, 0, sigma=s.sigma)
    assert set(sets["item"]) <= set(test["item"])
    p_ai = st.protocol("AI", "1R", "NN", percentiles=s.percentiles, short_pool="shrink")
    _, _, sets_ai, _ = trials.split_sets(df, p_ai, 0, sigma=s.sigma)
    assert (
        not set(sets_ai["item"]) <= set(test["item"])
        or len(set(test["item"])) == df["item"].nunique()
    )


def test_coverage_and_positive_shares(study) -> None:
    c = study.results["coverage"]
    assert ((c["no test rating"] >= 0) & (c["no test rating"] < 1)).all()
    shares = study.results["positive_shares"]
    liked = study.positive
    assert shares["top_liked"] == pytest.approx(liked.max() / 150)
    curve = shares["curve"]["positive share"].to_numpy()
    assert curve[-1] == pytest.approx(1.0) and np.all(np.diff(curve) >= 0)


def test_nonpersonalised_ceiling_beats_every_ranking(study) -> None:
    per = trials.summarise(study.results["nonpersonalised"]).groupby("system")["P"].mean()
    assert per[b17.ORACLE] >= per[list(b17.NONPERSONALISED)].max() - 1e-12


def test_conditional_eq3_is_closer_to_the_measurement_than_eq3(study) -> None:
    c = study.results["ar_checks"].dropna(subset=["popularity"])
    measured = c["popularity"].mean()
    assert abs(c["conditional"].mean() - measured) < abs(c["eq3"].mean() - measured)
    assert abs(c["exact"].mean() - measured) < abs(c["eq3"].mean() - measured)


def test_identities_hold_on_the_study(study) -> None:
    f = study.results["identities"]
    one_r = f[f.design == "1R TI-NN"]
    np.testing.assert_allclose(one_r["AP"], one_r["RR"], atol=1e-12)
    np.testing.assert_allclose(one_r["nDCG rating gain"], one_r["nDCG binary gain"], atol=1e-12)
    ar = f[f.design == "AR TI-NN"]
    assert (ar["nDCG rating gain"] - ar["nDCG binary gain"]).abs().max() > 1e-6


# ---- the chapter --------------------------------------------------------------------------------


def test_chapter_prose_has_no_typed_numbers_and_no_old_claims() -> None:
    text = CHAPTER.read_text()
    assert prose.typed_numbers(text) == []
    # sentences the issue found wrong are gone
    assert "fewer five-star test ratings per target set" not in text
    assert "AI and TI give almost the same sets" not in text
    assert "mostly the popular items, so a popularity list skips them" not in text
    # Fig. 8's caption does not name two systems; Fig. 9 is a figure; the provenance lines stay
    m = re.search(r"caption: (.*?)\n    name: fig-neutralising", text, re.S)
    assert m and "popularity and random" not in m.group(1)
    assert "name: fig-fig9" in text
    assert (
        "chapters.start(" in text and "execution.finish()" in text and "{glue:md} execution" in text
    )
    assert 'needs="graded"' in text and "second_dataset" in text
    assert "other way round" in text  # the reversed step of the proof is pointed out


# ---- the chapter's text, tables and figures ---------------------------------------------------


def test_settings_remember_their_profile() -> None:
    assert b17.Settings.resolve("quick").profile == "quick"
    assert b17.Settings.resolve("full").profile == "full"


def test_claim_parts_cite_every_claim_once_and_exist() -> None:
    cited = [c for ids in text.CLAIMS.values() for c in ids]
    assert len(cited) == len(set(cited))
    assert {f"bellogin2017.{c}" for c in cited} <= set(b17.LEDGER.ids)
    with pytest.raises(KeyError, match="no part"):
        text.claims(None, "fig99")


def test_claims_list_one_bullet_per_claim_with_its_verdict(study) -> None:
    md = text.claims(study, "fig8")
    lines = md.split("\n")
    assert len(lines) == len(text.CLAIMS["fig8"]) and all(x.startswith("* *") for x in lines)
    for line, cid in zip(lines, text.CLAIMS["fig8"], strict=True):
        verdict = b17.outcome(f"bellogin2017.{cid}", study.results).verdict.value
        assert f"**{verdict}**" in line


def test_texts_take_their_numbers_from_the_results(study) -> None:
    t3 = study.results["table3"]
    pcol = t3[f"popularity P@{study.s.n}"]
    assert f"{pcol.min():.4f} ({pcol.idxmin()})" in text.target_sets_text(study)
    proof = study.results["proof_step"]
    assert f"{proof['one relevant item'].mean():.4f}" in text.proof_step_text(study)
    fit = study.results["fit"]
    assert text.fit_line(study) == (
        f"fit on toy: c1 = {fit.c1:.3g}, c2 = {fit.c2:.1f}, "
        f"beta = {fit.beta:.3g}, alpha = {fit.alpha:.2f}"
    )
    top = study.results["positive_shares"]["top_liked"]
    assert f"liked by {top:.1%} of the users" in text.positive_shares_text(study)
    assert text.summary(study).startswith("toy: 150 users")
    # the sentences of every part read without error and end in a full stop or a list item
    for fn in (
        text.fig2_text,
        text.popularity_gap_text,
        text.formula_text,
        text.fig4_text,
        text.eq3_text,
        text.fig5_text,
        text.fig8_text,
        text.p1r_text,
        text.fig9_text,
    ):
        out = fn(study)
        assert out and "{" not in out and "nan" not in out.lower().replace("nanosecond", "")


def test_fig8_text_names_the_extreme_lifts(study) -> None:
    lift = b17.tables.fig8_table(study)["popularity / random"]
    out = text.fig8_text(study)
    assert f"smallest under {lift.idxmin()} and largest under {lift.idxmax()}" in out
    assert f"{lift['P1R (AI)']:.2f}, against {lift['P1R']:.2f}" in out


def test_verdicts_text_counts_and_compares_two_ledgers(study) -> None:
    frame = b17.LEDGER.evaluate(study.results, dataset="toy", profile="quick")
    other = frame.copy()
    flip = other.index[other["verdict"] == "agrees"][0]
    other.loc[flip, "verdict"] = "differs"
    out = text.verdicts_text({"toy": frame, "toy2": other})
    n_holds = int((frame["verdict"] == "holds").sum())
    assert out.startswith(f"**Verdicts.** {len(frame)} claims — on toy, derivations: ")
    assert f"{n_holds} holds" in out and "transfers: " in out
    ungraded = ["not reproduced here", "shown, not graded"]
    judged = int((~frame["verdict"].isin(ungraded) & ~other["verdict"].isin(ungraded)).sum())
    assert f"Of the {judged} claims judged on both datasets, {judged - 1} get the same" in out
    assert other.loc[flip, "claim"].replace("bellogin2017.", "") in out
    assert "judged on both" not in text.verdicts_text({"toy": frame})


def test_tables_match_the_results(study) -> None:
    f2 = b17.tables.fig2_table(study)
    direct = trials.summarise(study.results["fig2"], by=["design"])
    one = direct[(direct.design == "AR TI-AN") & (direct.system == "popularity")]["P"].mean()
    assert f2.loc["AR TI-AN", "popularity"] == pytest.approx(one)
    rm = b17.tables.removal_table(study)
    assert (rm.iloc[0] == 1).all()
    npt = b17.tables.nonpersonalised_table(study)
    assert list(npt.index) == [*b17.NONPERSONALISED, b17.ORACLE]
    gaps = b17.tables.identities_table(study)
    assert gaps.loc[("1R TI-NN", study.s.graded_threshold), "|AP - RR|"] < 1e-12
    assert (
        b17.tables.uniform_table(study).loc["|T|", "ours"] == study.results["uniform_size"]["size"]
    )
    assert list(b17.tables.fig8_table(study).index) == b17.tables.fig8_designs(study)


def test_figures_draw(study) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    for draw in (
        b17.figures.fig2,
        b17.figures.lemma_bounds,
        b17.figures.sparsity,
        b17.figures.simulation,
        b17.figures.positive_ratio,
        b17.figures.fig6,
        b17.figures.fig8,
        b17.figures.fig9,
    ):
        draw(study)
        plt.close("all")
    b17.figures.positive_shares([study, None])
    plt.close("all")
