"""Valcarce et al. (2018): every sentence the chapter prints that is built from computed values.

Each function takes the study's results (:func:`~recmeta.papers.valcarce2018.study.study`)
and/or the evaluated ledger frame and returns Markdown. A claim is cited through the ledger's
one renderer, :func:`recmeta.ledger.sentence`, so a re-run on other data can leave no number or
verdict of another run behind.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pandas as pd

from ...ledger import (
    MEANING,
    Kind,
    Verdict,
    dataset_identity,
    format_number,
    kind_of,
    row_of,
    sentence,
)
from ...ledger.table import tally_by_kind
from ...metaeval.significance import monte_carlo_se
from .tables import deep_measures, dp_by_test
from .values import (
    LABELS,
    PAPER_CUTOFF_DEEP,
    PAPER_CUTOFF_LOWEST,
    PAPER_CUTOFF_MOST,
    PAPER_DEEP_DP,
    PAPER_EPSILON,
    PAPER_FIG5,
    PAPER_FIG5_LOW,
    PAPER_HALF_SPARSITY,
    PAPER_MC_ERROR,
    PAPER_NDCG_CUTOFF_MIN,
    PAPER_PAIRS,
    PAPER_PERMUTATIONS,
    PAPER_SYSTEMS,
    PAPER_TABLE2,
    PAPER_TABLE3,
)

__all__ = [
    "cite",
    "cutoff_agreement",
    "cutoff_dp",
    "cutoff_robustness",
    "data_facts",
    "differences",
    "infap",
    "legend",
    "masks",
    "metric_agreement",
    "metric_dp",
    "metric_dp_order",
    "metric_robustness",
    "monte_carlo",
    "second_dataset",
    "source_data",
    "tally",
    "undefined_pvalues",
]

_ID = "valcarce2018."
#: a claim's result with its verdict; with the paper's value; with the verdict's reason
OURS = ("ours", "verdict")
PAPER = ("paper", "ours", "verdict")
WHY = ("ours", "verdict", "reason")


def cite(ledger: pd.DataFrame, claim: str, parts: tuple[str, ...] = OURS) -> str:
    """One claim of the evaluated ``ledger`` as a sentence (:func:`recmeta.ledger.sentence`);
    ``claim`` may leave out the ``valcarce2018.`` prefix."""
    full = claim if claim.startswith(_ID) else _ID + claim
    return sentence(row_of(ledger, full), parts)


def _users_share(results: Mapping[str, Any]) -> float:
    return results["data"]["users"] / PAPER_TABLE2["ML-1M"]["users"]


def data_facts(results: Mapping[str, Any]) -> str:
    """The dataset against ML-1M, the systems, the evaluated users and the test-only items."""
    facts, ml1m, dataset = results["data"], PAPER_TABLE2["ML-1M"], results["dataset"]
    left = (
        f" Left out because they learn from rating values: {', '.join(results['left_out'])}."
        if results["left_out"]
        else ""
    )
    return (
        f"On {dataset}: {facts['users']:,} users, {facts['items']:,} items and "
        f"{facts['ratings']:,} ratings ({_users_share(results):.0%} of ML-1M's users and "
        f"{facts['ratings'] / ml1m['ratings']:.0%} of its ratings), and "
        f"{len(results['systems'])} systems against the paper's {PAPER_SYSTEMS}.{left} "
        f"{results['n_evaluated']:,} of the {results['n_users']:,} test users have a relevant "
        f"test item and are evaluated. {facts['test_only_ratings']:,} test ratings "
        f"({facts['test_only_ratings'] / results['n_test']:.1%} of them) are of "
        f"{facts['test_only_items']:,} items that appear only in the test set and that no system "
        f"can therefore recommend."
    )


def source_data(dataset: str) -> str:
    """Whether the chapter's data are the paper's ML-1M (a replication) or other data (a
    transfer), and what that means for the paper's numbers."""
    if kind_of("ML-1M", None, dataset) is Kind.REPLICATION:
        return (
            f"The chapter runs on {dataset_identity(dataset)}, the paper's first dataset, with our "
            "roster instead of the paper's 21 recommenders: its values on ML-1M are graded "
            "against ours."
        )
    return (
        f"The chapter runs on {dataset_identity(dataset)}, not on the paper's ML-1M, so every "
        "number below comes from these data and our roster: the paper's values are shown beside "
        "ours and not graded, and only its directions, orders and signs are."
    )


def infap(results: Mapping[str, Any]) -> str:
    """trec_eval's infAP (equal to AP) against eq. 8's, and what the paper's numbers imply."""
    gap, deep = results["infap"], results["deep"]
    return (
        f"At @{deep}, trec_eval's infAP differs from AP by at most {gap['trec_gap_max']:.1e} for "
        f"any user (ε of eq. 8 is {PAPER_EPSILON:.0e}), while eq. 8's infAP differs from AP by "
        f"{gap['pooled_gap_mean']:.3f} on average per user (means {gap['pooled_mean']:.3f} "
        f"against {gap['ap_mean']:.3f}). The paper's infAP behaves unlike its MAP: τ = "
        f"{PAPER_FIG5['ML-1M'].at['infAP', 'AP']:.2f} between them in its Fig. 5a, DP "
        f"{PAPER_TABLE3.at['ML-1M', 'infAP']:g} against {PAPER_TABLE3.at['ML-1M', 'AP']:g} in "
        f"its Table 3 — which only eq. 8's reading allows."
    )


def cutoff_agreement(results: Mapping[str, Any], ledger: pd.DataFrame) -> str:
    """§6, Fig. 1: the paper's τ among cut-offs and our claims about them."""
    lo, deep = min(results["cutoffs"]), results["deep"]
    lines = [
        (
            f"On ML-1M the paper finds most correlations among cut-offs above "
            f"{PAPER_CUTOFF_MOST:.2f}, the lowest ({PAPER_CUTOFF_LOWEST:.2f}) between @5 and "
            f"@100 of precision and of recall, and for nDCG nothing below "
            f"{PAPER_NDCG_CUTOFF_MIN:.2f}; on LibraryThing and BeerAdvocate, τ among cut-offs of "
            f"20 and more is almost always above {PAPER_CUTOFF_DEEP:.1f}. Ours on "
            f"{results['dataset']} (bootstrap intervals over users):"
        ),
        "",
        (
            f"- τ(P@{lo}, P@{deep}): {cite(ledger, 's6.p-5-100', PAPER)} "
            f"τ(Recall@{lo}, Recall@{deep}): {cite(ledger, 's6.r-5-100', PAPER)}"
        ),
        (
            f"- Is @{lo}–@{deep} the pair of cut-offs that agrees least? Precision: "
            f"{cite(ledger, 's6.p-lowest-pair', ('verdict', 'reason'))} Recall: "
            f"{cite(ledger, 's6.r-lowest-pair', ('verdict', 'reason'))}"
        ),
        (
            f"- The smallest τ among nDCG's cut-offs: {cite(ledger, 'fig1.ndcg-min', PAPER)} "
            f"τ(nDCG@{lo}, nDCG@{deep}): {cite(ledger, 'fig1.ndcg-5-100', PAPER)}"
        ),
        (
            f"- The share of pairs of cut-offs with τ above {PAPER_CUTOFF_MOST:.2f}: "
            f"{cite(ledger, 's6.most-above-0.85')} Among cut-offs of 20 and more, the share "
            f"above {PAPER_CUTOFF_DEEP:.1f}: {cite(ledger, 's6.deep-above-0.9')}"
        ),
    ]
    return "\n".join(lines)


def masks(results: Mapping[str, Any]) -> str:
    """How many incomplete test sets, and how many ratings the smallest popularity mask keeps."""
    kept = results["popularity"].drop_duplicates("mask")
    smallest = kept.loc[kept["share"].idxmin()]
    return (
        f"{results['sparsity']['mask'].nunique()} random test sets and {len(kept)} popularity "
        f"test sets, {len(results['systems'])} systems, {len(results['measures'])} measures. "
        f"Keeping the {smallest['share']:.0%} least popular test items keeps "
        f"{smallest['kept_rows']:.0%} of the test ratings."
    )


def cutoff_robustness(ledger: pd.DataFrame) -> str:
    """§6, Figs. 2–3: deeper cut-offs more robust, for nDCG and for all metrics."""
    return "\n".join(
        [
            f"- nDCG, sparsity: {cite(ledger, 'fig2.ndcg-deeper-robust', ('verdict', 'reason'))}",
            f"- nDCG, popularity: {cite(ledger, 'fig3.ndcg-deeper-robust', ('verdict', 'reason'))}",
            f"- All metrics, sparsity: {cite(ledger, 'fig2.all-deeper-robust', WHY)}",
            f"- All metrics, popularity: {cite(ledger, 'fig3.all-deeper-robust', WHY)}",
        ]
    )


def monte_carlo(results: Mapping[str, Any], ledger: pd.DataFrame) -> str:
    """§4: the paper's quoted Monte-Carlo errors against the standard error of a two-sided
    p-value (√(p(2−p)/B)), and our exact check."""
    b = PAPER_PERMUTATIONS
    se05, se01 = (float(monte_carlo_se(p, b, doubled=True)) for p in (0.05, 0.01))
    check = results["mc_check"]
    return (
        f"With the paper's $B$ = {b:,}, the standard error of a two-sided p-value taken as "
        f"twice a one-sided share is {se05:.4f} at p = 0.05 and "
        f"{se01:.5f} at p = 0.01; the paper's ±{PAPER_MC_ERROR[0.05]:g} and "
        f"±{PAPER_MC_ERROR[0.01]:g} are {PAPER_MC_ERROR[0.05] / se05:.1f} and "
        f"{PAPER_MC_ERROR[0.01] / se01:.1f} of these standard errors. At p = 0.05: "
        f"{cite(ledger, 's4.mc-error-p05', WHY)} At p = 0.01: "
        f"{cite(ledger, 's4.mc-error-p01', WHY)} A check against exact "
        f"enumeration, on {check['users']} random users of the two closest systems by "
        f"{check['measure']} ({check['a']} and {check['b']}): exact p = {check['exact']:.5f}, "
        f"Monte-Carlo p with B = {check['n_permutations']:,} is {check['mc']:.5f}, "
        f"{(check['mc'] - check['exact']) / max(check['se'], 1e-12):+.1f} standard errors "
        f"away. {cite(ledger, 's4.monte-carlo', ('verdict', 'reason'))}"
    )


def _span(few: int, many: int) -> str:
    """``"between 3 and 5"``, or ``"all 5"``/``"5"`` when the range is one number."""
    return f"between {few} and {many}" if few < many else str(many)


def _significant_range(results: Mapping[str, Any]) -> tuple[int, int]:
    sig = results["significant"][deep_measures(results)]
    return int(sig.min()), int(sig.max())


def cutoff_dp(results: Mapping[str, Any], ledger: pd.DataFrame, dp: pd.DataFrame) -> str:
    """§6, Fig. 4: deeper cut-offs discriminate more; ``dp`` from
    :func:`.tables.dp_by_cutoff`."""
    lo, deep, n_pairs = min(results["cutoffs"]), results["deep"], results["n_pairs"]
    ndcg = dp[dp["metric"] == "nDCG"].set_index("cut-off")["DP"]
    few, many = _significant_range(results)
    lines = [
        (
            f"- nDCG, DP@{lo} minus DP@{deep} (DP {ndcg[lo]:.3g} at @{lo}, {ndcg[deep]:.3g} "
            f"at @{deep}): {cite(ledger, 'fig4.ndcg-deeper-dp')}"
        ),
        (
            f"- nDCG, every cut-off above {PAPER_DEEP_DP} against every one up to it: "
            f"{cite(ledger, 'fig4.ndcg-above-50')}"
        ),
        f"- All metrics: {cite(ledger, 'fig4.all-deeper-dp', WHY)}",
        (
            f"- DP sums the p-values of all pairs, so the pairs that are close to each other "
            f"weigh most: at @{deep}, {_span(few, many)} of the {n_pairs} pairs stay "
            f"significant after Holm's correction"
            + (", depending on the metric" if few < many else ", for every metric")
            + (
                ", and the few remaining pairs decide DP."
                if few < n_pairs
                else ", and DP is a sum of small p-values only."
            )
        ),
    ]
    return "\n".join(lines)


def metric_agreement(results: Mapping[str, Any], ledger: pd.DataFrame) -> str:
    """§7, Fig. 5: τ among metrics, the paper's and ours."""
    lines = [
        (
            f"The paper sees MRR apart from the other metrics, MAP close to nDCG on all three "
            f"datasets, some τ below {PAPER_FIG5_LOW:.1f} on ML-1M and BeerAdvocate, and every "
            f"τ above {PAPER_CUTOFF_DEEP:.1f} on LibraryThing. Ours on {results['dataset']}:"
        ),
        "",
        f"- τ(MAP, nDCG): {cite(ledger, 'fig5.ap-ndcg', PAPER)}",
        f"- τ(P, MRR), the lowest of Fig. 5a: {cite(ledger, 'fig5.p-rr', PAPER)}",
        f"- τ(MAP, infAP): {cite(ledger, 'fig5.ap-infap', PAPER)}",
        (
            f"- The metric furthest from the others, by mean τ with the others, lowest first: "
            f"{cite(ledger, 'fig5.mrr-apart', WHY)}"
        ),
        f"- The smallest τ between two metrics: {cite(ledger, 'fig5.some-below-0.8')}",
    ]
    return "\n".join(lines)


def metric_robustness(ledger: pd.DataFrame) -> str:
    """§7, Figs. 6–7: which metric is most and least robust to each bias."""
    why = ("verdict", "reason")

    def order(claim: str) -> str:
        return str(row_of(ledger, _ID + claim)["ours_text"])

    lines = [
        (
            f"- Every metric above {PAPER_HALF_SPARSITY:.1f} at half of the ratings: "
            f"{cite(ledger, 'fig6.half-above-0.9', WHY)}"
        ),
        (
            f"- Sparsity, order by mean τ: {order('s7.p-most-robust')}. Precision the most "
            f"robust: {cite(ledger, 's7.p-most-robust', why)} Precision and nDCG the two most "
            f"robust: {cite(ledger, 'fig6.p-ndcg-lead', why)} bpref the least robust, infAP "
            f"and MRR next: {cite(ledger, 'fig6.bpref-least', why)}"
        ),
        (
            f"- Popularity, order by mean τ: {order('fig7.p-most-robust')}. Precision the most "
            f"robust: {cite(ledger, 'fig7.p-most-robust', why)} MRR the least robust: "
            f"{cite(ledger, 'fig7.mrr-least', why)}"
        ),
    ]
    return "\n".join(lines)


def undefined_pvalues(results: Mapping[str, Any]) -> str:
    """A note when some t-test or Wilcoxon p-values at the deepest cut-off are undefined."""
    pvals = results["pvalues"]
    n = int(pvals.loc[pvals["metric"].isin(deep_measures(results)), "p"].isna().sum())
    return (
        f"{n} t-test or Wilcoxon p-values undefined (identical pairs) are left out of their sums."
        if n
        else ""
    )


def metric_dp_order(ledger: pd.DataFrame) -> str:
    """The metrics ordered by DP, lowest first, as groups the intervals separate: the order the
    ledger's ``tab3.ndcg-best`` wrote with :func:`recmeta.ledger.format_order`."""
    return str(row_of(ledger, _ID + "tab3.ndcg-best")["ours_text"])


def metric_dp(results: Mapping[str, Any], ledger: pd.DataFrame) -> str:
    """§7, Fig. 8 and Table 3: the most and least discriminative metrics, and how far the
    t-test and the Wilcoxon test move DP from the permutation test's."""
    deep = results["deep"]
    pvals = results["pvalues"]
    at = pvals[pvals["metric"].isin(deep_measures(results))]
    pair_p = at.pivot_table(index=["metric", "a", "b"], columns="test", values="p")
    t_gap = (pair_p["t"] - pair_p["permutation"]).abs().max()
    by_test = dp_by_test(results)
    w_gap = (by_test["wilcoxon"] - by_test["permutation"]).abs().sort_values(ascending=False)
    first, second = (LABELS[m.split("@")[0]] for m in w_gap.index[:2])
    order = metric_dp_order(ledger)
    why = ("verdict", "reason")
    dp_gap = (by_test["t"] - by_test["permutation"]).abs().max()
    lines = [
        (
            f"- Ordered by DP (lowest, most discriminative, first): {order}. nDCG the most "
            f"discriminative: {cite(ledger, 'tab3.ndcg-best', why)} nDCG and precision the two "
            f"most discriminative: {cite(ledger, 'tab3.ndcg-p-lead', why)} MRR the least "
            f"discriminative: {cite(ledger, 'tab3.mrr-worst', ('verdict',))}"
        ),
        (
            f"- bpref above the median DP: {cite(ledger, 'tab3.bpref-poor')} infAP above the "
            f"median DP: {cite(ledger, 'tab3.infap-poor')}"
        ),
        (
            f"- Rescaled to {PAPER_PAIRS} pairs, our DP of nDCG: "
            f"{cite(ledger, 'tab3.ml1m.ndcg', PAPER)} Of precision: "
            f"{cite(ledger, 'tab3.ml1m.p', PAPER)}"
        ),
        (
            f"- With {results['n_evaluated']:,} evaluated users, the p-values of the paired "
            f"t-test and of the permutation test differ by at most {format_number(t_gap)} for "
            f"any pair and metric at @{deep}, so their DP differ by {format_number(dp_gap)} at "
            "most; the Wilcoxon test, "
            f"which compares signed ranks rather than means, moves DP most for {first} and "
            f"{second}."
        ),
    ]
    return "\n".join(lines)


def second_dataset(second: Mapping[str, Any], ledger: pd.DataFrame, ledger2: pd.DataFrame) -> str:
    """The second dataset's size and how many claims get the same verdict on both."""
    first, other = ledger.set_index("claim")["verdict"], ledger2.set_index("claim")["verdict"]
    empirical = ledger.set_index("claim")["kind"].ne(Kind.DERIVATION.value)
    ungraded = {Verdict.NOT_REPRODUCED.value, Verdict.NOT_GRADED.value}
    tested = ~first.isin(ungraded) & ~other.isin(ungraded) & empirical
    same = (first == other) & tested
    facts = second["data"]
    return (
        f"{second['dataset']}: {facts['users']:,} users, {facts['items']:,} items, "
        f"{facts['ratings']:,} ratings; {len(second['systems'])} systems, "
        f"{second['n_evaluated']:,} evaluated users. Of the {int(tested.sum())} empirical "
        f"claims graded on both datasets, {int(same.sum())} get the same verdict on both."
    )


def differences(results: Mapping[str, Any]) -> str:
    """Where and why our setup differs from the paper's: data, systems, runs, infAP."""
    facts, ml1m = results["data"], PAPER_TABLE2["ML-1M"]
    names, deep, n_pairs = results["systems"], results["deep"], results["n_pairs"]
    few, many = _significant_range(results)
    fewer = facts["users"] < ml1m["users"]
    lines = [
        (
            f"- **The data.** {results['dataset']} has {_users_share(results):.0%} of ML-1M's "
            f"users ({facts['users']:,} against {ml1m['users']:,})"
            + (
                ", so every system mean is noisier and every paired test has less power than "
                "on ML-1M."
                if fewer
                else ", so its system means are less noisy and its paired tests more powerful "
                "than ML-1M's."
            )
            + (
                " Its feedback is implicit: nothing is judged non-relevant, so the claims about "
                "bpref and infAP are not reproduced."
                if results["implicit"]
                else ""
            )
        ),
        (
            f"- **The systems.** Our {len(names)} systems form {n_pairs} pairs, against the "
            f"paper's {PAPER_SYSTEMS} systems and {PAPER_PAIRS} pairs. At @{deep}, "
            f"{_span(few, many)} of our pairs are significant after Holm's correction "
            f"({many / n_pairs:.0%} at most; the paper does not report its share), and τ moves "
            f"in steps of {4 / (len(names) * (len(names) - 1)):.3f}."
        ),
        (
            f"- **The runs.** Our lists rank the items seen in training, so "
            f"{facts['test_only_items']:,} items that appear only in the test set "
            f"({facts['test_only_ratings']:,} test ratings) are never recommended; the paper's "
            f"AllItems ranks every item of the dataset."
        ),
        (
            f"- **infAP.** Ours follows the paper's eq. 8: it differs from AP by "
            f"{results['infap']['pooled_gap_mean']:.3f} per user on average, where trec_eval's "
            f"reading would repeat MAP (at most {results['infap']['trec_gap_max']:.1e} away)."
        ),
    ]
    return "\n".join(lines)


def tally(frames: Mapping[str, pd.DataFrame]) -> str:
    """The number of claims per kind and verdict on each dataset (verdicts with no claim left
    out)."""

    def one(frame: pd.DataFrame) -> str:
        table = tally_by_kind(frame)
        parts = []
        for kind, row in table.iterrows():
            held = ", ".join(f"{n} {verdict}" for verdict, n in row.items() if n)
            n = int(row.sum())
            parts.append(f"{n} {kind}{'s' if n != 1 else ''} ({held})")
        return "; ".join(parts)

    return " ".join(
        f"On {name}, the {len(frame)} claims: {one(frame)}." for name, frame in frames.items()
    )


def legend() -> str:
    """What each verdict of the ledger means (:data:`recmeta.ledger.MEANING`), as a list."""
    return "\n".join(f"- *{v.value}*: {MEANING[v]}." for v in Verdict)
