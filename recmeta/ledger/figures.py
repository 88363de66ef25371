"""The ledger page's opening figures: verdicts at a glance, and value claims against their margins.

- :func:`verdict_bars`: one panel per chapter and dataset, one horizontal bar per kind of claim
  (derivation, replication, transfer), stacked by verdict;
- :func:`forest`: for the value claims, one panel per chapter, one row per claim and dataset:
  our estimate and interval as ``z = (ours − paper) / margin``, so the paper's value is at 0 and
  its equivalence band ``paper ± margin`` is ``[−1, 1]`` whatever the claim's scale. A graded
  value agrees exactly when its whole row lies inside the band and differs when it lies wholly
  outside (:func:`recmeta.ledger.rules.value_rule`). The axis is linear inside ``[−1, 1]`` and
  logarithmic beyond (symlog), so a magnitude many margins away stays on the page.

Both return a :class:`matplotlib.figure.Figure` without touching pyplot's global state;
:func:`write_figures` saves them as PNG files.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import seaborn as sns
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch
from matplotlib.ticker import MaxNLocator

from ..files import write_atomic
from .audit import numeric
from .kinds import Kind
from .rules import Verdict

__all__ = [
    "COLOURS",
    "CAPTIONS",
    "WIDTH",
    "verdict_table",
    "value_rows",
    "verdict_bars",
    "forest",
    "write_figures",
]

#: one colour per verdict (Okabe & Ito's colour-blind-safe palette)
COLOURS: dict[str, str] = {
    Verdict.AGREES.value: "#0072B2",
    Verdict.HOLDS.value: "#56B4E9",
    Verdict.DIFFERS.value: "#D55E00",
    Verdict.FAILS.value: "#E69F00",
    Verdict.INCONCLUSIVE.value: "#7F7F7F",
    Verdict.NOT_GRADED.value: "#CC79A7",
    Verdict.NOT_REPRODUCED.value: "#D9D9D9",
}

#: figure width in inches: shown at about 1:1 in the book's text column (about 650 px wide in
#: a 1,280 px window), so 9 pt type reads at about 13 px; saved at twice that for sharp screens
WIDTH = 6.0
_DPI = 110
_SAVE_DPI = 220
_MARKERS = ("o", "s", "D", "^", "v")


#: the captions the ledger page prints under each figure
CAPTIONS: dict[str, str] = {
    "verdicts": (
        "Verdicts of this build at a glance: one panel per chapter and dataset, one bar per kind "
        "of claim, its length the number of claims, stacked by verdict. Derivations hold or "
        "fail; replications and transfers agree, differ or stay inconclusive; a magnitude "
        "measured on other data is shown, not graded."
    ),
    "values": (
        "Value claims against their equivalence margins, one panel per chapter, one row per "
        "claim and dataset. Each row is normalised by its own claim: z = (ours − paper) / "
        "margin, so the paper's value is at 0 and its band paper ± margin is the shaded "
        "[−1, 1], whatever the claim's scale. The marker is our estimate (its shape the "
        "dataset), the line our interval, the colour the verdict: a value agrees when its whole "
        "line lies inside the band and differs when it lies wholly outside; a magnitude measured "
        "on other data is drawn but not graded. The axis is linear inside ±1 and logarithmic "
        "beyond."
    ),
}


def _row_major(handles: list[Any], ncol: int) -> list[Any]:
    """Legend entries reordered so that matplotlib, which fills a legend column by column,
    shows them row by row."""
    nrows = -(-len(handles) // ncol)
    return [
        handles[i * ncol + j]
        for j in range(ncol)
        for i in range(nrows)
        if i * ncol + j < len(handles)
    ]


def _kinds(frame: pd.DataFrame) -> list[str]:
    present = set(frame["kind"].fillna("unknown").astype(str))
    known = [k.value for k in Kind if k.value in present]
    return known + sorted(present - set(known))


def _order(names: Sequence[str], chapters: Mapping[str, str] | None) -> list[str]:
    first = [c for c in (chapters or {}) if c in names]
    return first + [c for c in dict.fromkeys(names) if c not in first]


def verdict_table(frame: pd.DataFrame) -> pd.DataFrame:
    """Claims per chapter, dataset, kind (rows) and verdict (columns, in :class:`Verdict`
    order, zeros included)."""
    verdicts = [v.value for v in Verdict]
    if frame.empty:
        return pd.DataFrame(columns=verdicts)
    keys = [frame["chapter"], frame["dataset"], frame["kind"].fillna("unknown").astype(str)]
    table = pd.crosstab(keys, frame["verdict"].astype(str))
    table.index.names = ["chapter", "dataset", "kind"]
    return table.reindex(columns=verdicts, fill_value=0)


def verdict_bars(frame: pd.DataFrame, chapters: Mapping[str, str] | None = None) -> Figure:
    """Stacked bars of verdicts: a row of panels per chapter (titled with ``chapters``' title),
    a panel per dataset, a bar per kind of claim; a bar segment per verdict present."""
    if frame.empty:
        raise ValueError("no ledger rows to draw: the frame is empty")
    table = verdict_table(frame)
    names = _order(list(frame["chapter"]), chapters)
    datasets = list(dict.fromkeys(frame["dataset"]))
    biggest = table.sum(axis=1).max()
    used = [v for v in table.columns if table[v].sum() > 0]
    kinds = _kinds(frame)  # the same rows in every panel
    with sns.axes_style("whitegrid"):
        fig = Figure(figsize=(WIDTH, 0.5 + 1.4 * len(names)), dpi=_DPI, layout="constrained")
        subs = fig.subfigures(len(names), 1, squeeze=False)[:, 0]
        for sub, chapter in zip(subs, names, strict=True):
            sub.suptitle((chapters or {}).get(chapter, chapter), fontsize=11, ha="left", x=0.01)
            axes = sub.subplots(1, len(datasets), sharex=True, sharey=True, squeeze=False)[0]
            for ax, ds in zip(axes, datasets, strict=True):
                left = np.zeros(len(kinds))
                for verdict in used:
                    n = np.array([table[verdict].get((chapter, ds, k), 0) for k in kinds], float)
                    ys = np.flatnonzero(n)
                    if ys.size:
                        bars = ax.barh(
                            ys,
                            n[ys],
                            left=left[ys],
                            color=COLOURS.get(verdict, "black"),
                            height=0.7,
                            edgecolor="white",
                            linewidth=0.5,
                        )
                        labels = [f"{int(x)}" if x >= biggest / 20 else "" for x in n[ys]]
                        ax.bar_label(bars, labels=labels, label_type="center", fontsize=8)
                    left += n
                ax.set_yticks(range(len(kinds)), kinds, fontsize=9)
                ax.set_xlim(0, biggest * 1.02)
                ax.xaxis.set_major_locator(MaxNLocator(integer=True))
                ax.set_ylim(len(kinds) - 0.5, -0.5)  # first kind on top
                ax.set_title(ds, fontsize=9)
                ax.tick_params(axis="x", labelsize=8)
                ax.grid(axis="y", visible=False)
            axes[0].set_ylabel("kind", fontsize=9)
        fig.supxlabel("number of claims", fontsize=9)
        fig.legend(
            handles=_row_major([Patch(color=COLOURS.get(v, "black"), label=v) for v in used], 4),
            loc="outside upper center",
            ncol=4,
            fontsize=8.5,
            frameon=False,
            handlelength=1.2,
            columnspacing=1.0,
        )
    return fig


def value_rows(frame: pd.DataFrame) -> pd.DataFrame:
    """The value claims a forest plot can draw: rule ``value``, a number for the paper's value,
    a positive margin and our estimate. Columns chapter, claim, dataset, kind, verdict, paper,
    margin, z, z_low, z_high (``z = (ours − paper) / margin``; NaN bounds without interval) and
    unresolved (the open end, if any: drawn as an arrowhead, the interval reaching further)."""
    cols = ["chapter", "claim", "dataset", "kind", "verdict", "paper", "margin"]
    rows = []
    for r in frame[frame["rule"] == "value"].to_dict("records"):
        paper, margin, ours = (numeric(r.get(k)) for k in ("paper_value", "margin", "ours"))
        if paper is None or margin is None or margin <= 0 or ours is None:
            continue
        low, high = numeric(r.get("low")), numeric(r.get("high"))
        rows.append(
            {
                **{k: r[k] for k in cols[:5]},
                "paper": paper,
                "margin": margin,
                "z": (ours - paper) / margin,
                "z_low": np.nan if low is None else (low - paper) / margin,
                "z_high": np.nan if high is None else (high - paper) / margin,
                "unresolved": r.get("unresolved") if isinstance(r.get("unresolved"), str) else "",
            }
        )
    out = pd.DataFrame(rows, columns=[*cols, "z", "z_low", "z_high", "unresolved"])
    # a claim's datasets side by side, claims in the ledger's order
    first = {c: i for i, c in enumerate(dict.fromkeys(out["claim"]))}
    return out.sort_values("claim", key=lambda s: s.map(first), kind="stable").reset_index(
        drop=True
    )


def _ticks(limit: float) -> list[float]:
    """0, ±1 and the powers of ten within ``limit`` (±3 as well while the axis is short), so the
    labels of the symlog axis never crowd."""
    steps = [10.0**e for e in range(int(np.log10(limit)) + 1)]
    if limit <= 30:
        steps.append(3.0)
    return sorted([0.0, *steps, *(-s for s in steps)])


def _short(claim: str) -> str:
    """A claim id without its paper's prefix: ``valcarce2018.tab3.dp-p`` → ``tab3.dp-p``."""
    head, dot, rest = claim.partition(".")
    return rest if dot and rest else claim


def forest(frame: pd.DataFrame, chapters: Mapping[str, str] | None = None) -> Figure | None:
    """The value claims' forest plot (see the module's docstring); ``None`` when the frame holds
    no value claim with a numeric paper value, a margin and our estimate."""
    rows = value_rows(frame)
    if rows.empty:
        return None
    names = _order(list(rows["chapter"]), chapters)
    datasets = list(dict.fromkeys(rows["dataset"]))
    marker = {ds: _MARKERS[i % len(_MARKERS)] for i, ds in enumerate(datasets)}
    sizes = [int((rows["chapter"] == c).sum()) for c in names]
    reach = np.nanmax(np.abs(rows[["z", "z_low", "z_high"]].to_numpy(dtype=float)))
    limit = max(3.0, float(reach) * 1.5)
    with sns.axes_style("whitegrid"):
        fig = Figure(
            figsize=(WIDTH, 1.1 + 0.5 * len(names) + 0.23 * sum(sizes)),
            dpi=_DPI,
            layout="constrained",
        )
        axes = fig.subplots(
            len(names), 1, sharex=True, squeeze=False, gridspec_kw={"height_ratios": sizes}
        )[:, 0]
        for ax, chapter in zip(axes, names, strict=True):
            part = rows[rows["chapter"] == chapter].reset_index(drop=True)
            y = np.arange(len(part))
            ax.axvspan(-1, 1, color="#0072B2", alpha=0.12, lw=0)
            ax.axvline(0, color="black", lw=0.8)
            for i, r in part.iterrows():
                colour = COLOURS.get(r["verdict"], "black")
                if np.isfinite(r["z_low"]) and np.isfinite(r["z_high"]):
                    ax.hlines(i, r["z_low"], r["z_high"], color=colour, lw=1.6)
                    for end, head in (("low", "<"), ("high", ">")):
                        if r["unresolved"] in (end, "both"):
                            ax.plot(r[f"z_{end}"], i, marker=head, color=colour, ms=5, ls="")
                ax.plot(r["z"], i, marker=marker[r["dataset"]], color=colour, ms=4.5, ls="")
            labels = [
                f"{_short(c)} ({d})" for c, d in zip(part["claim"], part["dataset"], strict=True)
            ]
            ax.set_yticks(y, labels, fontsize=8)
            ax.set_ylim(len(part) - 0.5, -0.5)
            # the chapter's title from the figure's left edge (a long title would overrun the
            # axes, which start after the claims' labels); an empty title keeps its room
            ax.set_title(" ", fontsize=11)
            title = ax.annotate(
                (chapters or {}).get(chapter, chapter),
                xy=(0.01, 1.0),
                xycoords=("figure fraction", "axes fraction"),
                xytext=(0, 5),
                textcoords="offset points",
                fontsize=11,
                ha="left",
                va="bottom",
            )
            title.set_in_layout(False)
            ax.set_xscale("symlog", linthresh=1.0)
            ax.set_xlim(-limit, limit)
            ticks = _ticks(limit)
            ax.set_xticks(ticks, [f"{t:g}" for t in ticks])
            ax.tick_params(axis="x", labelsize=8)
        axes[-1].set_xlabel("(ours − paper) / margin\n0: the paper's value; ±1: its margin")
        verdicts = [v for v in COLOURS if (rows["verdict"] == v).any()]
        handles = [
            *(Line2D([], [], color=COLOURS[v], marker="o", ls="-", label=v) for v in verdicts),
            *(Line2D([], [], color="black", marker=marker[d], ls="", label=d) for d in datasets),
            Patch(color="#0072B2", alpha=0.12, label="paper ± margin"),
        ]
        fig.legend(
            handles=_row_major(handles, 4),
            loc="outside upper center",
            ncol=4,
            fontsize=8.5,
            frameon=False,
        )
    return fig


def _png(fig: Figure) -> Callable[[Path], None]:
    def write(tmp: Path) -> None:
        fig.savefig(tmp, format="png", dpi=_SAVE_DPI)

    return write


def write_figures(
    frame: pd.DataFrame,
    folder: str | Path,
    chapters: Mapping[str, str] | None = None,
    *,
    prefix: str = "",
) -> dict[str, Path]:
    """Save the page's figures as PNG files in ``folder`` (created if needed), atomically:
    ``<prefix>verdicts.png`` always, ``<prefix>values.png`` when some value claim can be drawn.
    Returns ``{name: path}`` with the names of :data:`CAPTIONS`."""
    folder = Path(folder)
    out = {}
    figures = {"verdicts": verdict_bars(frame, chapters), "values": forest(frame, chapters)}
    for name, fig in figures.items():
        if fig is None:
            continue
        out[name] = write_atomic(folder / f"{prefix}{name}.png", _png(fig))
    return out
