"""The ledger: claims as code, our estimates, the verdict rules, and the stored tables.

- :mod:`~recmeta.ledger.estimate`: :class:`Estimate` (our value and its interval) and number
  formatting;
- :mod:`~recmeta.ledger.rules`: :class:`Verdict`, :class:`Outcome` and the rules that give them;
- :mod:`~recmeta.ledger.kinds`: derivation, replication or transfer, from the claim's and the
  run's datasets;
- :mod:`~recmeta.ledger.order`: orders written as groups the intervals separate;
- :mod:`~recmeta.ledger.coverage`: which figures, tables and equations of a paper the claims cover;
- :mod:`~recmeta.ledger.claims`: :class:`Claim` and :class:`Ledger`;
- :mod:`~recmeta.ledger.table`: the ledger as a table and its Markdown;
- :mod:`~recmeta.ledger.store`: evaluated ledgers on disk, for ``recmeta claims``;
- :mod:`~recmeta.ledger.page`: the book's "Replication ledger" page;
- :mod:`~recmeta.ledger.prose`: the scanner that finds numbers typed into a chapter's text.

The papers' own ledgers live with their studies in :mod:`recmeta.papers`.
"""

from __future__ import annotations

from .claims import PROFILES, Claim, Ledger, MissingResult
from .estimate import Estimate, format_estimate, format_number, format_paper
from .every import SignPart, every, every_sign, some
from .kinds import DERIVED, Kind, dataset_identity, kind_of
from .order import format_order, order_groups
from .rules import (
    MEANING,
    Margin,
    Outcome,
    Verdict,
    all_of,
    clearly_above,
    equivalence_rule,
    half_unit,
    not_reproduced,
    order_rule,
    rank_range,
    rank_rule,
    sign_rule,
    top_set,
    value_rule,
)
from .table import (
    COLUMNS,
    PARTS,
    counts,
    ours_text,
    paper_text,
    row_of,
    sentence,
    tally_by_kind,
    to_markdown,
)

__all__ = [
    "PROFILES",
    "Estimate",
    "Verdict",
    "Outcome",
    "Claim",
    "Ledger",
    "MissingResult",
    "COLUMNS",
    "value_rule",
    "Margin",
    "MEANING",
    "every",
    "every_sign",
    "SignPart",
    "some",
    "Kind",
    "DERIVED",
    "dataset_identity",
    "kind_of",
    "order_groups",
    "format_order",
    "sign_rule",
    "order_rule",
    "rank_rule",
    "rank_range",
    "clearly_above",
    "top_set",
    "not_reproduced",
    "all_of",
    "equivalence_rule",
    "half_unit",
    "format_number",
    "format_estimate",
    "format_paper",
    "ours_text",
    "paper_text",
    "to_markdown",
    "counts",
    "row_of",
    "tally_by_kind",
    "sentence",
    "PARTS",
]
