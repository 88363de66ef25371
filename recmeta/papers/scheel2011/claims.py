"""Scheel, Lommatzsch & Albayrak (2011), *Performance Measures for Multi-Graded Relevance*: the
claims of the multi-graded relevance chapter, as a ledger: the ledger, the paper's printed
constants and the helpers the claims share. The claims themselves are declared in
:mod:`~recmeta.papers.scheel2011.claims_artificial` and
:mod:`~recmeta.papers.scheel2011.claims_real`.

Every figure, table, numbered equation and headline claim of the paper has a row. Our copy of the
paper lost its tables and the values of its figures; where a printed value cannot be read, the
row keeps the paper's wording and says so instead of guessing a number. The paper's numbers that
can be read are the constants below; the chapter takes them from here.

The chapter passes these results (the modules of this package make them):

*Artificial data (the same for every dataset)*

- ``weights_example``: :func:`~recmeta.papers.scheel2011.measures.level_weights` of
  :data:`EQ4_EXAMPLE_LEVELS`;
- ``threshold_ap``: AP of the chapter's own 0–4 example list at each threshold (a Series);
- ``swap_study``: :func:`~recmeta.papers.scheel2011.swaps.swap_study` on integer levels, with
  thresholds;
- ``swap_study_unit``: the same study on levels spread over [0, 1];
- ``single_swaps``: :func:`~recmeta.papers.scheel2011.swaps.single_swap_scores` of one uniform
  reference;
- ``level_counts``: items per level of each reference (distribution, levels, level, items).

*Real data (one set per dataset)*

- ``scale_per_user``: :func:`~recmeta.papers.scheel2011.scales.scale_study` with
  ``per_user=True``, scales ``native`` and ``doubled`` at least;
- ``virtual_per_user``: :func:`~recmeta.papers.scheel2011.virtual.virtual_user_study` with
  ``per_user=True``, levels including ``ordinal_levels``, a larger ordinal count and the raw
  scores (``-1``);
- ``virtual_reference`` (system name), ``ordinal_levels`` (the paper's 9),
  ``candidate_scores`` (system, user, item, score), ``n_boot`` and ``seed`` (bootstrap).

Kinds: identities, constructions and enumerations are derivations (``paper_dataset=DERIVED``);
the artificial rankings and Table 2's direction are data-free settings (``data_free``, with the
reason); the claims on OHSUMED name it, and transfer to MovieLens (their magnitudes are shown,
not graded).

Uncertainty: on artificial data a normal interval from the spread over the repetitions
(:func:`recmeta.papers.scheel2011.swaps.curve_difference`); on real data a bootstrap over users
(:meth:`Estimate.bootstrap_mean`, :meth:`Estimate.bootstrap_diff`, or BC intervals of
user-resampled replicates for correlations); exact values for enumerations and identities.
Claims on every setting or measure are conjunctions under Holm (:func:`recmeta.ledger.every_sign`),
with one-sided p-values from the normal interval on artificial data and from bootstrap
replicates (:func:`recmeta.metaeval.bootstrap.sign_pvalues`) on real data. Value claims are
equivalence tests with a declared :class:`~recmeta.ledger.Margin`; "hardly differs" claims are
equivalence tests of a difference to 0 with the margin :data:`STABLE`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import replace
from functools import partial
from typing import Any

import pandas as pd

from ...book.costs import Plan, Size
from ...ledger import Estimate, Ledger, Margin, Outcome, value_rule
from .. import register
from .settings import Settings

__all__ = [
    "CHAPTER",
    "CLOSEST_STRATEGY",
    "CORRELATION_MARGIN",
    "EQ4_EXAMPLE_LEVELS",
    "EQ4_EXAMPLE_WEIGHTS",
    "EXACT",
    "IDENTITY",
    "LEDGER",
    "OHSUMED",
    "PAPER_ITEMS",
    "PAPER_MAX_SWAPS",
    "PAPER_REPETITIONS",
    "STABLE",
    "STABLE_REASON",
    "SYNTHETIC_RESULTS",
    "VIRTUAL_LEVELS",
    "VIRTUAL_USER_CORRELATION",
    "cost_plan",
    "exact_value",
    "exact_zero",
    "ledger_results",
    "normal_interval",
    "outcome",
    "planner",
    "second_plan",
    "with_reason",
]


def cost_plan(size: Size, systems: Iterable[str], *, repetitions: int) -> Plan:
    """The steps of the real-data sections on a dataset of ``size`` that :mod:`recmeta.book.costs`
    can estimate: the runs of ``systems`` on the per-user holdout."""
    return (
        Plan(size)
        .runs(list(systems))
        .unmodelled(
            f"the artificial rankings ({repetitions} per swap count; they do not "
            "depend on the dataset) and the bootstrap intervals"
        )
    )


def planner(settings: Settings) -> Callable[[Size], Plan]:
    """:func:`cost_plan` with the chapter's systems and repetitions, as
    :meth:`recmeta.book.chapters.Execution.estimate` takes it."""
    return partial(cost_plan, systems=settings.systems, repetitions=settings.repetitions)


def second_plan(
    settings: Settings, frames: Mapping[str, pd.DataFrame]
) -> tuple[str, pd.DataFrame, Callable[[Size], Plan]] | None:
    """The second dataset's part of the cost estimate (name, ratings, plan), or ``None``."""
    if settings.second is None:
        return None
    return settings.second, frames[settings.second], planner(settings)


def ledger_results(results: Mapping[str, Any], real: Mapping[str, Any]) -> dict[str, Any]:
    """What the ledger reads for one dataset: the artificial results of ``results``
    (:data:`SYNTHETIC_RESULTS`) and that dataset's real-data results ``real``."""
    return {**{k: results[k] for k in SYNTHETIC_RESULTS}, **real}


CHAPTER = "multigraded-relevance"

#: the artificial study (sec. 2.1): items per reference, largest swap count, rankings per count
PAPER_ITEMS = 100
PAPER_MAX_SWAPS = 99
PAPER_REPETITIONS = 100

#: the worked example of eq. 4 (sec. 3.1): three levels and the weights of the two thresholds
EQ4_EXAMPLE_LEVELS = (0.0, 0.3, 1.0)
EQ4_EXAMPLE_WEIGHTS = (0.3, 0.7)

#: the OHSUMED collection as LETOR provides it (sec. 2.2)
OHSUMED = {"queries": 106, "strategies": 25, "shown": 8, "levels": 3}

#: levels of the two virtual users (sec. 2.2): strategy 1 (TF of title), strategy 9 (TF-IDF)
VIRTUAL_LEVELS = {"strategy 1 (TF of title)": 9, "strategy 9 (TF-IDF of title)": 158}

#: Pearson's correlation of the two virtual users' relevance scores (sec. 2.2), printed as 0.96
VIRTUAL_USER_CORRELATION = 0.96
#: its equivalence margin: the printed rounding and a substantive part read as shared variance
CORRELATION_MARGIN = Margin.printed(
    VIRTUAL_USER_CORRELATION,
    0.025,
    "r within 0.025 of 0.96 keeps the shared variance r² within ±0.05 of the paper's 0.92",
)

#: the strategy every measure finds closest to the reference strategy 1 (sec. 4, Fig. 7)
CLOSEST_STRATEGY = "strategy 9 (TF-IDF of title)"

#: "does not differ much": within half a grid step of the paper's figures, whose value axes
#: have a line every 0.1 (Figs. 4–8): the equivalence margin of the "stable" claims
STABLE = 0.05
#: why that margin, in one line
STABLE_REASON = (
    "the paper reads 'almost independent' off figures gridded every 0.1; "
    "half a grid step is what such a reading cannot see"
)

#: the results on artificial data: the same for every dataset
SYNTHETIC_RESULTS = (
    "weights_example",
    "threshold_ap",
    "swap_study",
    "swap_study_unit",
    "single_swaps",
    "level_counts",
)

#: tolerance of identities that hold exactly up to floating-point rounding
EXACT = 1e-9
#: the margin of an identity: floating-point rounding only
IDENTITY = Margin(0.0, EXACT, "an identity: only floating-point rounding may separate the sides")

_Z95 = 1.959963984540054  # scipy.stats.norm.ppf(0.975)

LEDGER = register(
    Ledger(
        CHAPTER,
        paper="scheel2011multigraded",
        title="Multi-graded relevance (Scheel, Lommatzsch & Albayrak 2011)",
    )
)


# --------------------------------------------------------------------------------------------
# helpers


def normal_interval(value: float, se: float, what: str) -> Estimate:
    """``value ± 1.96 se``: a normal 95 % interval."""
    return Estimate(
        value,
        value - _Z95 * se,
        value + _Z95 * se,
        f"normal interval, 95 %, from the spread over {what}",
    )


def with_reason(out: Outcome, extra: str, detail: str | None = None) -> Outcome:
    """``out`` with ``extra`` appended to its reason (and ``detail`` if given); its rule and
    margin are kept."""
    return replace(out, reason=f"{out.reason}; {extra}", detail=detail or out.detail)


def exact_value(paper: float, value: float, label: str, method: str = "exact") -> Outcome:
    """An identity: ``value`` (computed exactly) equals ``paper`` within :data:`IDENTITY`
    (:func:`~recmeta.ledger.value_rule` on a zero-width interval), under the rule name
    ``identity``."""
    out = value_rule(paper, Estimate.exact(value, method), IDENTITY, label=label)
    return replace(out, rule="identity")


def exact_zero(value: float, label: str) -> Outcome:
    """Agrees when ``value`` is 0 within :data:`EXACT` (an identity that holds exactly)."""
    return exact_value(0.0, value, label, "exact (no sampling)")


# --------------------------------------------------------------------------------------------
# reading one claim


def outcome(claim_id: str, results: Mapping[str, Any]) -> Outcome:
    """The outcome of one claim of the ledger on ``results`` (the id with or without the
    ``scheel2011.`` prefix)."""
    key = claim_id if claim_id.startswith("scheel2011.") else f"scheel2011.{claim_id}"
    return LEDGER[key].outcome(results)
