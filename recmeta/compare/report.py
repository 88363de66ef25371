"""The report of :func:`~recmeta.compare.compare`: a :class:`Comparison` and its views.

Frames for a program (``summary``, ``pairs``, ``references``, ``power``, ``coverage``,
``sampled``), formatted tables for a reader (:meth:`Comparison.table`,
:meth:`~Comparison.pairs_table`, :meth:`~Comparison.power_table`), Markdown and LaTeX for a
paper, a method paragraph (:meth:`~Comparison.describe`) and figures (:mod:`.figures`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from . import figures
from .formatting import CORRECTION_NAMES, TEST_NAMES, interval_columns, markdown_table, tex

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = ["Comparison"]


@dataclass
class Comparison:
    """The report of :func:`compare`. Frames:

    * ``summary`` — one row per (metric, system): mean, sd, users, t and bootstrap interval
      ends, users with an empty list, compact letters;
    * ``pairs`` — one row per (metric, a, b): mean difference and standardised mean difference
      with their intervals, p-values (permutation, t, Wilcoxon, Tukey HSD), Holm- and BH-adjusted
      p-values of the deciding test, the decision, and the users needed to detect the observed
      difference;
    * ``references`` — random (expected) and popularity values per metric (empty without
      training data);
    * ``power`` — per metric: pooled sd of a paired difference, users, the difference detectable
      with them, and the users needed for ``difference``;
    * ``coverage`` — per system: evaluated users and users without a list;
    * ``sampled`` — with sampled candidates, the uncorrected and corrected means.

    ``scores`` maps each metric to its systems × users matrix (the evaluated users ``users``).
    """

    systems: list[str]
    metrics: list[str]
    users: pd.Index
    scores: dict[str, np.ndarray]
    summary: pd.DataFrame
    pairs: pd.DataFrame
    references: pd.DataFrame
    power: pd.DataFrame
    coverage: pd.DataFrame
    settings: dict[str, Any]
    notes: list[str] = field(default_factory=list)
    sampled: pd.DataFrame | None = None

    # ------------------------------------------------------------------ views
    def __repr__(self) -> str:
        return (
            f"Comparison({len(self.systems)} systems, {len(self.metrics)} metrics, "
            f"{len(self.users)} users)"
        )

    def to_frame(self) -> pd.DataFrame:
        """The per-system table (``summary``), one row per metric and system."""
        return self.summary.copy()

    def reference(self, metric: str, which: str) -> float:
        """The ``"random"`` or ``"popularity"`` reference value of ``metric`` (NaN if absent)."""
        r = self.references
        hit = r[(r["metric"] == metric) & (r["reference"] == which)]
        return float(hit["value"].iloc[0]) if len(hit) else float("nan")

    def significant(self, metric: str | None = None) -> pd.DataFrame:
        """Square boolean frame: is the pair significantly different (the deciding p-value)."""
        metric = self._metric(metric)
        out = pd.DataFrame(False, index=self.systems, columns=self.systems)
        p = self.pairs[self.pairs["metric"] == metric]
        for a, b, s in zip(p["a"], p["b"], p["significant"], strict=True):
            out.loc[a, b] = out.loc[b, a] = bool(s)
        return out

    def p_matrix(self, metric: str | None = None) -> pd.DataFrame:
        """Square frame of the deciding (adjusted) p-values; NaN on the diagonal."""
        metric = self._metric(metric)
        out = pd.DataFrame(np.nan, index=self.systems, columns=self.systems)
        p = self.pairs[self.pairs["metric"] == metric]
        for a, b, v in zip(p["a"], p["b"], p["p_decision"], strict=True):
            out.loc[a, b] = out.loc[b, a] = v
        return out

    def letters(self, metric: str | None = None) -> pd.Series:
        """Each system's compact letters for ``metric`` (shared letter: not significant)."""
        metric = self._metric(metric)
        s = self.summary[self.summary["metric"] == metric]
        return pd.Series(s["letters"].to_numpy(), index=s["system"].to_numpy(), name=metric)

    def ranking(self, metric: str | None = None) -> list[str]:
        """Systems by decreasing mean of ``metric``."""
        metric = self._metric(metric)
        s = self.summary[self.summary["metric"] == metric]
        return list(s.sort_values("mean", ascending=False, kind="stable")["system"])

    def describe(self) -> str:
        """One paragraph stating how the comparison was made (for a paper's method section)."""
        s = self.settings
        interval = (
            f"{s['confidence']:.0%} intervals by the bootstrap over users "
            f"({s['bootstrap_method']}, {s['n_bootstrap']:,} resamples)"
        )
        tests = (
            f"paired permutation tests ({s['n_permutations']:,} random permutations), "
            "paired t and Wilcoxon signed-rank tests"
        )
        if s["n_tukey"]:
            tests += f", and the randomised Tukey HSD test ({s['n_tukey']:,} permutations)"
        decide = TEST_NAMES[s["p_value"]]
        corr = (
            ""
            if s["p_value"] == "tukey" or s["correction"] == "none"
            else f" with {CORRECTION_NAMES[s['correction']]}'s correction over the pairs of "
            "each metric"
        )
        text = (
            f"{len(self.systems)} systems on {len(self.users):,} users with at least one "
            f"relevant test item; {interval}; {tests}. A difference is called significant "
            f"when the {decide}{corr} gives p ≤ {s['alpha']:g}."
        )
        if s.get("sampling"):
            text += f" Scores are corrected for sampled candidates ({s['sampling']})."
        return text

    # ------------------------------------------------------------------ tables
    def table(self, digits: int = 3, interval: str = "bootstrap") -> pd.DataFrame:
        """Systems × metrics of formatted cells ``mean [low, high] letters``, references last."""
        lo, hi = interval_columns(interval)
        order = self.ranking(self.metrics[0])
        cells = {}
        for m in self.metrics:
            s = self.summary[self.summary["metric"] == m].set_index("system")
            cells[m] = [
                f"{s.at[x, 'mean']:.{digits}f} [{s.at[x, lo]:.{digits}f}, "
                f"{s.at[x, hi]:.{digits}f}] {s.at[x, 'letters']}".rstrip()
                for x in order
            ]
        out = pd.DataFrame(cells, index=pd.Index(order, name="system"))
        for which, label in (("random", "random (expected)"), ("popularity", "popularity")):
            values = [self.reference(m, which) for m in self.metrics]
            if not np.all(np.isnan(values)):
                out.loc[label] = ["" if np.isnan(v) else f"{v:.{digits}f}" for v in values]
        return out

    def caption(self, interval: str = "bootstrap") -> str:
        """The note under :meth:`table`: what the intervals and letters mean."""
        s = self.settings
        how = f"bootstrap ({s['bootstrap_method']})" if interval == "bootstrap" else "Student t"
        corr = (
            ""
            if s["p_value"] == "tukey" or s["correction"] == "none"
            else f", {CORRECTION_NAMES[s['correction']]}-corrected"
        )
        return (
            f"Mean over {len(self.users):,} users with {s['confidence']:.0%} {how} intervals. "
            f"Systems sharing a letter are not significantly different "
            f"({TEST_NAMES[s['p_value']]}{corr}, α = {s['alpha']:g})."
        )

    def pairs_table(self, metric: str | None = None, digits: int = 3) -> pd.DataFrame:
        """Formatted pairs of one metric (all if None): differences, effect sizes, p-values."""
        p = self.pairs if metric is None else self.pairs[self.pairs["metric"] == metric]

        def f(x: float) -> str:
            return f"{x:.{digits}f}"

        def g(x: float) -> str:
            if np.isnan(x):
                return ""
            return f"{x:.{digits}f}" if x >= 10**-digits else f"{x:.1e}"

        out = pd.DataFrame(
            {
                "metric": p["metric"],
                "A": p["a"],
                "B": p["b"],
                "Δ mean": p["mean_diff"].map(f),
                "t interval": [
                    f"[{f(a)}, {f(b)}]" for a, b in zip(p["t_low"], p["t_high"], strict=True)
                ],
                "bootstrap interval": [
                    f"[{f(a)}, {f(b)}]" for a, b in zip(p["boot_low"], p["boot_high"], strict=True)
                ],
                "d_z": p["smd"].map(lambda x: f"{x:.2f}"),
                "d_z interval": [
                    f"[{a:.2f}, {b:.2f}]" for a, b in zip(p["smd_low"], p["smd_high"], strict=True)
                ],
                "p perm.": p["p_permutation"].map(g),
                "p t": p["p_t"].map(g),
                "p Wilcoxon": p["p_wilcoxon"].map(g),
                "p Tukey": p["p_tukey"].map(g),
                "p Holm": p["p_holm"].map(g),
                "p BH": p["p_bh"].map(g),
                "significant": np.where(p["significant"], "yes", "no"),
                "users needed": p["users_needed"].map(
                    lambda x: "" if not np.isfinite(x) else f"{int(x):,}"
                ),
            }
        )
        if metric is not None:
            out = out.drop(columns="metric")
        return out.reset_index(drop=True)

    def to_markdown(
        self, digits: int = 3, *, pairs: bool = True, interval: str = "bootstrap"
    ) -> str:
        """Markdown tables for a paper or a README: systems, then (``pairs``) every pair."""
        parts = [
            markdown_table(self.table(digits, interval).reset_index()),
            "",
            self.caption(interval),
        ]
        if pairs and len(self.pairs):
            for m in self.metrics:
                parts += ["", f"Pairs, {m}:", "", markdown_table(self.pairs_table(m, digits))]
        if len(self.power):
            parts += ["", markdown_table(self.power_table(digits))]
        if self.notes:
            parts += [""] + [f"- {n}" for n in self.notes]
        return "\n".join(parts)

    def power_table(self, digits: int = 3) -> pd.DataFrame:
        """The sample-size answer per metric, formatted."""
        p = self.power
        out = pd.DataFrame(
            {
                "metric": p["metric"],
                "pooled sd of a difference": p["sd_pooled"].map(lambda x: f"{x:.{digits}f}"),
                "users": p["users"].map(lambda x: f"{int(x):,}"),
                "detectable difference": p["detectable"].map(lambda x: f"{x:.{digits}f}"),
            }
        )
        if p["difference"].notna().any():
            out["difference of interest"] = p["difference"].map(lambda x: f"{x:.{digits}f}")
            out["users needed"] = p["users_needed"].map(
                lambda x: "" if not np.isfinite(x) else f"{int(x):,}"
            )
        return out

    def to_latex(
        self,
        digits: int = 3,
        *,
        caption: str | None = None,
        label: str | None = None,
        interval: str = "bootstrap",
    ) -> str:
        """A booktabs LaTeX table of :meth:`table`, letters as superscripts."""
        lo, hi = interval_columns(interval)
        order = self.ranking(self.metrics[0])
        cols = "l" + "c" * len(self.metrics)
        lines = [
            r"\begin{table}",
            r"\centering",
            rf"\caption{{{tex(caption or self.caption(interval))}}}",
        ]
        if label:
            lines.append(rf"\label{{{label}}}")
        lines += [
            rf"\begin{{tabular}}{{{cols}}}",
            r"\toprule",
            " & ".join(["System"] + [tex(m) for m in self.metrics]) + r" \\",
            r"\midrule",
        ]
        for x in order:
            cells = [tex(x)]
            for m in self.metrics:
                s = self.summary[
                    (self.summary["metric"] == m) & (self.summary["system"] == x)
                ].iloc[0]
                cells.append(
                    f"{s['mean']:.{digits}f} [{s[lo]:.{digits}f}, {s[hi]:.{digits}f}]"
                    + (f"$^{{{s['letters']}}}$" if s["letters"] else "")
                )
            lines.append(" & ".join(cells) + r" \\")
        ref_rows = []
        for which, label_ in (("random", "random (expected)"), ("popularity", "popularity")):
            values = [self.reference(m, which) for m in self.metrics]
            if not np.all(np.isnan(values)):
                ref_rows.append(
                    " & ".join(
                        [label_] + ["" if np.isnan(v) else f"{v:.{digits}f}" for v in values]
                    )
                    + r" \\"
                )
        if ref_rows:
            lines += [r"\midrule"] + ref_rows
        lines += [r"\bottomrule", r"\end{tabular}", r"\end{table}"]
        return "\n".join(lines)

    # ------------------------------------------------------------------ figures
    def plot(
        self, metric: str | None = None, *, interval: str = "bootstrap", matrix: bool = True
    ) -> Figure:
        """Means with intervals and letters, reference lines; beside it the matrix of p-values.

        Returns the matplotlib figure.
        """
        return figures.plot_means(self, self._metric(metric), interval=interval, matrix=matrix)

    def plot_effects(
        self,
        metric: str | None = None,
        *,
        standardised: bool = False,
        interval: str = "bootstrap",
    ) -> Figure:
        """Every pair's effect with its interval (a forest plot); significant pairs in colour.

        ``standardised`` shows d_z with its noncentral-t (``interval="t"``) or bootstrap interval
        instead of the mean difference. Returns the matplotlib figure.
        """
        return figures.plot_effects(
            self, self._metric(metric), standardised=standardised, interval=interval
        )

    def _metric(self, metric: str | None) -> str:
        if metric is None:
            return self.metrics[0]
        if metric not in self.metrics:
            raise KeyError(f"metric {metric!r} is not in this comparison; it has {self.metrics}")
        return metric
