"""The evidence behind the chapter's verdicts: protocol means with their uncertainty, and the
small steps the claims share.

Most estimates come from a bootstrap over users (BC interval) (:func:`protocol_interval`): a user's
target sets in every split of a configuration stay together, and the protocol's average (over
users in AR, over positive test ratings in 1R, over percentiles in P1R) is recomputed on each
resample. Quantities measured once per split (ρ, eq. 4) get a Student t interval over the
splits (:func:`over_splits`); closed forms and counts are exact.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import replace
from typing import Any

import numpy as np
import pandas as pd

from ...ledger import Estimate, Outcome, Verdict, format_number, not_reproduced
from ...metaeval import bootstrap
from .settings import Settings

__all__ = [
    "Getter",
    "absent_designs",
    "append_reason",
    "boot",
    "boot_replicates",
    "design_rows",
    "exact_bound",
    "join_verdicts",
    "lift",
    "mean_difference",
    "missing_roles",
    "order_in",
    "over_splits",
    "protocol_estimate",
    "settings_of",
    "system_mean",
    "systems_in",
    "protocol_interval",
    "user_table",
]


def user_table(
    parts: Mapping[str, tuple[pd.DataFrame, Sequence[str]]], metric: str = "P"
) -> pd.DataFrame:
    """Per-user sums from which every protocol mean of several configurations is a ratio.

    ``parts`` maps a label to (per-set frame of one configuration, systems). The frame has
    one row per (seed, system, set) with ``user``, ``stratum`` and the ``metric`` column, as
    :func:`~recmeta.papers.bellogin2017.trials.trials` gives with ``per_set=True``. Only the
    seeds every listed system ran on are kept. Each set gets the weight
    w = 1/(splits · strata · sets in its stratum), so Σ w·value is the protocol mean averaged
    over splits (eq. 1 in 1R, the mean over users in AR, the mean over percentiles in P1R).
    Columns ``"<label>|<system>"`` hold Σ w·value per user and ``"<label>|w"`` Σ w, users
    absent from a configuration have 0.
    """
    cols = []
    for label, (frame, systems) in parts.items():
        systems = list(systems)
        if metric not in frame.columns:
            raise ValueError(f"part {label!r} has no column {metric!r}")
        f = frame.loc[frame["system"].isin(systems)]
        missing = [s for s in systems if s not in set(pd.unique(f["system"]))]
        if missing:
            raise KeyError(f"part {label!r} has no rows of system(s) {missing}")
        common = set.intersection(
            *(set(pd.unique(f.loc[f["system"] == s, "seed"])) for s in systems)
        )
        f = f.loc[f["seed"].isin(common)]
        wide = (
            f.set_index(["seed", "set", "user", "stratum", "system"])[metric]
            .unstack("system")
            .reset_index()
        )
        if wide[systems].isna().any().any():
            raise ValueError(f"part {label!r}: the systems were not run on the same target sets")
        per_stratum = wide.groupby(["seed", "stratum"])["set"].transform("size")
        strata = wide.groupby("seed")["stratum"].transform("nunique")
        w = 1.0 / (len(common) * strata * per_stratum)
        block = wide[systems].mul(w, axis=0)
        block.columns = [f"{label}|{s}" for s in systems]
        block[f"{label}|w"] = w
        cols.append(block.groupby(wide["user"].to_numpy()).sum())
    return pd.concat(cols, axis=1).fillna(0.0)


Getter = Callable[[str, str], np.ndarray]


def protocol_interval(
    table: pd.DataFrame,
    statistic: Callable[[Getter], Any],
    *,
    resamples: int = 999,
    level: float = 0.95,
    seed: int = 0,
    what: str = "users",
    replicates: bool = False,
) -> Any:
    """Bootstrap over users (BC interval) of a statistic of protocol means.

    ``statistic(get)`` computes the quantity from ``get(label, system)``, the protocol mean of
    ``system`` in configuration ``label`` (Σ_u S_u / Σ_u W_u from :func:`user_table`); it is
    evaluated on all users (the value) and on ``resamples`` replicates of the users drawn with
    replacement (:func:`recmeta.metaeval.bootstrap.bootstrap_sums`; the interval: their
    bias-corrected percentile interval, :meth:`Estimate.from_replicates`). Replicates in which a
    configuration has no set are skipped.
    With ``replicates`` the finite replicates come back too: ``(estimate, replicates)``.
    """
    x = table.to_numpy(dtype=float)
    n = len(x)
    if n < 2:
        raise ValueError("a bootstrap over users needs at least two users")
    col = {c: k for k, c in enumerate(table.columns)}

    def on_sums(sums: np.ndarray) -> np.ndarray:
        def get(label: str, system: str) -> np.ndarray:
            with np.errstate(invalid="ignore", divide="ignore"):
                return sums[:, col[f"{label}|{system}"]] / sums[:, col[f"{label}|w"]]

        return np.asarray(statistic(get), dtype=float).reshape(len(sums))

    value, reps = bootstrap.bootstrap_sums(x, on_sums, n_resamples=resamples, seed=seed)
    r = reps[np.isfinite(reps)]
    est = Estimate.from_replicates(
        float(value),
        r,
        level,
        method=f"BC bootstrap over {n} {what} ({len(r)} resamples), {level * 100:g} %",
    )
    return (est, r) if replicates else est


def protocol_estimate(
    frame: pd.DataFrame, system: str, settings: Settings, metric: str = "P"
) -> Estimate:
    """The protocol mean of one system in one configuration, with its bootstrap over users."""
    table = user_table({"x": (frame, [system])}, metric)
    return protocol_interval(
        table,
        lambda get: get("x", system),
        resamples=settings.resamples,
        level=settings.level,
        seed=settings.seed,
    )


def lift(
    get: Getter, label: str, system: str = "popularity", baseline: str = "random"
) -> np.ndarray:
    """A system's protocol mean over the baseline's (popularity over random), in one setting."""
    return get(label, system) / get(label, baseline)


def system_mean(label: str, system: str) -> Callable[[Getter], np.ndarray]:
    """The statistic ``get(label, system)``: a system's protocol mean in one configuration."""
    return lambda get: get(label, system)


def mean_difference(label: str, system: str, other: str) -> Callable[[Getter], np.ndarray]:
    """The statistic ``get(label, system) − get(label, other)`` within one configuration."""
    return lambda get: get(label, system) - get(label, other)


def over_splits(values: Iterable[float], what: str = "splits") -> Estimate:
    """Mean with a Student t interval over per-split values; a point estimate from one split."""
    v = np.asarray(list(values), dtype=float)
    if len(v) >= 2:
        return Estimate.mean_se(v, method=f"t interval over {len(v)} {what}, 95 %")
    return Estimate.point(float(v[0]), method=f"one {what[:-1]}, no interval")


def append_reason(out: Outcome, text: str) -> Outcome:
    """``out`` with ``text`` added to its reason (its rule and margin kept)."""
    return replace(out, reason=f"{out.reason}; {text}")


def join_verdicts(parts: list[Outcome]) -> Verdict:
    """Differs if any part differs, agrees if all agree, else inconclusive."""
    verdicts = [p.verdict for p in parts]
    if any(v == Verdict.DIFFERS for v in verdicts):
        return Verdict.DIFFERS
    if all(v == Verdict.AGREES for v in verdicts):
        return Verdict.AGREES
    return Verdict.INCONCLUSIVE


def settings_of(results: Mapping[str, Any]) -> Settings:
    """The study's :class:`Settings` among a claim's results."""
    return results["settings"]


def boot(
    results: Mapping[str, Any], table: pd.DataFrame, statistic: Callable[[Getter], Any]
) -> Estimate:
    """:func:`protocol_interval` with the resamples, level and seed of the results' settings."""
    s = settings_of(results)
    est: Estimate = protocol_interval(
        table, statistic, resamples=s.resamples, level=s.level, seed=s.seed
    )
    return est


def boot_replicates(
    results: Mapping[str, Any], table: pd.DataFrame, statistic: Callable[[Getter], Any]
) -> tuple[Estimate, np.ndarray]:
    """:func:`boot` with the bootstrap replicates (for one-sided p-values of a sign)."""
    s = settings_of(results)
    est, reps = protocol_interval(
        table, statistic, resamples=s.resamples, level=s.level, seed=s.seed, replicates=True
    )
    return est, reps


def design_rows(frame: pd.DataFrame, name: str, column: str = "design") -> pd.DataFrame:
    """The rows of one design (or of one value of ``column``)."""
    return frame.loc[frame[column] == name]


def absent_designs(frame: pd.DataFrame, names: Iterable[str]) -> Outcome | None:
    """Not reproduced when a design did not run (the profile may leave out the costly ones)."""
    missing = [d for d in names if d not in set(pd.unique(frame["design"]))]
    if missing:
        return not_reproduced(
            f"design(s) {', '.join(missing)} did not run in this profile "
            "(the second dataset's quick run leaves out the designs over all items)"
        )
    return None


def systems_in(frame: pd.DataFrame) -> list[str]:
    """The systems of a frame, in order of appearance."""
    return list(pd.unique(frame["system"]))


def missing_roles(roles: Iterable[str], frame: pd.DataFrame) -> str | None:
    """Why the roles that did not run are absent (``None`` when all ran)."""
    absent = [r for r in roles if r not in set(pd.unique(frame["system"]))]
    if absent:
        roster = [s for s in systems_in(frame) if s not in ("popularity", "random")]
        return (
            f"{', '.join(absent)} did not run here (the roster systems of the profile: "
            f"{', '.join(roster) or 'none'})"
        )
    return None


def exact_bound(value: float, bound: float, label: str, below: bool = True) -> Outcome:
    """Agrees when an exact ``value`` is at most (``below``) or at least ``bound`` (rule
    ``bound``; a derivation reads it as holds or fails)."""
    ours = Estimate.exact(value)
    ok = value <= bound + 1e-12 if below else value >= bound - 1e-12
    side = "at most" if below else "at least"
    verdict = Verdict.AGREES if ok else Verdict.DIFFERS
    return Outcome(
        verdict,
        ours,
        f"{label} {format_number(value)} is {'' if ok else 'not '}{side} {format_number(bound)}",
        rule="bound",
    )


def order_in(
    r: Mapping[str, Any], frame: pd.DataFrame, systems: Sequence[str], metric: str = "P"
) -> dict[str, Estimate]:
    """Each system's protocol mean in ``frame`` with its bootstrap over users."""
    table = user_table({"x": (frame, systems)}, metric)
    return {sy: boot(r, table, system_mean("x", sy)) for sy in systems}
