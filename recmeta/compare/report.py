"""Compare recommenders on one test set: :func:`compare` builds a :class:`Comparison`.

The workflow applies the five papers of the book in order:

1. per-user metrics from the engine (:mod:`recmeta.metrics`, trec_eval semantics), over the users
   with a relevant test item; a user without a list scores 0 (the coverage penalty of Valcarce
   et al. 2020, §3), and the report says how many such users each system has;
2. the expected value of a random ranking and the value of the popularity ranking under the same
   protocol (Bellogín et al. 2017), as reference lines;
3. all pairs of systems: the paired permutation test (Valcarce et al. 2018; 100,000 permutations
   by default), the paired t and Wilcoxon tests, Holm and Benjamini–Hochberg corrections, and the
   randomised Tukey HSD test;
4. effect sizes with intervals: mean difference (t and bootstrap) and standardised mean
   difference (noncentral t and bootstrap);
5. the number of users a paired t-test needs to detect a difference (Sakai 2016);
6. if the candidates were sampled, the corrected metrics and a warning (Krichene & Rendle 2020).

Inputs are LensKit types (``ItemListCollection`` of recommendations per system, the test
``ItemListCollection``) or tidy frames, or TREC files (:func:`compare_trec`).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from recmeta.metaeval import significance
from recmeta.metrics import Judgments, Runs, parse_metric, score_matrices

from . import references as refs, sampled as smp, stats as st

__all__ = ["Comparison", "compare", "compare_trec", "P_VALUES", "item_lists"]

#: the p-values that can decide significance (``p_value=``)
P_VALUES = ("permutation", "t", "wilcoxon", "tukey")

_TEST_NAMES = {"permutation": "paired permutation test", "t": "paired t-test",
               "wilcoxon": "Wilcoxon signed-rank test", "tukey": "randomised Tukey HSD test"}
_CORRECTION_NAMES = {"holm": "Holm", "bh": "Benjamini–Hochberg", "none": "no"}


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
        return (f"Comparison({len(self.systems)} systems, {len(self.metrics)} metrics, "
                f"{len(self.users)} users)")

    def to_frame(self) -> pd.DataFrame:
        """The per-system table (``summary``), one row per metric and system."""
        return self.summary.copy()

    def reference(self, metric: str, which: str) -> float:
        """The value of the ``"random"`` or ``"popularity"`` reference for ``metric`` (NaN if absent)."""
        r = self.references
        hit = r[(r["metric"] == metric) & (r["reference"] == which)]
        return float(hit["value"].iloc[0]) if len(hit) else float("nan")

    def significant(self, metric: str | None = None) -> pd.DataFrame:
        """Square boolean frame: is the pair significantly different (the deciding p-value)."""
        metric = self._metric(metric)
        out = pd.DataFrame(False, index=self.systems, columns=self.systems)
        p = self.pairs[self.pairs["metric"] == metric]
        for a, b, s in zip(p["a"], p["b"], p["significant"]):
            out.loc[a, b] = out.loc[b, a] = bool(s)
        return out

    def p_matrix(self, metric: str | None = None) -> pd.DataFrame:
        """Square frame of the deciding (adjusted) p-values; NaN on the diagonal."""
        metric = self._metric(metric)
        out = pd.DataFrame(np.nan, index=self.systems, columns=self.systems)
        p = self.pairs[self.pairs["metric"] == metric]
        for a, b, v in zip(p["a"], p["b"], p["p_decision"]):
            out.loc[a, b] = out.loc[b, a] = v
        return out

    def letters(self, metric: str | None = None) -> pd.Series:
        """Compact letters of each system for ``metric`` (shared letter: not significantly different)."""
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
        interval = (f"{s['confidence']:.0%} intervals by the bootstrap over users "
                    f"({s['bootstrap_method']}, {s['n_bootstrap']:,} resamples)")
        tests = (f"paired permutation tests ({s['n_permutations']:,} random permutations), "
                 "paired t and Wilcoxon signed-rank tests")
        if s["n_tukey"]:
            tests += f", and the randomised Tukey HSD test ({s['n_tukey']:,} permutations)"
        decide = _TEST_NAMES[s["p_value"]]
        corr = ("" if s["p_value"] == "tukey" or s["correction"] == "none"
                else f" with {_CORRECTION_NAMES[s['correction']]}'s correction over the pairs of "
                     "each metric")
        text = (f"{len(self.systems)} systems on {len(self.users):,} users with at least one "
                f"relevant test item; {interval}; {tests}. A difference is called significant "
                f"when the {decide}{corr} gives p ≤ {s['alpha']:g}.")
        if s.get("sampling"):
            text += f" Scores are corrected for sampled candidates ({s['sampling']})."
        return text

    # ------------------------------------------------------------------ tables
    def table(self, digits: int = 3, interval: str = "bootstrap") -> pd.DataFrame:
        """Systems × metrics of formatted cells ``mean [low, high] letters``, references last."""
        lo, hi = _interval_columns(interval)
        order = self.ranking(self.metrics[0])
        cells = {}
        for m in self.metrics:
            s = self.summary[self.summary["metric"] == m].set_index("system")
            cells[m] = [f"{s.at[x, 'mean']:.{digits}f} [{s.at[x, lo]:.{digits}f}, "
                        f"{s.at[x, hi]:.{digits}f}] {s.at[x, 'letters']}".rstrip() for x in order]
        out = pd.DataFrame(cells, index=pd.Index(order, name="system"))
        for which, label in (("random", "random (expected)"), ("popularity", "popularity")):
            values = [self.reference(m, which) for m in self.metrics]
            if not np.all(np.isnan(values)):
                out.loc[label] = ["" if np.isnan(v) else f"{v:.{digits}f}" for v in values]
        return out

    def caption(self, interval: str = "bootstrap") -> str:
        """The note under :meth:`table`: what the intervals and letters mean."""
        s = self.settings
        how = (f"bootstrap ({s['bootstrap_method']})" if interval == "bootstrap" else "Student t")
        corr = ("" if s["p_value"] == "tukey" or s["correction"] == "none"
                else f", {_CORRECTION_NAMES[s['correction']]}-corrected")
        return (f"Mean over {len(self.users):,} users with {s['confidence']:.0%} {how} intervals. "
                f"Systems sharing a letter are not significantly different "
                f"({_TEST_NAMES[s['p_value']]}{corr}, α = {s['alpha']:g}).")

    def pairs_table(self, metric: str | None = None, digits: int = 3) -> pd.DataFrame:
        """Formatted pairs of one metric (all metrics if None): differences, effect sizes, p-values."""
        p = self.pairs if metric is None else self.pairs[self.pairs["metric"] == metric]
        def f(x: float) -> str:
            return f"{x:.{digits}f}"

        def g(x: float) -> str:
            if np.isnan(x):
                return ""
            return f"{x:.{digits}f}" if x >= 10 ** -digits else f"{x:.1e}"

        out = pd.DataFrame({
            "metric": p["metric"], "A": p["a"], "B": p["b"],
            "Δ mean": p["mean_diff"].map(f),
            "t interval": [f"[{f(a)}, {f(b)}]" for a, b in zip(p["t_low"], p["t_high"])],
            "bootstrap interval": [f"[{f(a)}, {f(b)}]" for a, b in zip(p["boot_low"], p["boot_high"])],
            "d_z": p["smd"].map(lambda x: f"{x:.2f}"),
            "d_z interval": [f"[{a:.2f}, {b:.2f}]" for a, b in zip(p["smd_low"], p["smd_high"])],
            "p perm.": p["p_permutation"].map(g), "p t": p["p_t"].map(g),
            "p Wilcoxon": p["p_wilcoxon"].map(g), "p Tukey": p["p_tukey"].map(g),
            "p Holm": p["p_holm"].map(g), "p BH": p["p_bh"].map(g),
            "significant": np.where(p["significant"], "yes", "no"),
            "users needed": p["users_needed"].map(lambda x: "" if not np.isfinite(x) else f"{int(x):,}"),
        })
        if metric is not None:
            out = out.drop(columns="metric")
        return out.reset_index(drop=True)

    def to_markdown(self, digits: int = 3, *, pairs: bool = True, interval: str = "bootstrap") -> str:
        """Markdown tables for a paper or a README: systems, then (``pairs``) every pair."""
        parts = [_markdown(self.table(digits, interval).reset_index()), "", self.caption(interval)]
        if pairs and len(self.pairs):
            for m in self.metrics:
                parts += ["", f"Pairs, {m}:", "", _markdown(self.pairs_table(m, digits))]
        if len(self.power):
            parts += ["", _markdown(self.power_table(digits))]
        if self.notes:
            parts += [""] + [f"- {n}" for n in self.notes]
        return "\n".join(parts)

    def power_table(self, digits: int = 3) -> pd.DataFrame:
        """The sample-size answer per metric, formatted."""
        p = self.power
        out = pd.DataFrame({
            "metric": p["metric"],
            "pooled sd of a difference": p["sd_pooled"].map(lambda x: f"{x:.{digits}f}"),
            "users": p["users"].map(lambda x: f"{int(x):,}"),
            "detectable difference": p["detectable"].map(lambda x: f"{x:.{digits}f}"),
        })
        if p["difference"].notna().any():
            out["difference of interest"] = p["difference"].map(lambda x: f"{x:.{digits}f}")
            out["users needed"] = p["users_needed"].map(
                lambda x: "" if not np.isfinite(x) else f"{int(x):,}")
        return out

    def to_latex(self, digits: int = 3, *, caption: str | None = None, label: str | None = None,
                 interval: str = "bootstrap") -> str:
        """A booktabs LaTeX table of :meth:`table`, letters as superscripts."""
        lo, hi = _interval_columns(interval)
        order = self.ranking(self.metrics[0])
        cols = "l" + "c" * len(self.metrics)
        lines = [r"\begin{table}", r"\centering",
                 rf"\caption{{{_tex(caption or self.caption(interval))}}}"]
        if label:
            lines.append(rf"\label{{{label}}}")
        lines += [rf"\begin{{tabular}}{{{cols}}}", r"\toprule",
                  " & ".join(["System"] + [_tex(m) for m in self.metrics]) + r" \\", r"\midrule"]
        for x in order:
            cells = [_tex(x)]
            for m in self.metrics:
                s = self.summary[(self.summary["metric"] == m) & (self.summary["system"] == x)].iloc[0]
                cells.append(f"{s['mean']:.{digits}f} [{s[lo]:.{digits}f}, {s[hi]:.{digits}f}]"
                             + (f"$^{{{s['letters']}}}$" if s["letters"] else ""))
            lines.append(" & ".join(cells) + r" \\")
        ref_rows = []
        for which, label_ in (("random", "random (expected)"), ("popularity", "popularity")):
            values = [self.reference(m, which) for m in self.metrics]
            if not np.all(np.isnan(values)):
                ref_rows.append(" & ".join([label_] + ["" if np.isnan(v) else f"{v:.{digits}f}"
                                                       for v in values]) + r" \\")
        if ref_rows:
            lines += [r"\midrule"] + ref_rows
        lines += [r"\bottomrule", r"\end{tabular}", r"\end{table}"]
        return "\n".join(lines)

    # ------------------------------------------------------------------ figures
    def plot(self, metric: str | None = None, *, interval: str = "bootstrap", matrix: bool = True):
        """Means with intervals and letters, reference lines; beside it the matrix of p-values.

        Returns the matplotlib figure.
        """
        import matplotlib.pyplot as plt
        import seaborn as sns

        metric = self._metric(metric)
        lo, hi = _interval_columns(interval)
        show_matrix = matrix and len(self.systems) > 1
        fig, axes = plt.subplots(1, 2 if show_matrix else 1,
                                 figsize=(11 if show_matrix else 6, 0.5 * len(self.systems) + 2.2),
                                 squeeze=False)
        ax = axes[0, 0]
        s = self.summary[self.summary["metric"] == metric].sort_values("mean", kind="stable")
        y = np.arange(len(s))
        colours = sns.color_palette("deep", 3)
        ax.errorbar(s["mean"], y, fmt="o",
                    xerr=[np.maximum(s["mean"] - s[lo], 0), np.maximum(s[hi] - s["mean"], 0)],
                    color=colours[0], capsize=3)
        for yy, (_, row) in zip(y, s.iterrows()):
            ax.annotate(row["letters"], (row[hi], yy), xytext=(4, 0), textcoords="offset points",
                        va="center", fontsize=9)
        for which, style, colour in (("random", "--", "grey"), ("popularity", ":", colours[1])):
            v = self.reference(metric, which)
            if np.isfinite(v):
                ax.axvline(v, ls=style, color=colour, label=f"{which}: {v:.3f}")
        ax.set_yticks(y, s["system"])
        ax.set(xlabel=f"{metric} (mean, {self.settings['confidence']:.0%} {interval} interval)",
               ylabel="system")
        if ax.get_legend_handles_labels()[0]:
            ax.legend(fontsize=8, loc="lower right")
        if show_matrix:
            order = list(s["system"])[::-1]  # best first
            p = self.p_matrix(metric).loc[order, order].iloc[1:, :-1]
            sig = self.significant(metric).loc[order, order].iloc[1:, :-1]
            mask = np.triu(np.ones(p.shape, dtype=bool), 1)
            text = p.map(lambda v: f"{v:.2g}")
            sns.heatmap(sig.astype(float), mask=mask, annot=text, fmt="", vmin=0, vmax=1,
                        cmap=sns.color_palette([colours[1], colours[0]], as_cmap=True), cbar=False,
                        linewidths=1, linecolor="white", ax=axes[0, 1], annot_kws={"size": 8})
            axes[0, 1].tick_params(axis="y", rotation=0)
            corr = ("" if self.settings["p_value"] == "tukey" or self.settings["correction"] == "none"
                    else f", {_CORRECTION_NAMES[self.settings['correction']]}")
            axes[0, 1].set(xlabel="system", ylabel="system",
                           title=f"p-values ({_TEST_NAMES[self.settings['p_value']]}{corr}); "
                                 "blue: significant")
        fig.tight_layout()
        return fig

    def plot_effects(self, metric: str | None = None, *, standardised: bool = False,
                     interval: str = "bootstrap"):
        """Every pair's effect with its interval (a forest plot); significant pairs in colour.

        ``standardised`` shows d_z with its noncentral-t (``interval="t"``) or bootstrap interval
        instead of the mean difference. Returns the matplotlib figure.
        """
        import matplotlib.pyplot as plt
        import seaborn as sns

        metric = self._metric(metric)
        p = self.pairs[self.pairs["metric"] == metric].reset_index(drop=True)
        if standardised:
            x, lo, hi = p["smd"], *(("smd_boot_low", "smd_boot_high") if interval == "bootstrap"
                                    else ("smd_low", "smd_high"))
            label = "standardised mean difference d_z"
        else:
            x, (lo, hi) = p["mean_diff"], _interval_columns(interval)
            label = f"difference of mean {metric}"
        # orient every pair so that A is the system ahead: differences are >= 0
        flip = (x < 0).to_numpy()
        ahead = np.where(flip, p["b"], p["a"])
        behind = np.where(flip, p["a"], p["b"])
        sign = np.where(flip, -1.0, 1.0)
        x = x.to_numpy() * sign
        low = np.where(flip, -p[hi].to_numpy(), p[lo].to_numpy())
        high = np.where(flip, -p[lo].to_numpy(), p[hi].to_numpy())
        order = np.argsort(x, kind="stable")
        x, low, high = x[order], low[order], high[order]
        ahead, behind = ahead[order], behind[order]
        significant = p["significant"].to_numpy(dtype=bool)[order]
        fig, ax = plt.subplots(figsize=(7, 0.35 * len(x) + 1.8))
        colours = sns.color_palette("deep", 4)
        y = np.arange(len(x))
        for flag, colour, name in ((True, colours[0], "significant"),
                                   (False, colours[3], "not significant")):
            sel = significant == flag
            if sel.any():
                ax.errorbar(x[sel], y[sel], fmt="o",
                            xerr=[np.maximum(x[sel] - low[sel], 0), np.maximum(high[sel] - x[sel], 0)],
                            color=colour, capsize=3, label=name)
        ax.axvline(0, color="grey", lw=1)
        ax.set_yticks(y, [f"{a} − {b}" for a, b in zip(ahead, behind)])
        ax.set(xlabel=f"{label} ({self.settings['confidence']:.0%} {interval} interval)",
               ylabel="pair (system ahead − system behind)")
        ax.legend(fontsize=8)
        fig.tight_layout()
        return fig

    def _metric(self, metric: str | None) -> str:
        if metric is None:
            return self.metrics[0]
        if metric not in self.metrics:
            raise KeyError(f"metric {metric!r} is not in this comparison; it has {self.metrics}")
        return metric


# ----------------------------------------------------------------------------- building
def compare(
    recommendations: Mapping[str, Any] | pd.DataFrame | Runs,
    test: Any,
    metrics: Sequence[str] = ("nDCG@10",),
    *,
    threshold: float | None = None,
    train: Any = None,
    items: Sequence | None = None,
    depth: int | None = None,
    alpha: float = 0.05,
    confidence: float = 0.95,
    p_value: str = "permutation",
    correction: str = "holm",
    n_permutations: int = 100_000,
    n_bootstrap: int = 9999,
    bootstrap_method: str = "BCa",
    n_tukey: int = 10_000,
    n_random: int = 20,
    difference: float | Mapping[str, float] | None = None,
    power: float = 0.8,
    sampled: smp.Sampling | None = None,
    seed: int = 0,
) -> Comparison:
    """Compare recommenders on one test set and return a :class:`Comparison`.

    ``recommendations``: a mapping system name → LensKit ``ItemListCollection`` (e.g. the output
    of ``lenskit.batch.recommend``), ``{user: ItemList}`` or tidy frame (user, item, score or
    rank); or one frame with a ``system`` column; or :class:`recmeta.metrics.Runs`. ``test``:
    the test data as a LensKit ``ItemListCollection`` (e.g. a ``lenskit.splitting`` split's
    ``test``) or ``Dataset``, a frame (user, item[, rating]), a qrels path or
    :class:`~recmeta.metrics.Judgments`; with ratings, ``threshold`` (rating ≥ threshold is
    relevant) is required. ``metrics``: engine names (``"nDCG@10"``, ``"RR"``, ...).

    ``train`` (a LensKit ``Dataset`` such as a split's ``train``, an ``ItemListCollection``, a
    frame or a ratings file path) enables the random and popularity
    references; ``items`` is the catalogue (default: the training items). ``p_value`` picks the
    test that decides significance, ``correction`` ("holm", "bh", "none") its correction over
    the pairs of each metric (the Tukey test needs none). ``difference`` (per metric or one
    number) is the smallest difference of interest for the sample-size answer. ``sampled``
    describes sampled candidates (:class:`~recmeta.compare.Sampling`). ``n_tukey=0`` skips the
    Tukey test. One ``seed`` drives every random draw.
    """
    metrics = list(metrics)
    if not metrics:
        raise ValueError("name at least one metric, e.g. metrics=['nDCG@10']")
    for m in metrics:
        parse_metric(m)
    if len(set(metrics)) != len(metrics):
        raise ValueError("a metric is listed twice")
    if p_value not in P_VALUES:
        raise ValueError(f"p_value must be one of {P_VALUES}, got {p_value!r}")
    if correction not in st.ADJUSTMENTS:
        raise ValueError(f"correction must be one of {st.ADJUSTMENTS}, got {correction!r}")
    if p_value == "tukey" and not n_tukey:
        raise ValueError("p_value='tukey' needs n_tukey > 0")
    if not 0 < alpha < 1 or not 0 < confidence < 1 or not 0 < power < 1:
        raise ValueError("alpha, confidence and power must lie strictly between 0 and 1")
    judgments = _judgments(test, threshold)
    runs = _runs(recommendations, judgments, depth)
    train_df = _train(train, judgments) if train is not None else None

    keep = judgments.evaluable()
    if not keep.any():
        raise ValueError("no test user has a relevant item: check the threshold and the test data")
    users = judgments.users[keep]
    names = [str(s) for s in runs.systems]
    full = score_matrices(judgments, runs, metrics)
    matrices = {m: full[m][:, keep] for m in metrics}
    empty = (runs.ranks[:, keep, 0] < 0).sum(axis=1)
    coverage = pd.DataFrame({"system": names, "users": int(keep.sum()), "empty_lists": empty,
                             "share_empty": empty / keep.sum()})
    notes = _coverage_notes(judgments, runs, keep, coverage)

    sampled_frame = None
    n_user = None
    if sampled is not None:
        n_user = _sampled_n(sampled, users, judgments, train_df, items)
        ranks, missing = smp.sampled_ranks(judgments, runs, int(sampled.m))
        raw = matrices
        matrices = {m: smp.corrected_scores(m, ranks, n_user, sampled) for m in metrics}
        sampled_frame = pd.DataFrame([
            {"metric": m, "system": s, "sampled": raw[m][k].mean(), "corrected": matrices[m][k].mean()}
            for m in metrics for k, s in enumerate(names)])
        notes.append(smp.warning_text(metrics, n_user, sampled))
        if missing.any():
            notes.append(f"{int(missing.sum())} (system, user) lists miss the relevant item; "
                         f"it is placed last (sampled rank {int(sampled.m) + 1}).")

    settings = dict(alpha=alpha, confidence=confidence, p_value=p_value, correction=correction,
                    n_permutations=n_permutations, n_bootstrap=n_bootstrap,
                    bootstrap_method=bootstrap_method, n_tukey=n_tukey, n_random=n_random,
                    power=power, seed=seed, depth=runs.depth,
                    threshold=judgments.threshold,
                    sampling=(f"m = {sampled.m}, {sampled.estimator}" if sampled else None))

    summaries, pair_frames, power_rows = [], [], []
    for m in metrics:
        M = matrices[m]
        s = st.mean_intervals(M, confidence=confidence, n_resamples=n_bootstrap, seed=seed,
                              method=bootstrap_method)
        s.insert(0, "system", names)
        s.insert(0, "metric", m)
        s["empty_lists"] = empty
        if len(names) > 1:
            pairs = _pairs(M, names, m, alpha=alpha, confidence=confidence, p_value=p_value,
                           correction=correction, n_permutations=n_permutations,
                           n_bootstrap=n_bootstrap, method=bootstrap_method, n_tukey=n_tukey,
                           power=power, seed=seed)
            pair_frames.append(pairs)
            sig = np.zeros((len(names), len(names)), dtype=bool)
            ia, ib = significance.system_pairs(len(names))
            sig[ia, ib] = sig[ib, ia] = pairs["significant"].to_numpy()
            s["letters"] = st.compact_letters(s["mean"].to_numpy(), sig)
            sd = st.pooled_difference_sd(M) if M.shape[1] > 1 else np.nan
        else:
            s["letters"] = ""
            sd = np.nan
        summaries.append(s)
        wanted = difference.get(m) if isinstance(difference, Mapping) else difference
        n = M.shape[1]
        power_rows.append({
            "metric": m, "sd_pooled": sd, "users": n,
            "detectable": (float(st.detectable_difference(sd, n, alpha=alpha, power=power))
                           if n > 1 and np.isfinite(sd) else np.nan),
            "difference": np.nan if wanted is None else float(wanted),
            "users_needed": (float(st.users_needed(sd, wanted, alpha=alpha, power=power))
                             if wanted is not None and np.isfinite(sd) else np.nan),
        })

    if sampled is not None:
        references = pd.DataFrame([{"metric": m, "reference": "random",
                                    "value": smp.random_value(m, n_user, sampled), "se": 0.0}
                                   for m in metrics])
        notes.append("Under sampled candidates the popularity reference is not computed: it "
                     "would need the sampled items of every user.")
    elif train_df is not None:
        references = refs.reference_values(judgments, train_df, metrics, depth=runs.depth,
                                           n_random=n_random, seed=seed, items=items)
    else:
        references = pd.DataFrame(columns=["metric", "reference", "value", "se"])
        notes.append("No training data given: the random and popularity references are not computed.")

    pairs_all = (pd.concat(pair_frames, ignore_index=True) if pair_frames else
                 pd.DataFrame(columns=["metric", "a", "b", "significant", "p_decision"]))
    return Comparison(
        systems=names, metrics=metrics, users=users, scores=matrices,
        summary=pd.concat(summaries, ignore_index=True), pairs=pairs_all, references=references,
        power=pd.DataFrame(power_rows), coverage=coverage, settings=settings, notes=notes,
        sampled=sampled_frame,
    )


def compare_trec(
    runs: Sequence[str | os.PathLike],
    qrels: str | os.PathLike,
    metrics: Sequence[str] = ("nDCG@10",),
    *,
    threshold: float = 1.0,
    **options: Any,
) -> Comparison:
    """:func:`compare` on TREC files: run files (one system per run tag) and a qrels file.

    ``threshold`` is trec_eval's ``-l`` (a grade ≥ threshold is relevant; default 1).
    """
    judgments = Judgments.from_qrels(qrels, threshold=threshold)
    depth = options.pop("depth", None)
    return compare(Runs.from_trec(list(runs), judgments, depth=depth), judgments, metrics,
                   **options)


def item_lists(frame: pd.DataFrame, *, user_col: str = "user", item_col: str = "item"):
    """A LensKit ``ItemListCollection`` (keyed by ``user_id``) of a tidy list frame.

    For runs kept as frames (e.g. :func:`recmeta.recommenders.make`, one system at a time): the columns
    ``rank`` and ``score`` are kept.
    """
    from lenskit.data import ItemListCollection

    cols = {user_col: "user_id", item_col: "item_id"}
    keep = [c for c in (user_col, item_col, "rank", "score") if c in frame.columns]
    return ItemListCollection.from_df(frame[keep].rename(columns=cols), "user_id")


# ----------------------------------------------------------------------------- internals
def _pairs(M, names, metric, *, alpha, confidence, p_value, correction, n_permutations,
           n_bootstrap, method, n_tukey, power, seed) -> pd.DataFrame:
    ia, ib = significance.system_pairs(len(names))
    eff = st.difference_intervals(M, confidence=confidence, n_resamples=n_bootstrap, seed=seed,
                                  method=method)
    p = {
        "permutation": significance.permutation_test(M, seed=seed, n_permutations=n_permutations),
        "t": significance.paired_t_test(M),
        "wilcoxon": significance.wilcoxon_test(M),
        "tukey": (st.tukey_hsd(M, seed=seed, n_permutations=n_tukey) if n_tukey
                  else np.full(ia.size, np.nan)),
    }
    chosen = p[p_value]
    holm, bh = st.adjust(chosen, "holm"), st.adjust(chosen, "bh")
    if p_value == "tukey" or correction == "none":
        decision = chosen
    else:
        decision = holm if correction == "holm" else bh
    frame = pd.DataFrame({"metric": metric, "a": [names[k] for k in ia],
                          "b": [names[k] for k in ib]})
    frame = pd.concat([frame, eff], axis=1)
    frame["p_permutation"] = p["permutation"]
    frame["p_t"] = p["t"]
    frame["p_wilcoxon"] = p["wilcoxon"]
    frame["p_tukey"] = p["tukey"]
    frame["p_holm"] = holm
    frame["p_bh"] = bh
    frame["p_decision"] = decision
    frame["significant"] = np.nan_to_num(decision, nan=1.0) <= alpha
    frame["users_needed"] = st.users_needed(eff["sd_diff"].to_numpy(), eff["mean_diff"].to_numpy(),
                                            alpha=alpha, power=power)
    return frame


def _is_item_lists(x: Any) -> bool:
    return hasattr(x, "to_df") and hasattr(x, "key_fields")


def _frame(x: Any, what: str) -> pd.DataFrame:
    """A tidy frame (user, item, ...) of a frame or a LensKit object.

    LensKit objects (``Dataset``, ``ItemListCollection``, ``{user: ItemList}``) as
    :func:`recmeta.data.lenskit_frame` reads them; a frame's ``user_id``/``userId``/... and
    ``item_id``/``movieId``/... columns are taken as ``user`` and ``item``.
    """
    from recmeta import data

    if data.is_lenskit(x):
        return data.lenskit_frame(x, what)
    if isinstance(x, pd.DataFrame):
        return data.usual_names(x, ("user", "item"))
    raise TypeError(f"{what} must be a pandas DataFrame or a LensKit Dataset, ItemListCollection "
                    f"or {{user: ItemList}}, got {type(x).__name__}")


def _judgments(test: Any, threshold: float | None) -> Judgments:
    if isinstance(test, Judgments):
        return test if threshold is None else test.with_threshold(threshold)
    if isinstance(test, (str, os.PathLike)):
        return Judgments.from_qrels(test, threshold=1.0 if threshold is None else threshold)
    df = _frame(test, "the test data")
    if "rating" in df.columns and df["rating"].isna().any() and df["rating"].notna().any():
        raise ValueError(f"{int(df['rating'].isna().sum())} test ratings are missing; give every "
                         "test item a rating, or drop the column for implicit feedback")
    has_grades = "rating" in df.columns and df["rating"].notna().all()
    if has_grades and threshold is None:
        raise ValueError("the test data have ratings: give threshold= (a rating ≥ threshold is "
                         "relevant, e.g. 4 on a 5-star scale)")
    if not has_grades:
        df = df.drop(columns=[c for c in ("rating",) if c in df.columns])
        return Judgments.from_frame(df[["user", "item"]], None)
    return Judgments.from_frame(df[["user", "item", "rating"]], threshold)


def _runs(recs: Any, judgments: Judgments, depth: int | None) -> Runs:
    if isinstance(recs, Runs):
        recs.check_aligned(judgments)
        return recs if depth is None else Runs(recs.systems, recs.users, recs.items,
                                               recs.ranks[:, :, :depth], recs.n_judged_items,
                                               recs.dropped_users)
    if isinstance(recs, pd.DataFrame):
        return Runs.from_frame(_frame(recs, "the recommendations"), judgments, depth=depth)
    if isinstance(recs, Mapping):
        if not recs:
            raise ValueError("no recommendations given")
        from recmeta import data

        if data.is_lenskit(recs):
            raise TypeError("recommendations: a mapping {user: ItemList} is one system's lists; "
                            "name the system: {'my system': {user: ItemList, ...}}")
        kinds = {_is_item_lists(v) for v in recs.values()}
        if kinds == {True}:
            return Runs.from_lenskit(dict(recs), judgments, depth=depth)
        frames = [_frame(v, f"recommendations of {k!r}").assign(system=str(k))
                  for k, v in recs.items()]
        return Runs.from_frame(pd.concat(frames, ignore_index=True), judgments, depth=depth)
    raise TypeError("recommendations must be a mapping {system: ItemListCollection, "
                    "{user: ItemList} or frame}, a frame with a 'system' column, or Runs; got "
                    f"{type(recs).__name__}")


def _train(train: Any, judgments: Judgments) -> pd.DataFrame:
    if isinstance(train, (str, os.PathLike)):
        from recmeta import data

        df = data.load(train)
    else:
        df = _frame(train, "the training data")
    for col, index in (("user", judgments.users), ("item", judgments.items)):
        if col not in df.columns:
            raise ValueError(f"the training data need a {col!r} column; they have {list(df.columns)}")
        if index.dtype == object or pd.api.types.is_string_dtype(index.dtype):
            if not (df[col].dtype == object or pd.api.types.is_string_dtype(df[col].dtype)):
                df = df.assign(**{col: df[col].astype(str)})
    return df


def _sampled_n(sampling: smp.Sampling, users: pd.Index, judgments: Judgments,
               train: pd.DataFrame | None, items: Sequence | None) -> np.ndarray:
    """Each evaluated user's number of candidates without sampling."""
    if sampling.n is None:
        if train is None:
            raise ValueError("sampled candidates: give Sampling(n=...) or the training data, "
                             "from which n = catalogue minus the user's training items")
        cat = refs.catalogue(train, items)
        seen = train[train["item"].isin(cat)].drop_duplicates(["user", "item"])
        per_user = seen.groupby("user").size().reindex(users, fill_value=0).to_numpy()
        n = len(cat) - per_user
    elif isinstance(sampling.n, (Mapping, pd.Series)):
        n = pd.Series(sampling.n).reindex(users).to_numpy(dtype=float)
        if np.isnan(n).any():
            raise ValueError("Sampling.n misses some evaluated users")
    else:
        n = np.full(len(users), int(sampling.n))
    n = np.asarray(n, dtype=np.int64)
    if (n < int(sampling.m) + 1).any():
        raise ValueError(f"some users have fewer than m + 1 = {int(sampling.m) + 1} candidates "
                         "without sampling; check Sampling.n and m")
    return n


def _coverage_notes(judgments: Judgments, runs: Runs, keep: np.ndarray,
                    coverage: pd.DataFrame) -> list[str]:
    notes = []
    left_out = int((~keep).sum())
    notes.append(f"{int(keep.sum()):,} of the {len(judgments.users):,} test users have a relevant "
                 f"item and are evaluated" + (f"; {left_out:,} without one are left out of every "
                                               "average, as trec_eval does." if left_out else "."))
    short = coverage[coverage["empty_lists"] > 0]
    if len(short):
        listing = ", ".join(f"{s} {int(e):,}" for s, e in zip(short["system"], short["empty_lists"]))
        notes.append(f"Evaluated users without a list score 0 (the coverage penalty): {listing}.")
    else:
        notes.append("Every system has a list for every evaluated user (no coverage penalty).")
    if runs.dropped_users:
        notes.append(f"{runs.dropped_users:,} users of the runs have no test data and are not "
                     "evaluated.")
    return notes


def _interval_columns(interval: str) -> tuple[str, str]:
    if interval == "bootstrap":
        return "boot_low", "boot_high"
    if interval == "t":
        return "t_low", "t_high"
    raise ValueError(f"interval must be 'bootstrap' or 't', got {interval!r}")


def _markdown(frame: pd.DataFrame) -> str:
    """A GitHub-style Markdown table (no dependency on tabulate)."""
    cols = [str(c) for c in frame.columns]
    rows = [[str(v).replace("|", "\\|") for v in r] for r in frame.itertuples(index=False)]
    lines = ["| " + " | ".join(cols) + " |", "|" + "|".join("---" for _ in cols) + "|"]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines)


def _tex(text: str) -> str:
    out = str(text).replace("\\", "\x00")
    for a, b in (("&", r"\&"), ("%", r"\%"), ("#", r"\#"),
                 ("_", r"\_"), ("{", r"\{"), ("}", r"\}"), ("$", r"\$"), ("~", r"\textasciitilde{}"),
                 ("^", r"\textasciicircum{}")):
        out = out.replace(a, b)
    out = out.replace("\x00", r"\textbackslash{}")
    return out.replace("α", r"$\alpha$").replace("≤", r"$\le$").replace("–", "--")
