"""Krichene & Rendle (2020), *On Sampled Metrics for Item Recommendation*: the chapter's ledger.

:data:`LEDGER` holds one :class:`~recmeta.ledger.Claim` per statement of the paper, each with a
function computing our value, its uncertainty and a verdict from the chapter's results. The
claims are declared in :mod:`.claims_example` (the running example, §3–5),
:mod:`.claims_movielens` (MovieLens, §6.1–6.2) and :mod:`.claims_corrections` (§6.3, Fig. 6,
Table 4, §8), which the package imports in that order. They read these results:

- ``"toy"``: :class:`~.example.ToyInputs` (the running example and the chapter's sampling settings);
- ``"toy_sampled"``: the repetitions of :func:`recmeta.sampled.sampled_evaluation` on it (Table 2);
- ``"real"``: a :class:`~.movielens.RealStudy` (Tables 3–4, Fig. 5), whose tie rule is the one
  the claims read;
- ``"real_order"``: its order study over a grid of m (Fig. 6), present for the chapter's tie rule;
- ``"real_multi"``: its study with several held-out items (§8's suggestion);
- ``"settings"``: :class:`~.settings.Settings` (bootstrap resamples, confidence level, seed).

Uncertainty: the toy example's expectations are exact (the law of the sampled rank, no
simulation); its Monte-Carlo repetitions carry standard errors. Real-data exact metrics carry a
paired bootstrap over users (:meth:`Estimate.bootstrap_diff`); sampled metrics a t interval over
repetitions of one evaluation with shared negatives (:meth:`Estimate.mean_se`), so a claim on an
order of systems reads "inconclusive" when the interval of the difference contains 0.

The paper's text is known here through a text extraction; where a printed value could not be
read reliably it is not used (the bucket width of Fig. 5 is not stated in the text, so "the worst
bucket" is our reading, see :func:`~.movielens.worst_bucket`).
"""

from __future__ import annotations

import os
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from itertools import pairwise
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from ... import analyses
from ...ledger import (
    Estimate,
    Ledger,
    Outcome,
    SignPart,
    Verdict,
    not_reproduced,
    sign_rule,
)
from ...ledger.claims import with_tie_sensitive
from ...metaeval.bootstrap import bootstrap_sums
from ...metaeval.significance import t_sign_pvalues as t_pvalues
from ...sampled import TIE_RULES, check_ties
from .. import register
from .movielens import RealStudy
from .movielens_tables import repetitions_wide
from .settings import Settings

__all__ = [
    "LEDGER",
    "PREFIX",
    "TIED_RESULTS",
    "by_tie_rule",
    "chain",
    "combine",
    "exact_part",
    "mc_part",
    "rep_part",
    "report",
    "ruled",
    "t_pvalues",
    "evaluate",
    "evaluate_under",
    "exact_diff",
    "exact_user",
    "mc_estimate",
    "needs_xyz",
    "order_signs",
    "rep_diff",
    "tie_dependence",
    "tie_variants",
    "under_ties",
    "wilson",
]

_Eval = Callable[[Mapping[str, Any]], Outcome]

LEDGER = register(
    Ledger(
        "sampled-metrics",
        paper="krichene2020sampled",
        title="Sampled metrics and their corrections",
    )
)
#: the prefix of every claim id of this ledger
PREFIX = "krichene2020."


def combine(
    parts: Sequence[tuple[str, Outcome]], ours: Estimate | None = None, detail: str | None = None
) -> Outcome:
    """One verdict from several: *differs* if any part differs, *agrees* if all agree, else
    *inconclusive*; the reason lists the parts that decide it."""
    verdicts = [o.verdict for _, o in parts]
    if Verdict.NOT_REPRODUCED in verdicts:
        bad = [o.reason for _, o in parts if o.verdict == Verdict.NOT_REPRODUCED]
        return Outcome(Verdict.NOT_REPRODUCED, ours, "; ".join(bad), detail)
    if Verdict.DIFFERS in verdicts:
        verdict, show = Verdict.DIFFERS, [p for p in parts if p[1].verdict == Verdict.DIFFERS]
    elif all(v == Verdict.AGREES for v in verdicts):
        verdict, show = Verdict.AGREES, list(parts)
    else:
        verdict, show = (
            Verdict.INCONCLUSIVE,
            [p for p in parts if p[1].verdict == Verdict.INCONCLUSIVE],
        )
    if ours is None:
        ours = min(
            (o.ours for _, o in show if o.ours is not None),
            key=lambda e: abs(e.value),
            default=None,
        )
    reason = "; ".join(o.reason for _, o in show[:4])
    if len(show) > 4:
        reason += f"; and {len(show) - 4} more"
    return Outcome(verdict, ours, reason, detail)


def ruled(name: str) -> Callable[[_Eval], _Eval]:
    """Name the rule of every Outcome a claim builds by hand (``"identity"``, ``"order"``...),
    unless it already names one."""

    def wrap(fn: _Eval) -> _Eval:
        def named(r: Mapping[str, Any]) -> Outcome:
            out = fn(r)
            return out if out.rule != "custom" else replace(out, rule=name)

        named.__doc__, named.__name__ = fn.__doc__, fn.__name__
        return named

    return wrap


def order_signs(diffs: Mapping[str, Estimate]) -> list[tuple[str, Outcome]]:
    """A sign check (positive) of each difference, labelled by its key."""
    return [(k, sign_rule(e, "positive", label=k)) for k, e in diffs.items()]


def mc_estimate(values: np.ndarray, level: float, what: str) -> Estimate:
    """The mean of Monte-Carlo repetitions with its t interval (a point for one repetition)."""
    v = np.asarray(values, dtype=float)
    if v.size < 2:
        return Estimate.point(float(v.mean()), f"{what}, one repetition (no interval)")
    return Estimate.mean_se(
        v, level, method=f"{what}: t interval over {v.size} repetitions, {level * 100:g} %"
    )


def rep_diff(
    study: RealStudy, metric: str, estimator: str, a: str, b: str, level: float
) -> Estimate:
    """Expected sampled a − b: mean over repetitions (shared negatives) with its t interval."""
    w = repetitions_wide(study, metric, estimator)
    return mc_estimate((w[a] - w[b]).to_numpy(), level, f"sampled {metric} ({estimator}) {a} − {b}")


def rep_part(
    study: RealStudy, metric: str, estimator: str, a: str, b: str, level: float
) -> SignPart:
    """:func:`rep_diff` with its t p-values over repetitions (:func:`t_pvalues`)."""
    w = repetitions_wide(study, metric, estimator)
    return mc_part((w[a] - w[b]).to_numpy(), level, f"sampled {metric} ({estimator}) {a} − {b}")


def mc_part(values: np.ndarray, level: float, what: str) -> SignPart:
    """:func:`mc_estimate` of repetitions with its t p-values (:func:`t_pvalues`)."""
    return SignPart(mc_estimate(values, level, what), *t_pvalues(values))


#: :func:`exact_part`'s results in this process, keyed by everything they depend on (the
#: per-user differences by content): the ledger reads the same paired difference in several
#: claims, under every tie rule that leaves it unchanged, and again for the chapter's text
_EXACT_PARTS: OrderedDict[tuple[Any, ...], SignPart] = OrderedDict()
_EXACT_PARTS_SIZE = 512


def exact_part(study: RealStudy, metric: str, a: str, b: str, s: Settings) -> SignPart:
    """:func:`exact_diff` with one-sided p-values from bootstrap replicates of the paired mean
    difference over users (:func:`~recmeta.metaeval.bootstrap.sign_pvalues`, the same number
    of resamples and seed as the interval). Computed once per process for each set of inputs
    (the differences d = a − b by content, the labels, the users, the level, seed and
    resamples): both the interval and the replicates depend on nothing else."""
    d = exact_user(study, metric, a) - exact_user(study, metric, b)
    key = (metric, a, b, study.users, s.level, s.seed, s.n_resamples, d.dtype.str, d.tobytes())
    done = _EXACT_PARTS.get(key)
    if done is not None:
        _EXACT_PARTS.move_to_end(key)
        return done
    sums = np.column_stack([d, np.ones_like(d)])
    _, reps = bootstrap_sums(
        sums, lambda x: x[:, 0] / x[:, 1], n_resamples=s.n_resamples, seed=s.seed
    )
    part = SignPart.from_replicates(exact_diff(study, metric, a, b, s), reps)
    _EXACT_PARTS[key] = part
    if len(_EXACT_PARTS) > _EXACT_PARTS_SIZE:
        _EXACT_PARTS.popitem(last=False)
    return part


def exact_user(study: RealStudy, metric: str, system: str) -> np.ndarray:
    """Per-user exact metric of ``system`` under the study's tie rule."""
    return study.exact[study.ties][(system, metric)]


def exact_diff(study: RealStudy, metric: str, a: str, b: str, s: Settings) -> Estimate:
    """Exact a − b with a paired bootstrap over users (BCa)."""
    return Estimate.bootstrap_diff(
        exact_user(study, metric, a),
        exact_user(study, metric, b),
        s.level,
        s.seed,
        s.n_resamples,
        method=f"exact {metric} {a} − {b}: paired bootstrap over "
        f"{study.users} users (BCa, {s.n_resamples} resamples), {s.level * 100:g} %",
    )


def needs_xyz(study: RealStudy) -> Outcome | None:
    """*Not reproduced* when the study lacks the paper's X, Y, Z; else ``None``."""
    if not {"X", "Y", "Z"} <= set(study.systems):
        return not_reproduced(
            "the claim is about the paper's recommenders X, Y, Z; this run has "
            f"{', '.join(study.systems)}"
        )
    return None


def chain(
    study: RealStudy, metric: str, order: Sequence[str], diff: Callable[[str, str], Estimate]
) -> list[tuple[str, Outcome]]:
    """Sign checks of consecutive pairs of ``order`` (best first)."""
    return order_signs({f"{a} − {b} ({metric})": diff(a, b) for a, b in pairwise(order)})


def wilson(k: float, n: int, level: float) -> tuple[float, float]:
    """Wilson score interval of a proportion k/n at confidence ``level``."""
    z = stats.norm.ppf(0.5 + level / 2)
    p = k / n
    centre = (p + z**2 / (2 * n)) / (1 + z**2 / n)
    half = z * np.sqrt(p * (1 - p) / n + z**2 / (4 * n**2)) / (1 + z**2 / n)
    return centre - half, centre + half


def under_ties(results: Mapping[str, Any], ties: str) -> dict[str, Any]:
    """The results with the real-data study read under another tie rule (the same draws).

    The order study and the several-items study ran under the chapter's rule only; they are left
    out, so their claims read "not reproduced here" under another rule."""
    res = dict(results)
    st = res.get("real")
    if st is not None and ties != st.ties:
        res["real"] = replace(st, ties=check_ties(ties))
        res.pop("real_order", None)
        res.pop("real_multi", None)
    return res


def tie_variants(results: Mapping[str, Any], rules: Sequence[str] = TIE_RULES) -> dict[str, Any]:
    """The results under every tie rule of ``rules`` other than the study's own, for
    :meth:`Ledger.evaluate`'s ``tie_variants`` (empty without a real-data study)."""
    st = results.get("real")
    if st is None:
        return {}
    return {rule: under_ties(results, rule) for rule in rules if rule != st.ties}


#: the results :func:`under_ties` replaces or drops: a claim reading none of them has the same
#: outcome under every tie rule
TIED_RESULTS = ("real", "real_order", "real_multi")


@analyses.analysis
def by_tie_rule(
    results: Mapping[str, Any],
    rules: Sequence[str] = TIE_RULES,
    *,
    dataset: str,
    profile: str,
) -> dict[str, pd.DataFrame]:
    """The ledger under each tie rule of ``rules``, by rule, as :func:`evaluate_under` gives it,
    each claim evaluated once per rule where its results change (:data:`TIED_RESULTS`) and once
    in all otherwise: what :func:`tie_dependence`, :func:`evaluate` and :func:`report` read, so
    that the chapter evaluates each rule once."""
    if not rules:
        raise ValueError("by_tie_rule needs at least one tie rule")
    rules = [check_ties(r) for r in dict.fromkeys(rules)]
    base = LEDGER.evaluate(results, dataset=dataset, profile=profile)
    own = _own_rule(results)
    moved = [(i, c.id) for i, c in enumerate(LEDGER) if set(c.needs) & set(TIED_RESULTS)]
    frames = {}
    for rule in rules:
        if own is None or rule == own:
            frames[rule] = base
            continue
        res = under_ties(results, rule)
        rows = base.to_dict("records")
        for i, cid in moved:
            rows[i] = LEDGER.row(cid, res, dataset=dataset, profile=profile)
        frames[rule] = pd.DataFrame(rows, columns=base.columns).astype(base.dtypes.to_dict())
    return frames


def _own_rule(results: Mapping[str, Any]) -> str | None:
    st = results.get("real")
    return None if st is None else str(st.ties)


def _frames(
    results: Mapping[str, Any],
    rules: Sequence[str],
    frames: Mapping[str, pd.DataFrame] | None,
    *,
    dataset: str,
    profile: str,
) -> Mapping[str, pd.DataFrame]:
    """``frames`` checked to hold every rule of ``rules``, or computed (:func:`by_tie_rule`)."""
    if frames is None:
        return by_tie_rule(results, rules, dataset=dataset, profile=profile)
    lacking = [r for r in rules if r not in frames]
    if lacking:
        raise ValueError(
            f"frames lack the tie rules {lacking}: compute them with by_tie_rule(results, rules)"
        )
    return frames


def evaluate(
    results: Mapping[str, Any],
    *,
    dataset: str,
    profile: str,
    rules: Sequence[str] = TIE_RULES,
    frames: Mapping[str, pd.DataFrame] | None = None,
) -> pd.DataFrame:
    """The ledger on ``results``, each claim's ``tie_sensitive`` assessed under ``rules``
    (:func:`~recmeta.ledger.claims.with_tie_sensitive`), reading ``frames`` (from
    :func:`by_tie_rule` on the same results) when given instead of evaluating again."""
    own = _own_rule(results)
    if own is None:
        return LEDGER.evaluate(results, dataset=dataset, profile=profile)
    need = list(dict.fromkeys([own, *rules]))
    got = _frames(results, need, frames, dataset=dataset, profile=profile)
    others = {r: got[r] for r in rules if r != own}
    if not others:
        return got[own]
    return with_tie_sensitive(got[own], others)


def report(
    results: Mapping[str, Any],
    *,
    dataset: str,
    profile: str,
    show: bool = True,
    root: str | os.PathLike | None = None,
    frames: Mapping[str, pd.DataFrame] | None = None,
) -> pd.DataFrame:
    """:func:`recmeta.papers.report` for this chapter, with ``tie_sensitive`` assessed under
    every tie rule (:func:`evaluate`, reading ``frames`` from :func:`by_tie_rule` when given)."""
    from .. import report as store_and_show

    frame = evaluate(results, dataset=dataset, profile=profile, rules=TIE_RULES, frames=frames)
    return store_and_show(
        LEDGER.chapter,
        results,
        dataset=dataset,
        profile=profile,
        show=show,
        root=root,
        frame=frame,
    )


def evaluate_under(
    results: Mapping[str, Any], ties: str, *, dataset: str, profile: str
) -> pd.DataFrame:
    """The ledger evaluated with the real-data claims read under another tie rule (not stored;
    see :func:`under_ties`)."""
    return LEDGER.evaluate(under_ties(results, ties), dataset=dataset, profile=profile)


def tie_dependence(
    results: Mapping[str, Any],
    rules: Sequence[str],
    *,
    dataset: str,
    profile: str,
    frames: Mapping[str, pd.DataFrame] | None = None,
) -> pd.DataFrame:
    """Verdict of every real-data claim under each tie rule: rows claims, columns rules, plus
    whether the verdict changes (claims not run under a rule are left out of that comparison).
    Reads ``frames`` (from :func:`by_tie_rule` on the same results) when given."""
    got = _frames(results, rules, frames, dataset=dataset, profile=profile)
    by = {rule: got[rule].set_index("claim") for rule in rules}
    first = by[rules[0]]
    real = [c.id for c in LEDGER if "real" in c.needs]
    table = pd.DataFrame({rule: f.loc[real, "verdict"] for rule, f in by.items()})
    table.insert(0, "statement", first.loc[real, "statement"])
    run = table[list(rules)].where(table[list(rules)] != "not reproduced here")
    table["depends on ties"] = run.nunique(axis=1, dropna=True) > 1
    return table
