"""The chapter's tables as it shows them: the frames of the study, formatted and captioned."""

from __future__ import annotations

import pandas as pd
from pandas.io.formats.style import Styler

from .examples import OWN_LIST
from .scales import largest_changes, order_table
from .swaps import level_summary

__all__ = ["changes_styled", "level_summary_styled", "order_styled", "threshold_styled"]


def level_summary_styled(study: pd.DataFrame, level_counts: pd.DataFrame) -> Styler:
    """:func:`~recmeta.papers.scheel2011.swaps.level_summary`, three decimals, captioned."""
    return (
        level_summary(study, level_counts)
        .style.format("{:.3f}")
        .set_caption(
            "Share of items above level 0, and each measure's mean over the swap counts ≥ 1"
        )
    )


def changes_styled(means: pd.DataFrame) -> Styler:
    """:func:`~recmeta.papers.scheel2011.scales.largest_changes` of the scale-study means, as
    percentages, captioned."""
    return (
        largest_changes(means)
        .style.format("{:.2%}")
        .set_caption("Largest relative change over the systems, against the native scale")
    )


def order_styled(means: pd.DataFrame) -> Styler:
    """:func:`~recmeta.papers.scheel2011.scales.order_table` of the scale-study means, three
    decimals, captioned."""
    return (
        order_table(means)
        .style.format("{:.3f}")
        .set_caption(
            "Kendall τ between the order of the systems on the native scale and on another"
        )
    )


def threshold_styled(table: pd.DataFrame, grades: pd.Series = OWN_LIST) -> Styler:
    """:func:`~recmeta.papers.scheel2011.examples.threshold_table` of the list ``grades``, four
    decimals, captioned with the list itself (item: grade, in ranked order)."""
    listed = ", ".join(f"{item} {grade:g}" for item, grade in grades.items())
    return table.style.format("{:.4f}").set_caption(f"AP at each threshold of the list {listed}")
