"""The ledger of the multi-graded relevance chapter (Scheel, Lommatzsch & Albayrak 2011).

The claims are evaluated on small artificial inputs whose verdicts are known by construction
(hand-made rankings, scores with a chosen correlation, virtual users whose raw scores have small
gains), and on manipulated inputs that must make a rule fail.
"""

from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from recmeta.ledger import Verdict, prose, row_of, sentence
from recmeta.metrics import score_rankings
from recmeta.papers import scheel2011 as sch

ROOT = Path(__file__).resolve().parents[1]
A, D, I, N = Verdict.AGREES, Verdict.DIFFERS, Verdict.INCONCLUSIVE, Verdict.NOT_REPRODUCED
SETTINGS = sch.Settings.resolve("quick", dataset="test")


def slow_ndcg_exp(grades: list[float]) -> float:
    def dcg(gs):
        return sum((2**g - 1) / math.log2(i + 1) for i, g in enumerate(gs, 1))

    return dcg(grades) / dcg(sorted(grades, reverse=True))


# ---------------------------------------------------------------- inputs
@pytest.fixture(scope="module")
def synthetic() -> dict:
    kw = {"n_items": 100, "max_swaps": 30, "repetitions": 8, "seed": 3, "progress": False}
    study = sch.swap_study([2, 50], **kw)
    unit = sch.swap_study([2, 50], thresholds=False, scale="unit", **kw)
    example = np.array([3, 0, 4, 1, 2, 0, 1, 4], float)
    counts = pd.DataFrame([
        {"distribution": d, "levels": n, "level": k, "items": int(c)}
        for d in sch.DISTRIBUTIONS for n in (2, 50)
        for k, c in enumerate(np.bincount(sch.study_reference(d, n, 100, 3).astype(int), minlength=n))])
    return {
        "weights_example": sch.level_weights(sch.EQ4_EXAMPLE_LEVELS),
        "threshold_ap": pd.Series({t: score_rankings(example, ["AP"], threshold=t)["AP"][0]
                                   for t in range(1, 5)}),
        "swap_study": study, "swap_study_unit": unit,
        "single_swaps": sch.single_swap_scores(sch.study_reference("uniform", 10, 40, 3)),
        "level_counts": counts,
    }


def _candidates(seed: int = 0, n_users: int = 60, n_items: int = 40) -> pd.DataFrame:
    """A rating predictor (scores 1..5), a close copy, an unrelated and a reversed system."""
    rng = np.random.default_rng(seed)
    ref = 1 + 4 * rng.beta(4, 2, size=(n_users, n_items))
    systems = {"ref": ref, "near": ref + rng.normal(scale=0.15, size=ref.shape),
               "far": rng.normal(size=ref.shape), "anti": -ref}
    return pd.concat([
        pd.DataFrame({"system": name, "user": np.repeat(np.arange(n_users), n_items),
                      "item": np.tile(np.arange(n_items), n_users), "score": s.ravel()})
        for name, s in systems.items()], ignore_index=True)


def _scale_inputs(ranked: list[float], n_users: int = 30,
                  metrics: tuple[str, ...] = tuple(sch.PAPER_METRICS)) -> pd.DataFrame:
    """Every user has the same graded list (grades 0..2 as ratings 1..3), ranked as given."""
    test = pd.DataFrame({"user": np.repeat(np.arange(n_users), len(ranked)),
                         "item": np.tile(np.arange(len(ranked)), n_users),
                         "rating": np.tile(np.asarray(ranked) + 1.0, n_users)})
    runs = test[["user", "item"]].assign(system="s", score=-test["item"].astype(float))
    runs2 = runs.assign(system="t", score=runs["score"] - 0.0)
    return sch.scale_study(test, pd.concat([runs, runs2]), {
        "native": sch.to_grades, "doubled": lambda df: sch.to_grades(df, factor=2)},
        list(metrics), per_user=True)


@pytest.fixture(scope="module")
def real() -> dict:
    scores = _candidates()
    return {
        "scale_per_user": _scale_inputs([1.0, 2.0, 2.0, 0.0, 1.0, 0.0]),
        "virtual_per_user": sch.virtual_user_study(scores, "ref", [9, 100, None], per_user=True),
        "virtual_reference": "ref", "ordinal_levels": 9, "candidate_scores": scores,
        "n_boot": 999, "seed": 0,
    }


@pytest.fixture(scope="module")
def frame(synthetic, real):
    return sch.LEDGER.evaluate({**synthetic, **real}, dataset="test", profile="quick").set_index("claim")


# ---------------------------------------------------------------- the ledger covers the paper
def test_the_ledger_has_a_row_for_every_figure_table_and_equation():
    from recmeta import papers

    assert papers.get("multigraded-relevance") is sch.LEDGER
    assert len(sch.LEDGER) >= 25
    assert all(c.id.startswith("scheel2011.") for c in sch.LEDGER)
    sources = " ".join(c.source for c in sch.LEDGER)
    for fig in range(1, 9):
        assert re.search(rf"Figs?\. (\d–)?{fig}\b|Figs?\. {fig}–|Figs\. \d–{fig}\b", sources), f"Fig. {fig}"
    for table in (1, 2):
        assert f"Table {table}" in sources
    for eq in range(1, 6):
        assert re.search(rf"eqs?\. (\d–)?{eq}\b|eqs\. {eq}–", sources), f"eq. {eq}"


def test_paper_constants_are_the_printed_ones():
    # eq. 4's example: weights are the distances between the levels over the top level
    levels = sch.EQ4_EXAMPLE_LEVELS
    assert sch.EQ4_EXAMPLE_WEIGHTS == pytest.approx(
        ((levels[1] - levels[0]) / levels[2], (levels[2] - levels[1]) / levels[2]))
    assert sch.VIRTUAL_USER_CORRELATION == 0.96
    assert list(sch.VIRTUAL_LEVELS.values()) == [9, 158]
    assert (sch.PAPER_ITEMS, sch.PAPER_MAX_SWAPS, sch.PAPER_REPETITIONS) == (100, 99, 100)


def test_claims_not_legible_in_our_copy_say_so():
    for cid in ("scheel2011.tab1.threshold-changes-ap", "scheel2011.tab2.doubling-lowers-ndcg",
                "scheel2011.fig6.ohsumed-user-ratings"):
        assert "not legible" in str(sch.LEDGER[cid].paper_value)


# ---------------------------------------------------------------- verdicts known by construction
def test_verdicts_on_inputs_with_known_answers(frame):
    v = frame["verdict"]
    for cid in ("sec2.ideal-scores-one", "eq4.example-weights", "sec5.two-levels-equal-ap",
                "sec4.mu-map-mean-of-thresholds", "sec2.1.performance-falls-with-swaps",
                "sec2.1.cost-depends-on-distance", "tab1.threshold-changes-ap",
                "fig4.ndcg-falls-with-levels", "fig4.muap-stable-across-levels",
                "fig4.ndcng-stable-across-levels", "fig4.gain-size-not-level-count",
                "tab2.ndcng-scale-free", "tab2.muap-scale-free", "fig7.reference-scores-one",
                "fig7.closest-strategy"):
        row = frame.loc[f"scheel2011.{cid}"]
        expected = "holds" if row["kind"] == "derivation" else A.value
        assert row["verdict"] == expected, (cid, row["reason"])
    assert v["scheel2011.fig6.ohsumed-user-ratings"] == N.value
    assert (v.drop("scheel2011.fig6.ohsumed-user-ratings") != N.value).all()
    # identities carry their floating-point margin; the one value claim is the 0.96, with its
    # declared margin; "hardly differs" claims are equivalence tests with theirs
    assert (frame.loc[frame["rule"] == "identity", "margin"] == sch.EXACT).all()
    assert list(frame.index[frame["rule"] == "value"]) == ["scheel2011.sec2.2.virtual-users-correlation"]
    assert (frame.loc[frame["rule"] == "equivalence", "margin"] == sch.STABLE).all()
    assert (frame["rule"] == "equivalence").sum() == 9 and (frame["rule"] != "custom").all()
    # the order of each measure is written by the ledger's order writer: near is clearly first
    text = frame.loc["scheel2011.fig7.closest-strategy", "ours_text"]
    assert [part.split(": ")[1].split(" > ")[0] for part in text.split("; ")] == ["near"] * 3


def test_ordinal_and_real_valued_virtual_users_get_their_own_verdicts(frame, real):
    # the raw scores of a rating predictor span at most 4 units (gains <= 15); 100 ordinal levels
    # have a top gain of 2^99: NDCG falls with the ordinal user, not with the real-valued one
    v = frame["verdict"]
    assert v["scheel2011.fig8.ordinal.ndcg-lower"] == A.value
    assert v["scheel2011.fig8.real-valued.ndcg-lower"] == D.value
    for kind in ("ordinal", "real-valued"):
        assert v[f"scheel2011.fig8.{kind}.ndcng-stable"] == A.value
    raw = sch.virtual_judgments(real["candidate_scores"].query("system == 'ref'"), None)
    assert raw["rating"].max() <= 4


def test_gain_or_levels_concludes_only_when_both_comparisons_agree(synthetic, real):
    text = sch.gain_or_levels({**synthetic, **real}, SETTINGS)
    assert "NDCG reacts to the size of the gains, not to the number of levels" in text
    # without the unit study's agreement (a fake study where NDCG falls on [0, 1] too), no conclusion
    unit = synthetic["swap_study"].copy()
    text = sch.gain_or_levels({**synthetic, **real, "swap_study_unit": unit}, SETTINGS)
    assert "do not separate" in text


def test_doubling_the_scale_direction_follows_where_the_errors_are():
    # the toy lists of the chapter: slow reference says which way NDCG moves on the doubled scale
    misplaced, first = [1.0, 2.0, 2.0, 0.0, 1.0, 0.0], [2.0, 0.0, 1.0, 1.0, 0.0, 0.0]
    assert slow_ndcg_exp([2 * g for g in misplaced]) < slow_ndcg_exp(misplaced)
    assert slow_ndcg_exp([2 * g for g in first]) > slow_ndcg_exp(first)
    results = {"n_boot": 499, "seed": 0}
    down = sch.outcome("tab2.doubling-lowers-ndcg", {**results, "scale_per_user": _scale_inputs(misplaced)})
    up = sch.outcome("tab2.doubling-lowers-ndcg", {**results, "scale_per_user": _scale_inputs(first)})
    assert down.verdict is A and up.verdict is D
    assert "0 of 2 systems go down, 2 up" in up.reason


def _per_user_levels(scores: np.ndarray, users: np.ndarray, n: int) -> np.ndarray:
    """Slow reference of the ordinal virtual user: n equal-width levels over each user's range."""
    out = np.empty_like(scores)
    for u in np.unique(users):
        s = scores[users == u]
        out[users == u] = np.minimum(np.floor(n * (s - s.min()) / (s.max() - s.min())), n - 1)
    return out


def _two_users(r: float, n_users: int = 150, n_items: int = 40, seed: int = 1) -> dict:
    """A reference, a second system = its 9-level grades plus noise (noise sd = sd(grades) ·
    sqrt(1/r² − 1), so r before the per-user shift of the raw scores, which lowers it), and an
    unrelated system."""
    rng = np.random.default_rng(seed)
    users, items = np.repeat(np.arange(n_users), n_items), np.tile(np.arange(n_items), n_users)
    x = rng.normal(size=users.size)
    g = _per_user_levels(x, users, 9)
    second = g + g.std() * math.sqrt(1 / r**2 - 1) * rng.normal(size=g.size)
    cand = pd.concat([pd.DataFrame({"system": s, "user": users, "item": items, "score": v})
                      for s, v in (("ref", x), ("second", second),
                                   ("noise", rng.normal(size=x.size)))])
    raw = second - pd.Series(second).groupby(users).transform("min").to_numpy()
    return {"candidate_scores": cand, "virtual_reference": "ref", "ordinal_levels": 9,
            "n_boot": 999, "seed": 0, "expected": float(np.corrcoef(g, raw)[0, 1]),
            "virtual_per_user": sch.virtual_user_study(cand, "ref", [9], per_user=True)}


def test_the_virtual_users_correlation_compares_two_systems_as_the_paper_does():
    # the paper's 0.96 is r between two strategies' assessments (TF in 9 levels, TF-IDF raw):
    # ours is the reference's 9-level grades against the raw scores of the closest system
    close = _two_users(0.98)  # r = 0.963 after the shift
    out = sch.outcome("sec2.2.virtual-users-correlation", close)
    assert out.ours.value == pytest.approx(close["expected"], abs=1e-12)
    assert 0.93 < out.ours.low <= out.ours.value <= out.ours.high < 0.99
    assert out.verdict is A and out.rule == "value" and out.margin == pytest.approx(0.03)
    assert "second is the system closest" in out.reason
    # a looser second system: r far below the band differs; the reference against its own raw
    # scores (the former reading) would stay near 1 whatever the other systems do
    loose = _two_users(0.8)
    out = sch.outcome("sec2.2.virtual-users-correlation", loose)
    assert out.ours.value == pytest.approx(loose["expected"], abs=1e-12)
    assert out.ours.high < 0.93 and out.verdict is D
    # an interval that reaches across the band's edge is inconclusive
    edge = _two_users(0.955, n_users=40, n_items=10)
    out = sch.outcome("sec2.2.virtual-users-correlation", edge)
    assert out.ours.low < 0.93 < out.ours.high and out.verdict is I


def test_the_0_96_is_one_claim_shown_not_graded_on_other_data():
    assert [c.id for c in sch.LEDGER if c.paper_value == sch.VIRTUAL_USER_CORRELATION] == [
        "scheel2011.sec2.2.virtual-users-correlation"]
    close = _two_users(0.96)
    for dataset in ("ml-100k", "ml-latest-small", "ratings.csv"):
        row = sch.LEDGER.row("scheel2011.sec2.2.virtual-users-correlation", close,
                             dataset=dataset, profile="quick")
        assert row["kind"] == "transfer" and row["verdict"] == "shown, not graded"
        assert row["margin"] == pytest.approx(0.03) and "OHSUMED" in row["paper_dataset"]


def test_closest_strategy_ties_and_disagreements():
    scores = _candidates(seed=2)
    twin = scores[scores.system == "near"].assign(system="twin")
    tied = pd.concat([scores, twin], ignore_index=True)
    r = {"virtual_per_user": sch.virtual_user_study(tied, "ref", [9], per_user=True),
         "virtual_reference": "ref", "ordinal_levels": 9, "n_boot": 499, "seed": 0}
    out = sch.outcome("fig7.closest-strategy", r)
    # near and twin are the same system: "near lies above twin" is not established (Holm), and
    # the order groups them
    assert out.verdict is I and ("near − twin" in out.reason or "twin − near" in out.reason)
    assert all(" ≈ " in part for part in out.detail.split("; "))


def test_rules_fail_on_manipulated_inputs(synthetic):
    s = synthetic["swap_study"].copy()
    bad = s.copy()
    mask = (bad.levels == 2) & (bad.metric == "muAP") & (bad.swaps == 5)
    bad.loc[mask, "value"] += 0.01
    assert sch.outcome("sec5.two-levels-equal-ap", {"swap_study": bad}).verdict is D
    # a study in which NDCG does not fall with more levels: the 50-level curve copied from 2 levels
    flat = s.copy()
    ndcg = flat.metric == "nDCG(gain=exp)"
    two = flat[(flat.levels == 2) & ndcg].set_index(["distribution", "swaps"])["value"]
    m50 = (flat.levels == 50) & ndcg
    keys = list(zip(flat.loc[m50, "distribution"], flat.loc[m50, "swaps"]))
    flat.loc[m50, "value"] = two.loc[keys].to_numpy()
    assert sch.outcome("fig4.ndcg-falls-with-levels", {"swap_study": flat}).verdict is I
    # a very noisy study is too wide to call µAP stable
    noisy = s.assign(sd=s["sd"] * 0 + 5.0)
    assert sch.outcome("fig4.muap-stable-across-levels", {"swap_study": noisy}).verdict is I
    # weights that are not the paper's
    w = pd.Series([0.5, 0.5], index=[0.3, 1.0])
    assert sch.outcome("eq4.example-weights", {"weights_example": w}).verdict is D


def test_a_missing_result_is_not_reproduced_and_named(synthetic):
    frame = sch.LEDGER.evaluate(synthetic, dataset="test", profile="quick").set_index("claim")
    row = frame.loc["scheel2011.fig7.closest-strategy"]
    assert row["verdict"] == N.value and "virtual_per_user" in row["reason"]
    assert frame.loc["scheel2011.fig4.ndcg-falls-with-levels", "verdict"] == A.value


def test_cite_gives_paper_ours_uncertainty_and_verdict(synthetic, frame):
    text = sch.cite(synthetic, SETTINGS, "fig4.ndcg-falls-with-levels")
    assert text.startswith("- *NDCG is lower with more relevance levels")
    assert "the paper's lower with more levels (artificial rankings)" in text
    assert "normal interval, 95 %" in text and "**agrees**" in text
    # a claim on artificial data is labelled so, not with the chapter's dataset
    assert re.search(r"ours \(artificial data\): \d\.\d+ \[\d\.\d+, \d\.\d+\]", text)
    # the same sentence as the ledger's one renderer gives from the evaluated row
    row = row_of(frame.reset_index(), "scheel2011.fig4.ndcg-falls-with-levels")
    assert text == "- " + sentence({**row, "dataset": sch.ARTIFICIAL})


def test_cite_labels_real_data_claims_with_the_dataset(synthetic, real):
    text = sch.cite({**synthetic, **real}, SETTINGS, "tab2.ndcng-scale-free", "fig7.closest-strategy")
    assert text.count("\n") == 1 and text.count("ours (test): ") == 2
    with pytest.raises(ValueError, match="at least one claim"):
        sch.cite(synthetic, SETTINGS)
    with pytest.raises(KeyError, match="no claim"):
        sch.cite(synthetic, SETTINGS, "fig99.nothing")


def test_describe_run_compares_with_the_papers_sizes():
    full = sch.Settings.resolve("full")
    same = sch.describe_run(full)
    assert same.startswith("This run uses the paper's sizes")
    other = sch.describe_run(sch.Settings.resolve("quick"))
    assert "10 rankings per swap count; the paper used" in other and "100 rankings" in other


def test_describe_levels_effect_quotes_the_curves(synthetic):
    text = sch.describe_levels_effect(synthetic, SETTINGS, "uniform")
    s = synthetic["swap_study"]
    ndcg2 = s[(s.distribution == "uniform") & (s.levels == 2) & (s.metric == "nDCG(gain=exp)")
              & (s.swaps >= 1)]
    assert f"NDCG scores {ndcg2['value'].mean():.3f} with 2 levels" in text
    assert text.count("verdict: **") == 3


# ---------------------------------------------------------------- the chapter's prose
def test_the_chapter_prose_has_no_typed_result_numbers():
    found = prose.typed_numbers((ROOT / "notebooks" / "multigraded-relevance.md").read_text())
    assert not found, "\n".join(map(str, found))


def test_the_chapter_reports_both_datasets_and_keeps_its_provenance():
    text = (ROOT / "notebooks" / "multigraded-relevance.md").read_text()
    assert 'second_dataset = "ml-latest-small"' in text
    assert 'papers.report("multigraded-relevance"' in text
    assert 'chapters.ratings(dataset, needs="graded", columns=columns)' in text
    assert "execution = chapters.start(" in text and "execution.finish()" in text
    assert "{glue:md} execution" in text
    # the old claims table typed its verdicts; every verdict now comes from the ledger
    assert '"holds"' not in text


# ---------------------------------------------------------------- settings
def test_settings_fill_the_profiles_defaults_and_keep_given_values():
    quick, full = sch.Settings.resolve("quick"), sch.Settings.resolve("full")
    assert (quick.repetitions, quick.check_draws, quick.n_boot) == (10, 1000, 1999)
    assert (full.repetitions, full.check_draws, full.n_boot) == (100, 4000, 9999)
    assert len(quick.systems) == 5 and len(full.systems) == 7 and "iknn-20" in full.systems
    # the quick profile trains no EASE (cubic in the items: seconds on ml-latest-small)
    assert "ease-250" in full.systems and "ease-250" not in quick.systems
    # the ordinal level count is always among the virtual users' levels, sorted, once
    assert quick.virtual_levels == (2, 9, 100)
    assert sch.Settings.resolve("quick", virtual_levels=[50, 9, 3]).virtual_levels == (3, 9, 50)
    given = sch.Settings.resolve("quick", repetitions=3, systems=["pop"], levels=[2, 5])
    assert (given.repetitions, given.systems, given.levels) == (3, ("pop",), (2, 5))
    assert given.show_levels == 5 and quick.show_levels == 10
    assert quick.datasets == ["ml-100k", "ml-latest-small"] and quick.second == "ml-latest-small"
    alone = sch.Settings.resolve("quick", second_dataset="ml-100k")
    assert alone.datasets == ["ml-100k"] and alone.second is None
    assert sch.Settings.resolve("quick", second_dataset=None).second is None


def test_settings_refuse_bad_input():
    with pytest.raises(ValueError, match="profile 'fast'"):
        sch.Settings.resolve("fast")
    with pytest.raises(TypeError, match="list of roster names"):
        sch.Settings.resolve("quick", systems="pop")


def test_settings_from_the_parameters_cell():
    cell = {"profile": "quick", "dataset": "ml-100k", "columns": None, "second_dataset": None,
            "seed": 7,
            "n_items": 50, "levels": [2, 10], "max_swaps": 20, "repetitions": None,
            "check_draws": None, "test_fraction": 0.2, "depth": 100, "systems": None,
            "reference_system": "biasedmf-50", "ordinal_levels": 9, "virtual_levels": None,
            "n_candidates": 100, "n_boot": 99, "unrelated": object()}
    s = sch.Settings.from_parameters(cell)
    assert (s.seed, s.n_items, s.levels, s.repetitions, s.n_boot) == (7, 50, (2, 10), 10, 99)
    assert set(sch.PARAMETERS) | {"profile"} == set(cell) - {"unrelated"}
    del cell["depth"]
    with pytest.raises(KeyError, match="depth"):
        sch.Settings.from_parameters(cell)


def test_the_notebooks_parameters_are_the_settings():
    text = (ROOT / "notebooks" / "multigraded-relevance.md").read_text()
    cell = text.split(":tags: [parameters]", 1)[1].split("```", 1)[0]
    names = set(re.findall(r"^(\w+) = ", cell, re.MULTILINE))
    assert names == set(sch.PARAMETERS) | {"profile"}


# ---------------------------------------------------------------- worked examples
def test_threshold_table_by_engine_and_by_hand():
    table = sch.threshold_table()
    assert list(table.index) == ["t = 1", "t = 2", "t = 3", "t = 4", "µAP (eq. 4)", "Σ w_t AP^t"]
    np.testing.assert_allclose(table["AP"], table["by hand"], rtol=0, atol=1e-12)
    # t = 4: the relevant items C and H sit at ranks 3 and 8: AP = (1/3 + 2/8) / 2
    assert table.loc["t = 4", "AP"] == pytest.approx((1 / 3 + 2 / 8) / 2)
    assert sch.threshold_ap().to_dict() == pytest.approx(table["AP"].iloc[:4].set_axis(
        range(1, 5)).to_dict())


def test_toy_scale_table_moves_only_exponential_ndcg():
    table = sch.toy_scale_table()
    assert table.shape == (6, 4)
    np.testing.assert_allclose(table["NDCG (exp. gain)"], sch.ndcg_exp_by_hand(table), atol=1e-12)
    assert table["NDCG (exp. gain)"].to_numpy() == pytest.approx(
        [slow_ndcg_exp(list(f * r)) for r in sch.TOY_RANKINGS.values()
         for f in sch.TOY_SCALES.values()])
    assert sch.largest_other_move(table) < 1e-12
    moved = table.copy()
    moved.iloc[1, 3] += 0.5
    assert sch.largest_other_move(moved) == pytest.approx(0.5)
    moves = sch.doubling_moves(table)
    assert moves["top item misplaced"] < 0 < moves["top item first"]
    text = sch.doubling_text(table)
    assert "“top item misplaced” gets an NDCG lower by" in text and "as in the paper" in text
    assert "“top item first” gets an NDCG higher by" in text and "against the paper" in text


# ---------------------------------------------------------------- sentences
def test_texts_quote_the_ledger_and_the_results(synthetic, real):
    results = {**synthetic, **real}
    uniform = sch.uniform_levels_text(results, SETTINGS)
    assert "of all the gain." in uniform and "*The low NDCG with many levels" in uniform
    non = sch.nonuniform_levels_text(results, SETTINGS)
    assert non.count("\n- ") == 6 and "with non-uniform level counts" in non
    virtual = sch.virtual_users_text(results, SETTINGS)
    assert virtual.count("**agrees**") + virtual.count("**differs**") >= 2
    assert "From 9 levels to the raw scores" in virtual and "In the swap study" in virtual
    used = sch.levels_used(real["candidate_scores"], "ref", 9)
    assert sch.levels_used_text(results, SETTINGS) == (
        f"With 9 levels cut per user, a user's candidates use {used['user']:.1f} of the 9 "
        f"levels on average; cut once over all users, as the paper's are, they would use "
        f"{used['global']:.1f}.")
    # per user, each user's best and worst candidate reach the top and the bottom level
    assert 2 <= used["global"] <= used["user"] <= 9


def test_scale_texts_per_dataset(real):
    per_user = _scale_inputs([1.0, 2.0, 2.0, 0.0, 1.0, 0.0], metrics=tuple(sch.REAL_METRICS))
    means = sch.scale_means({"a": {"scale_per_user": per_user}, "b": {"scale_per_user": per_user}})
    summary = sch.largest_changes(pd.concat([means, means.assign(
        scale="squared", value=means["value"] * 1.1)]))
    text = sch.scale_changes_text(summary)
    assert text.count("On a,") == 1 and text.count("On b,") == 1 and "\n\n" in text
    assert "the squared scale moves µAP by up to 10.00%" in text
    full = sch.scale_text(summary, real, SETTINGS)
    assert full.startswith(text) and full.count("\n- ") == 3


def test_ledger_counts_and_ledger_results(synthetic, real):
    frame = sch.LEDGER.evaluate({**synthetic, **real}, dataset="test", profile="quick")
    text = sch.ledger_counts({"test": frame})
    assert text.startswith("On test: ") and text.endswith(".")
    # tallies per kind: the derivations apart, every count read off the frame
    kinds = frame.groupby("kind")["verdict"].value_counts()
    assert f"derivations: {kinds[('derivation', 'holds')]} holds;" in text
    assert f"replications: {kinds[('replication', 'agrees')]} agrees" in text
    assert f"transfers: {kinds[('transfer', 'agrees')]} agrees" in text
    assert " 0 " not in text  # verdicts no claim has are left out
    tables = sch.ledger_tables({"one": frame, "two": frame})
    assert tables.startswith("**one**: the paper's claims\n\n| Claim |")
    assert "\n\n**one**: derivations (verified identities" in tables
    assert "\n\n**two**: the paper's claims\n\n| Claim |" in tables
    assert tables.endswith(sch.ledger_counts({"one": frame, "two": frame}))
    one = tables.split("**two**")[0]
    claims, derived = one.split("**one**: derivations")
    n_derived = int((frame["kind"] == "derivation").sum())
    assert n_derived == 10 and derived.count("\n| ") == n_derived + 1
    assert claims.count("\n| ") == len(frame) - n_derived + 1 and "| holds |" not in claims
    assert tables.count("| scheel2011") == 0
    both = sch.ledger_results({**synthetic, "junk": 1}, real)
    assert set(both) == set(sch.SYNTHETIC_RESULTS) | set(real)


def test_tables_are_captioned(synthetic, real):
    styled = sch.level_summary_styled(synthetic["swap_study"], synthetic["level_counts"])
    assert "Share of items above level 0" in styled.to_html()
    means = sch.scale_means({"a": real})
    assert "Largest relative change" in sch.changes_styled(means).to_html()
    assert "Kendall τ" in sch.order_styled(means).to_html()
    html = sch.threshold_styled(sch.threshold_table()).to_html()
    assert "of the list A 3, B 0, C 4, D 1, E 2, F 0, G 1, H 4" in html
