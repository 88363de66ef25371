"""The ledger's claims on MovieLens (Krichene & Rendle 2020, §6.1–6.2): the rank distributions
of Fig. 5 and the exact against the uncorrected sampled metrics of Table 3.

The claims read ``results["real"]`` (a :class:`~.movielens.RealStudy`) and
``results["settings"]``; see :mod:`.claims`.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import partial
from itertools import combinations
from typing import Any

import numpy as np

from ...ledger import Estimate, Outcome, Verdict, format_number, legacy_value_rule, sign_rule
from . import claims_example  # noqa: F401  (its claims come first in the ledger)
from .claims import LEDGER, chain, combine, exact_diff, needs_xyz, order_signs, rep_diff
from .movielens_tables import exact_means, repetitions_wide, worst_bucket
from .paper import PAPER, TOP_HEAVY

__all__: list[str] = []


# --------------------------------------------------------------------------------------------
# MovieLens (§6): rank distributions (Fig. 5)


@LEDGER.claim(
    "krichene2020.fig5.z-worst",
    statement="Z puts many held-out items in the worst bucket: over 1,600 of 6,040 users",
    source="§6.1, Fig. 5",
    paper_value="over 1600 of 6040",
    paper_dataset="ML-1M",
    rule="share of users whose rank lies in the last tenth of their list, bootstrap over users; "
    "the interval must lie above the paper's share",
    needs=("real", "settings"),
)
def _fig5_z(r: Mapping[str, Any]) -> Outcome:
    st, s = r["real"], r["settings"]
    if (no := needs_xyz(st)) is not None:
        return no
    hit = worst_bucket(st.ranks()["Z"], st.standing.n).astype(float)
    est = Estimate.bootstrap_mean(hit, s.level, s.seed, s.n_resamples, ci_method="percentile")
    return sign_rule(
        Estimate(
            est.value - PAPER["z_worst_bucket"] / PAPER["users"],
            est.low - PAPER["z_worst_bucket"] / PAPER["users"],
            est.high - PAPER["z_worst_bucket"] / PAPER["users"],
            est.method,
        ),
        "positive",
        label="our share minus the paper's",
    )


@LEDGER.claim(
    "krichene2020.fig5.x-top100",
    statement="X ranks 2,310 of 6,040 held-out items in its top 100",
    source="§6.1, Fig. 5",
    paper_value="2310 of 6040",
    paper_dataset="ML-1M",
    rule="share of users with rank ≤ 100, bootstrap over users, against 2,310/6,040 (our lists "
    "are shorter, so this share is not expected to match)",
    needs=("real", "settings"),
)
def _fig5_x_top(r: Mapping[str, Any]) -> Outcome:
    st, s = r["real"], r["settings"]
    if (no := needs_xyz(st)) is not None:
        return no
    hit = (st.ranks()["X"] <= 100).astype(float)
    est = Estimate.bootstrap_mean(hit, s.level, s.seed, s.n_resamples, ci_method="percentile")
    return legacy_value_rule(PAPER["x_top100"] / PAPER["users"], est, label="our share")


@LEDGER.claim(
    "krichene2020.fig5.x-bottom",
    statement="X puts fewer than 300 of 6,040 held-out items in the bottom half",
    source="§6.1, Fig. 5",
    paper_value="under 300 of 6040",
    paper_dataset="ML-1M",
    rule="share of users with rank above n/2, bootstrap over users; the interval must lie below "
    "the paper's share",
    needs=("real", "settings"),
)
def _fig5_x_bottom(r: Mapping[str, Any]) -> Outcome:
    st, s = r["real"], r["settings"]
    if (no := needs_xyz(st)) is not None:
        return no
    hit = (st.ranks()["X"] > st.standing.n / 2).astype(float)
    est = Estimate.bootstrap_mean(hit, s.level, s.seed, s.n_resamples, ci_method="percentile")
    p = PAPER["x_bottom_half"] / PAPER["users"]
    return sign_rule(
        Estimate(est.value - p, est.low - p, est.high - p, est.method),
        "negative",
        label="our share minus the paper's",
    )


@LEDGER.claim(
    "krichene2020.s6.1.y-profile",
    statement="Y is better than X in the top 10 but worse overall",
    source="§6.1, Fig. 5",
    paper_value="Y > X on Recall@10, Y < X on AUC",
    paper_dataset="ML-1M",
    rule="paired bootstrap of exact Recall@10 (Y − X > 0) and exact AUC (X − Y > 0)",
    needs=("real", "settings"),
)
def _y_profile(r: Mapping[str, Any]) -> Outcome:
    st, s = r["real"], r["settings"]
    if (no := needs_xyz(st)) is not None:
        return no
    return combine(
        order_signs(
            {
                "Recall@10 Y − X": exact_diff(st, "Recall@10", "Y", "X", s),
                "AUC X − Y": exact_diff(st, "AUC", "X", "Y", s),
            }
        )
    )


# §6.2: exact and sampled metrics (Table 3)


def _exact_order(metric: str, r: Mapping[str, Any]) -> Outcome:
    st, s = r["real"], r["settings"]
    if (no := needs_xyz(st)) is not None:
        return no
    return combine(chain(st, metric, "ZYX", lambda a, b: exact_diff(st, metric, a, b, s)))


for _metric in TOP_HEAVY:
    LEDGER.claim(
        f"krichene2020.s6.2.exact-order.{_metric.split('@')[0].lower()}",
        statement=f"Exact {_metric} orders Z > Y > X",
        source="§6.2, Table 3",
        paper_value="Z > Y > X",
        paper_dataset="ML-1M",
        rule="paired bootstrap over users of Z − Y and Y − X, both positive",
        needs=("real", "settings"),
    )(partial(_exact_order, _metric))


@LEDGER.claim(
    "krichene2020.s6.2.sampled-recall",
    statement="Uncorrected sampled Recall@10 orders X > Y > Z, the paper's exact order reversed",
    source="§6.2, Table 3",
    paper_value="X > Y > Z",
    paper_dataset="ML-1M",
    rule="t interval over repetitions of X − Y and Y − Z (shared negatives), both positive",
    needs=("real", "settings"),
)
def _sampled_recall(r: Mapping[str, Any]) -> Outcome:
    st, s = r["real"], r["settings"]
    if (no := needs_xyz(st)) is not None:
        return no
    return combine(
        chain(
            st, "Recall@10", "XYZ", lambda a, b: rep_diff(st, "Recall@10", "sampled", a, b, s.level)
        )
    )


@LEDGER.claim(
    "krichene2020.s6.2.x-looks-best",
    statement="X, the worst on exact NDCG@10 and AP, looks best when sampled",
    source="§6.2, Table 3",
    paper_value="X best sampled",
    paper_dataset="ML-1M",
    rule="X worst exactly (paired bootstrap) and best sampled (t interval over repetitions) on "
    "both metrics",
    needs=("real", "settings"),
)
def _x_best(r: Mapping[str, Any]) -> Outcome:
    st, s = r["real"], r["settings"]
    if (no := needs_xyz(st)) is not None:
        return no
    parts = {}
    for metric in ("NDCG@10", "AP"):
        for other in "YZ":
            parts[f"exact {metric} {other} − X"] = exact_diff(st, metric, other, "X", s)
            parts[f"sampled {metric} X − {other}"] = rep_diff(
                st, metric, "sampled", "X", other, s.level
            )
    return combine(order_signs(parts))


@LEDGER.claim(
    "krichene2020.s6.2.zy-kept",
    statement="Sampled NDCG@10 and AP keep the exact order of the two better systems, Z > Y",
    source="§6.2, Table 3",
    paper_value="Z > Y",
    paper_dataset="ML-1M",
    rule="t interval over repetitions of sampled Z − Y, positive on both metrics",
    needs=("real", "settings"),
)
def _zy(r: Mapping[str, Any]) -> Outcome:
    st, s = r["real"], r["settings"]
    if (no := needs_xyz(st)) is not None:
        return no
    return combine(
        order_signs(
            {
                f"sampled {m} Z − Y": rep_diff(st, m, "sampled", "Z", "Y", s.level)
                for m in ("NDCG@10", "AP")
            }
        )
    )


@LEDGER.claim(
    "krichene2020.s6.2.auc-consistent",
    statement="Sampled AUC orders every pair as exact AUC does",
    source="§6.2, Table 3",
    paper_value="consistent",
    paper_dataset="ML-1M",
    rule="per pair, the t interval over repetitions of the sampled difference lies on the side of "
    "the exact difference",
    needs=("real", "settings"),
)
def _auc_consistent(r: Mapping[str, Any]) -> Outcome:
    st, s = r["real"], r["settings"]
    ex = exact_means(st).loc["AUC"]
    parts = {}
    for a, b in combinations(st.systems, 2):
        hi, lo = (a, b) if ex[a] >= ex[b] else (b, a)
        parts[f"sampled AUC {hi} − {lo}"] = rep_diff(st, "AUC", "sampled", hi, lo, s.level)
    return combine(order_signs(parts))


@LEDGER.claim(
    "krichene2020.s6.2.bias-not-variance",
    statement="The sampled metrics' standard deviations are small: the problem is bias, not "
    "variance",
    source="§6.2, Table 3",
    paper_value="low sd, large bias",
    paper_dataset="ML-1M",
    rule="for every system and top-heavy metric, |mean sampled − exact| exceeds 3 standard "
    "deviations over repetitions",
    needs=("real",),
)
def _bias_not_var(r: Mapping[str, Any]) -> Outcome:
    st = r["real"]
    ex = exact_means(st)
    ratios = []
    for metric in TOP_HEAVY:
        w = repetitions_wide(st, metric, "sampled")
        for sys_ in st.systems:
            sd = float(w[sys_].std(ddof=1)) if len(w) > 1 else float("nan")
            ratios.append(
                abs(float(w[sys_].mean()) - ex.loc[metric, sys_]) / sd if sd > 0 else float("inf")
            )
    if any(np.isnan(ratios)):
        return Outcome(Verdict.NOT_REPRODUCED, None, "one repetition has no standard deviation")
    worst = min(ratios)
    return Outcome(
        Verdict.AGREES if worst > 3 else Verdict.DIFFERS,
        Estimate.point(worst, "smallest |bias| / sd over systems and metrics"),
        f"the smallest bias is {format_number(worst)} standard deviations",
    )
