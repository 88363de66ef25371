"""Bellogín, Castells & Cantador (2017), "Statistical biases in Information Retrieval metrics for
recommender systems": the statistical-biases chapter's study, ledger and prose.

- :mod:`~recmeta.papers.bellogin2017.settings`: :class:`Settings` (the chapter's parameters with
  the profile's defaults), the paper's printed values and the designs' names;
- :mod:`~recmeta.papers.bellogin2017.trials`: systems as scorers of target sets and the trials
  over random splits;
- :mod:`~recmeta.papers.bellogin2017.study`: :class:`Study`, the paper's experiments (those of
  §5–§6 in ``study_popularity``, the shared machinery in ``study_base``);
- :mod:`~recmeta.papers.bellogin2017.evidence`: protocol means with their bootstrap over users;
- :mod:`~recmeta.papers.bellogin2017.claims` (§3), ``claims_sparsity`` (§4),
  ``claims_simulation`` (§5), ``claims_popularity`` (§6–§7), ``claims_designs`` (Table 3,
  Figs. 1 and 6), ``claims_neutralising`` (more of Figs. 2, 8 and 9) and ``claims_elsewhere``
  (Last.fm, TREC, Netflix): :data:`LEDGER`, in that order; ``coverage``: what of the paper the
  ledger covers;
- :mod:`~recmeta.papers.bellogin2017.text` and ``figures``: the chapter's sentences and plots.

Importing the package registers the ledger (:func:`recmeta.papers.register`).
"""

from __future__ import annotations

from . import (  # each claims module imports the one before it, so the ledger keeps §3–§7's order
    claims_designs,
    claims_elsewhere,
    claims_neutralising,
    claims_popularity,
    claims_simulation,
    claims_sparsity,
    figures,
    tables,
    text,
)
from .claims import LEDGER, outcome
from .evidence import lift, protocol_estimate, protocol_interval, user_table
from .settings import (
    CHAPTER,
    FIG2_DESIGNS,
    FIG8_DESIGNS,
    NONPERSONALISED,
    ORACLE,
    PAPER,
    Settings,
    cost_plan,
)
from .study import Study

__all__ = [
    "CHAPTER",
    "FIG2_DESIGNS",
    "FIG8_DESIGNS",
    "LEDGER",
    "NONPERSONALISED",
    "ORACLE",
    "PAPER",
    "Settings",
    "Study",
    "claims_designs",
    "claims_elsewhere",
    "claims_neutralising",
    "claims_popularity",
    "claims_simulation",
    "claims_sparsity",
    "cost_plan",
    "figures",
    "lift",
    "outcome",
    "protocol_estimate",
    "tables",
    "text",
    "protocol_interval",
    "user_table",
]
