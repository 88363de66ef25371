"""The paper's statements on data this book does not have (Bellogín, Castells & Cantador 2017:
the Last.fm side of Figs. 2, 8 and 9; the TREC, Netflix and Last.fm statistics of §5.2–5.3),
registered on :data:`recmeta.papers.bellogin2017.claims.LEDGER` last, each "not reproduced
here" with the reason, and the MovieLens analogue of §5.3's contrast with TREC as transfers.

The analogues compare the run's own counts with TREC's printed ones, with exact binomial
(Clopper–Pearson) intervals: over the liked items for the share liked by one user, over the
users for the share that likes the top item.
"""

from __future__ import annotations

from typing import Literal

from scipy import stats

from ...ledger import Estimate, Outcome, not_reproduced, sign_rule
from .claims_neutralising import LEDGER  # the other claims first
from .settings import ML1M

__all__ = ["LASTFM", "TREC", "proportion_above"]

#: §5.2: TREC (30 tracks aggregated): 87.2 % of the documents with a positive judgment have one;
#: the most judged document is relevant to 25 queries, 3.6 % of the 703
TREC = {"single": 0.872, "max queries": 25, "max share": 0.036, "queries": 703}

LASTFM = (
    "Last.fm is not available here (the paper's extract of Celma's data: about 1,000 users' "
    "music playcounts aggregated by artist, 176,892 items, a temporal split); the book holds "
    "MovieLens only"
)
_NO_ANALOGUE = (
    "; no analogue runs on our data: the chapter needs graded ratings (it refuses implicit data), "
    "and the MovieLens releases here carry no playcounts"
)


def proportion_above(
    k: int, n: int, bound: float, expected: Literal["positive", "negative"], label: str
) -> Outcome:
    """Sign rule on p − ``bound`` for a proportion k/n, with the exact binomial (Clopper–Pearson)
    95 % interval of p."""
    if n < 1 or not 0 <= k <= n:
        raise ValueError(f"need 0 <= k <= n and n >= 1, got k={k}, n={n}")
    ci = stats.binomtest(k, n).proportion_ci(confidence_level=0.95, method="exact")
    est = Estimate(
        k / n - bound,
        ci.low - bound,
        ci.high - bound,
        method=f"{k:,} of {n:,}, Clopper–Pearson 95 % interval",
    )
    return sign_rule(est, expected, label=label)


@LEDGER.claim(
    "bellogin2017.sec5.3.fewer-single-than-trec",
    statement="recommendation data are not as flat as TREC's judgments: a smaller share of the "
    "liked items is liked by a single user than TREC's 87.2 % of the relevant documents is "
    "relevant to one query",
    source="§5.2–5.3, Fig. 5 right",
    paper_value="share liked once < 0.872",
    paper_dataset=ML1M,
    rule="sign rule on (items liked by exactly one user)/(items liked at least once) − 0.872 "
    "(Clopper–Pearson interval over the liked items): negative → agrees",
    needs=("dataset", "settings", "positive_shares"),
)
def _single(r):
    x = r["positive_shares"]
    return proportion_above(
        int(x["liked once"]),
        int(x["liked items"]),
        TREC["single"],
        "negative",
        "share liked once − TREC's 0.872",
    )


@LEDGER.claim(
    "bellogin2017.sec5.3.top-above-trec",
    statement="the most liked item is liked by a larger share of the users than TREC's most "
    "judged document is relevant to (25 queries, 3.6 %)",
    source="§5.2–5.3, Fig. 5 right",
    paper_value="top share > 0.036",
    paper_dataset=ML1M,
    rule="sign rule on (users who like the most liked item)/(users) − 0.036 (Clopper–Pearson "
    "interval over the users): positive → agrees",
    needs=("dataset", "settings", "positive_shares"),
)
def _top(r):
    x = r["positive_shares"]
    return proportion_above(
        int(x["top count"]),
        int(x["users"]),
        TREC["max share"],
        "positive",
        "top item's share − TREC's 0.036",
    )


def _elsewhere(
    cid: str, statement: str, source: str, value: str, dataset: str, reason: str
) -> None:
    def evaluate(r: object) -> Outcome:
        return not_reproduced(reason)

    LEDGER.claim(
        cid,
        statement=statement,
        source=source,
        paper_value=value,
        paper_dataset=dataset,
        rule=f"none here: {reason}",
        needs=("dataset", "settings"),
    )(evaluate)


_TREC = (
    "the TREC relevance judgments of the paper's 30 tracks are not here, and the statistics are "
    "the paper's description of them, not a claim about recommendation data (the MovieLens "
    "contrast is tested by sec5.3.fewer-single-than-trec and sec5.3.top-above-trec)"
)
_elsewhere(
    "bellogin2017.sec5.3.trec-flat",
    "TREC's judgments are flat: 87.2 % of the relevant documents are relevant to one query, "
    "and none to more than 25 (3.6 % of the queries)",
    "§5.2, Fig. 5 right",
    "87.2 %; 25 (3.6 %)",
    "TREC",
    _TREC,
)
_elsewhere(
    "bellogin2017.sec5.3.netflix-lastfm-top",
    "the most liked item is liked by 20.1 % of the users in Netflix and 73 % in Last.fm",
    "§5.2, Fig. 5 right",
    "20.1 %; 73 %",
    "Netflix, Last.fm",
    "Netflix and Last.fm are not available here (the book holds MovieLens only); the MovieLens "
    "share of the same sentence is fig5.top-liked",
)
_elsewhere(
    "bellogin2017.fig2.lastfm-popularity-ar",
    "on Last.fm under AR (TI-NN, |N_u| = 2,500) popularity is the best system, at P@10 ≈ 0.35",
    "§3.3, Fig. 2 (Last.fm)",
    "popularity best; 0.35",
    "Last.fm",
    LASTFM + _NO_ANALOGUE,
)
_elsewhere(
    "bellogin2017.fig2.lastfm-ar-1r",
    "on Last.fm AR and 1R disagree on some comparisons of systems",
    "§3.3, Fig. 2 (Last.fm)",
    "some orders differ",
    "Last.fm",
    LASTFM + _NO_ANALOGUE,
)
_elsewhere(
    "bellogin2017.fig8.lastfm-u1r-random",
    "on Last.fm, where every rating is positive, popularity drops to random in U1R",
    "§6.3, Fig. 8 (Last.fm)",
    "popularity = random",
    "Last.fm",
    LASTFM
    + "; an analogue would need data whose items' share of positive ratings does not depend on "
    "their popularity (fig7.ratio-grows tests that share on ours)",
)
_elsewhere(
    "bellogin2017.fig9.lastfm-popularity-top",
    "on Last.fm (AR) bpref and infAP still rank popularity first, bpref ties random with it and "
    "stratified recall ranks random first",
    "§7, Fig. 9 (Last.fm)",
    "popularity first; random top by bpref and SRecall",
    "Last.fm",
    LASTFM + _NO_ANALOGUE,
)
