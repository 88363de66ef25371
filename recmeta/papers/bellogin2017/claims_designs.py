"""The ledger's claims on the paper's definitions (Bellogín, Castells & Cantador 2017, Table 3,
Fig. 1 and Fig. 6), registered on :data:`recmeta.papers.bellogin2017.claims.LEDGER` after those
of §6–§7 (:mod:`~recmeta.papers.bellogin2017.claims_popularity`).

Each is a derivation: the chapter's builders of target sets and splits checked against the
paper's definitions written out in :mod:`~recmeta.papers.bellogin2017.designs`, on the paper's
toy example and on the run's data; a single violation fails the claim.
"""

from __future__ import annotations

from collections.abc import Mapping

import pandas as pd

from ...ledger import DERIVED, Estimate, Outcome, Verdict
from .claims_popularity import LEDGER  # the claims of §3–§7 first
from .designs import TOY_DESIGNS, toy_mismatches

__all__ = ["TABLE3_CHECKS", "count_rule", "table3_counts", "toy_rule"]

#: the definitions of Table 3 each target set is checked against (columns of ``table3_check``)
TABLE3_CHECKS = ("candidates", "relevant", "nonrelevant")


def count_rule(
    counts: Mapping[str, Mapping[str, int]], checks: tuple[str, ...], what: str
) -> Outcome:
    """An exact check over several cases (``counts``: case → check → number of violations):
    holds (agrees) when every count is 0, fails (differs) naming the first case and check that
    is not, inconclusive when there is no case to check."""
    if not counts:
        return Outcome(Verdict.INCONCLUSIVE, None, f"no {what} to check", rule="exact")
    total = sum(int(c[k]) for c in counts.values() for k in checks)
    cases = f"{len(counts)} {what}" + ("s" if len(counts) != 1 else "")
    ours = Estimate.exact(float(total), method=f"violations over {cases}")
    for case, c in counts.items():
        for k in checks:
            if int(c[k]) > 0:
                return Outcome(
                    Verdict.DIFFERS,
                    ours,
                    f"{case}: {int(c[k])} break the {k} definition ({total} violations in all)",
                    rule="exact",
                )
    return Outcome(
        Verdict.AGREES,
        ours,
        f"no violation over {cases} ({', '.join(counts)})",
        rule="exact",
    )


@LEDGER.claim(
    "bellogin2017.tab3.definitions",
    statement="the chapter's target sets follow Table 3's definitions of AI/TI, AR/1R and AN/NN",
    source="§3.1, Table 3",
    paper_value="AI: C = I; TI: C = test items; AR: T_u ⊇ PR_test(u); 1R: one relevant; "
    "AN: N_u = C ∖ PR_test(u) ∖ R_train(u); NN: |N_u| drawn from that pool",
    paper_dataset=DERIVED,
    rule="exact: on the split of the chapter's Table 3, the number of target sets breaking a "
    "definition (an item outside C; a relevant item missing, extra or not relevant; a "
    "non-relevant item outside the pool, or AN missing one, or NN holding other than "
    "min(|N_u|, pool)) must be 0 in each design built",
    needs=("dataset", "settings", "table3_check"),
)
def _tab3(r):
    return count_rule(table3_counts(r["table3_check"]), TABLE3_CHECKS, "design")


def toy_rule(mismatches: Mapping[str, str], designs: tuple[str, ...] = TOY_DESIGNS) -> Outcome:
    """Fig. 1's toy example: holds when the sets built for user u match the hand-worked sets in
    every design, fails naming the first that does not (with what was built)."""
    if not designs:
        return Outcome(Verdict.INCONCLUSIVE, None, "no design to build", rule="exact")
    ours = Estimate.exact(float(len(mismatches)), method=f"mismatching designs of {len(designs)}")
    if mismatches:
        design, built = next(iter(mismatches.items()))
        return Outcome(
            Verdict.DIFFERS,
            ours,
            f"{design} builds {built} for u, not the sets Fig. 1 describes "
            f"({len(mismatches)} of {len(designs)} designs differ)",
            rule="exact",
        )
    return Outcome(
        Verdict.AGREES,
        ours,
        f"all {len(designs)} designs build for u the sets worked out by hand from Fig. 1",
        rule="exact",
    )


@LEDGER.claim(
    "bellogin2017.fig1.toy",
    statement="on the paper's toy example the eight designs give user u the target sets the "
    "caption of Fig. 1 describes",
    source="§3.1, Fig. 1",
    paper_value="TI-AN AR: {b, c, d, e}; AI adds a; 1R: one set per liked item (d, e); "
    "NN: one of b, c (AI: a, b, c)",
    paper_dataset=DERIVED,
    rule="exact: recmeta.protocols.target_sets on the toy ratings, against u's sets worked out by "
    "hand, in each of the eight designs (an NN set may hold any item of u's pool)",
    needs=("dataset", "settings"),
)
def _fig1(r):
    return toy_rule(toy_mismatches())


_UNIFORM = ("not eta", "outside T", "training share", "not the top", "test share", "not largest")


@LEDGER.claim(
    "bellogin2017.fig6.uniform-split",
    statement="the uniform-test split gives each of the |T| most popular items exactly η test "
    "ratings and no other item any, keeps a share ε of each item's ratings for training, and "
    "takes the largest such T",
    source="§6.2, Fig. 6b",
    paper_value="|R_test(i)| = η for i ∈ T, T = {i_k : k ≤ ζ}",
    paper_dataset=DERIVED,
    rule="exact: on the run's data, the items of T without η test ratings, the items outside T "
    "with one, the items of T keeping less than ε for training, the difference between T and "
    "the |T| most popular items, |T|η < σ|R| and ζ + 1 still feasible must all be 0",
    needs=("dataset", "settings", "fig6"),
)
def _fig6b(r):
    u = r["fig6"]["uniform"]
    return count_rule({f"|T| = {u['T']}, η = {u['eta']}": u}, _UNIFORM, "split")


@LEDGER.claim(
    "bellogin2017.fig6.percentiles",
    statement="P1R's popularity percentiles cut the items by popularity rank into m groups of "
    "equal size",
    source="§6.1, Fig. 6a",
    paper_value="m percentiles I_k of |I|/m items",
    paper_dataset=DERIVED,
    rule="exact: on the run's data, a number of groups other than m, sizes more than one item "
    "apart, and neighbouring groups whose popularity ranges overlap out of order must all be 0",
    needs=("dataset", "settings", "fig6"),
)
def _fig6a(r):
    p = r["fig6"]["percentiles"]
    return count_rule({f"{p['items']} items": p}, ("strata", "sizes", "order"), "partition")


def table3_counts(frame: pd.DataFrame) -> dict[str, dict[str, int]]:
    """The ``table3_check`` frame as case → check → violations (designs with sets only)."""
    return {row["design"]: row for row in frame.to_dict("records") if row["sets"] > 0}
