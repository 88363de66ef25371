"""The sentences of the sampled-metrics chapter's last section: the ledger's tallies, the claims
that move with the tie rule, and the claims on real data (Markdown strings, from computed values).
"""

from __future__ import annotations

import pandas as pd

from ...ledger import counts, tally_by_kind
from ...sampled import TIE_RULES
from .claims import LEDGER, PREFIX
from .movielens import RealStudy
from .paper import PAPER
from .settings import DEFAULT_TIES, TIES_PRINCIPLE, Settings

__all__ = [
    "datasets_differ_text",
    "real_claims_text",
    "tally_text",
    "tie_rule_text",
    "tie_sensitive_text",
]


def tally_text(frame: pd.DataFrame, dataset: str) -> str:
    """How many claims the ledger holds and their verdicts on one dataset, in all and per kind
    (derivation, replication, transfer)."""
    tally = ", ".join(f"{v} {k}" for k, v in counts(frame).items() if v)
    kinds = tally_by_kind(frame)
    per = "; ".join(
        f"{kind} {int(row.sum())} ({', '.join(f'{v} {k}' for k, v in row.items() if v)})"
        for kind, row in kinds.iterrows()
    )
    return f"On {dataset}: {len(frame)} claims; {tally}. By kind: {per}."


def tie_sensitive_text(frame: pd.DataFrame) -> str:
    """The claims whose verdict changes under another tie rule (the ledger's ``tie_sensitive``
    column, filled by :func:`~.claims.evaluate`)."""
    assessed = frame[frame["tie_sensitive"].notna()]
    if assessed.empty:
        return "No claim was assessed under the other tie rules (no real-data study in this run)."
    moved = assessed[assessed["tie_sensitive"].astype(bool)]
    rules = ", ".join(f"*{r}*" for r in TIE_RULES)
    head = (
        f"Under the tie rules {rules}, on the same draws, {len(moved)} of the {len(assessed)} "
        "claims change their verdict"
    )
    if moved.empty:
        return f"{head}."
    listed = "; ".join(
        f"{r.claim.removeprefix(PREFIX)} ({r.verdict} here)" for r in moved.itertuples()
    )
    return f"{head}: {listed}. The table under *How the tie rule changes the picture* has each."


def tie_rule_text(settings: Settings) -> str:
    """The run's tie rule and the principle behind the default."""
    run = (
        f"This run uses the default, *{DEFAULT_TIES}*"
        if settings.ties == DEFAULT_TIES
        else f"This run uses *{settings.ties}*; the default is *{DEFAULT_TIES}*"
    )
    return f"{run}: {TIES_PRINCIPLE}."


def datasets_differ_text(
    frame: pd.DataFrame, frame2: pd.DataFrame, dataset: str, second: str
) -> str:
    """The second dataset's tally and the claims whose verdicts differ between the two."""
    both = (
        frame.set_index("claim")["verdict"]
        .to_frame(dataset)
        .join(frame2.set_index("claim")["verdict"].rename(second))
    )
    differ = both[both[dataset] != both[second]]
    listed = (
        ": "
        + "; ".join(
            f"{c.removeprefix(PREFIX)} ({r[dataset]} / {r[second]})" for c, r in differ.iterrows()
        )
        if len(differ)
        else ""
    )
    tally = tally_text(frame2, second).removesuffix(".")
    return f"{tally}. {len(differ)} verdicts differ between the two datasets{listed}."


def real_claims_text(frame: pd.DataFrame, study: RealStudy) -> str:
    """The real-data claims that neither agree nor hold, and why our data differ from the
    paper's."""
    real_ids = [c.id for c in LEDGER if "real" in c.needs or "real_multi" in c.needs]
    real = frame[frame["claim"].isin(real_ids)]
    missed = real[~real["verdict"].isin(["agrees", "holds"])]
    tally = ", ".join(f"{v} {k}" for k, v in counts(real).items() if v)
    listed = "; ".join(f"*{r.statement}* ({r.verdict})" for r in missed.itertuples())
    rest = f"; these neither agree nor hold: {listed}" if len(missed) else ""
    return (
        f"The {len(real_ids)} claims on real data read on {study.dataset}: {tally}{rest}. The "
        "reasons are in the ledger's last column. "
        f"Our data differ from the paper's in size ({study.dataset} ranks "
        f"{study.standing.n.mean():,.0f} candidates per user on average and {study.users:,} "
        f"users, where ML-1M has {PAPER['n']:,} items and {PAPER['users']:,} users), in the "
        "users' histories, and hence in how far apart the three recommenders are. A magnitude "
        "the paper measured on ML-1M is shown beside ours on other data and not graded. When "
        "the exact metrics of two systems differ by less than the bootstrap over users can "
        "resolve, the ledger does not call any order of them right or wrong and reads "
        "inconclusive; a sampled estimator's order is judged against the exact metric of the "
        "same data, which has no sampling error."
    )
