"""Claims as code: a paper's claims, our estimates, and the verdict rules that compare them.

A chapter ends with a *ledger*: one row per claim of its paper, with the paper's printed value,
ours (a number with an uncertainty interval, or an order of items), a verdict and the reason for
it. The pieces:

- :class:`Estimate` — our value and its interval (bootstrap over users, Monte-Carlo band over
  repeated masks, t interval over folds, or exact), with the method that produced it.
- :class:`Verdict` — *agrees*, *differs*, *inconclusive* (the difference lies inside our
  uncertainty), *not reproduced here*.
- Verdict rules, small pure functions returning an :class:`Outcome`: :func:`value_rule` for a
  number, :func:`sign_rule` for a direction ("A beats B", "the curve falls"), :func:`order_rule`
  for "X is the best", :func:`not_reproduced` for what this book does not run.
- :class:`Claim` — the paper's claim in our words, its source and printed value, and a function
  computing the :class:`Outcome` from the chapter's named results.
- :class:`Ledger` — the ordered claims of one chapter; :meth:`Ledger.evaluate` gives the table,
  :func:`to_markdown` renders it, :func:`counts` tallies the verdicts.

Three kinds of estimate enter the rules:

- an *interval* ``[low, high]`` (``low <= high``): a statement about our uncertainty;
- an *exact* value (:meth:`Estimate.exact`): the interval ``[value, value]``, for quantities that
  involve no sampling (an analytic formula, a count);
- a *point* without interval (``low = high = None``, :meth:`Estimate.point`): the uncertainty is
  unknown. The rules conclude from a point only what would hold for *any* interval around it:
  a value within the tolerance agrees, but no difference, sign or order is ever established.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, Literal

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

__all__ = [
    "Estimate",
    "Verdict",
    "Outcome",
    "Claim",
    "Ledger",
    "MissingResult",
    "COLUMNS",
    "value_rule",
    "sign_rule",
    "order_rule",
    "rank_rule",
    "rank_range",
    "clearly_above",
    "top_set",
    "not_reproduced",
    "format_number",
    "format_estimate",
    "format_paper",
    "ours_text",
    "paper_text",
    "to_markdown",
    "counts",
]

#: columns of :meth:`Ledger.evaluate`'s frame, in order
COLUMNS = (
    "chapter", "claim", "statement", "source", "paper_value", "paper_dataset", "rule",
    "ours", "low", "high", "ours_text", "method", "verdict", "reason", "dataset", "profile",
)

_DASH = "—"


# --------------------------------------------------------------------------------------------
# Estimates


def _level(level: float) -> float:
    level = float(level)
    if not 0.0 < level < 1.0:
        raise ValueError(f"level must lie strictly between 0 and 1, got {level!r}")
    return level


def _pct(level: float) -> str:
    return f"{level * 100:g} %"


def _finite_1d(values: ArrayLike, name: str, minimum: int = 1) -> np.ndarray:
    x = np.asarray(values, dtype=float)
    if x.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional, got shape {x.shape}")
    if not np.isfinite(x).all():
        bad = int((~np.isfinite(x)).sum())
        raise ValueError(f"{name} holds {bad} NaN or infinite value(s); drop or fill them first")
    if x.size < minimum:
        raise ValueError(f"{name} needs at least {minimum} value(s), got {x.size}")
    return x


@dataclass(frozen=True)
class Estimate:
    """Our value of a quantity, with an uncertainty interval ``[low, high]`` when there is one.

    ``low`` and ``high`` are both ``None`` (uncertainty unknown) or both numbers with
    ``low <= high``. The interval need not contain ``value`` (a percentile interval of skewed
    replicates may not). ``method`` says in words how the interval was obtained, e.g.
    ``"bootstrap over users (BCa, 9999 resamples), 95 %"``.
    """

    value: float
    low: float | None = None
    high: float | None = None
    method: str = "point estimate, no interval"

    def __post_init__(self) -> None:
        object.__setattr__(self, "value", float(self.value))
        if not math.isfinite(self.value):
            raise ValueError(f"an Estimate's value must be finite, got {self.value!r}")
        if (self.low is None) != (self.high is None):
            raise ValueError("give both ends of the interval (low and high) or neither")
        if self.low is not None and self.high is not None:
            low, high = float(self.low), float(self.high)
            if not (math.isfinite(low) and math.isfinite(high)):
                raise ValueError(f"interval ends must be finite, got [{low!r}, {high!r}]")
            if low > high:
                raise ValueError(f"interval [{low!r}, {high!r}] has low > high")
            object.__setattr__(self, "low", low)
            object.__setattr__(self, "high", high)

    @property
    def has_interval(self) -> bool:
        """Whether the uncertainty is known (an interval, possibly of width zero)."""
        return self.low is not None

    @property
    def width(self) -> float | None:
        """``high - low``, or ``None`` without an interval."""
        return None if self.low is None or self.high is None else self.high - self.low

    def __str__(self) -> str:
        return format_estimate(self)

    # -- constructors ------------------------------------------------------------------------

    @classmethod
    def exact(cls, value: float, method: str = "exact (no sampling)") -> Estimate:
        """A value without sampling error: the interval ``[value, value]``."""
        return cls(value, value, value, method)

    @classmethod
    def point(cls, value: float, method: str = "point estimate, no interval") -> Estimate:
        """A value whose uncertainty is unknown: no interval."""
        return cls(value, None, None, method)

    @classmethod
    def from_samples(
        cls,
        samples: ArrayLike,
        level: float = 0.95,
        *,
        value: float | None = None,
        method: str | None = None,
    ) -> Estimate:
        """Percentile interval of replicate values (bootstrap replicates, repeated random masks).

        ``[low, high]`` are the ``(1 - level)/2`` and ``(1 + level)/2`` quantiles of ``samples``
        (linear interpolation, ``numpy.quantile``); ``value`` defaults to their mean. This is a
        band of the replicates' spread, e.g. the Monte-Carlo band of Kendall's τ over 50 masks.
        """
        level = _level(level)
        x = _finite_1d(samples, "samples")
        low, high = np.quantile(x, [(1 - level) / 2, (1 + level) / 2])
        return cls(
            float(x.mean()) if value is None else value, float(low), float(high),
            method or f"percentile interval of {x.size} replicates, {_pct(level)}",
        )

    @classmethod
    def mean_se(cls, values: ArrayLike, level: float = 0.95, *, method: str | None = None) -> Estimate:
        """Mean of ``values`` with Student's t interval ``mean ± t_{n-1} · s/√n``.

        Computed by ``scipy.stats.ttest_1samp(values, 0).confidence_interval(level)``; suited to a
        few independent replicates such as cross-validation folds. Identical values give the
        zero-width interval.
        """
        from scipy import stats

        level = _level(level)
        x = _finite_1d(values, "values", minimum=2)
        mean = float(x.mean())
        method = method or f"t interval over {x.size} values, {_pct(level)}"
        if np.all(x == x[0]):
            return cls(mean, mean, mean, method)
        ci = stats.ttest_1samp(x, 0.0).confidence_interval(confidence_level=level)
        return cls(mean, float(ci.low), float(ci.high), method)

    @classmethod
    def bootstrap_mean(
        cls,
        per_user_values: ArrayLike,
        level: float = 0.95,
        seed: int = 0,
        n_resamples: int = 9999,
        *,
        ci_method: Literal["percentile", "basic", "BCa"] = "BCa",
        method: str | None = None,
    ) -> Estimate:
        """Mean of a per-user array with a bootstrap interval over users (``scipy.stats.bootstrap``).

        The interval is ``scipy.stats.bootstrap((x,), np.mean, n_resamples=n_resamples,
        confidence_level=level, method=ci_method, rng=np.random.default_rng(seed))``: resampling
        users with replacement, bias-corrected and accelerated (BCa, Efron 1987) by default. The
        resamples are drawn in batches to bound memory, which does not change the result. When
        every value is equal the interval has width zero.
        """
        from scipy import stats

        level = _level(level)
        x = _finite_1d(per_user_values, "per_user_values", minimum=2)
        mean = float(x.mean())
        method = method or f"bootstrap over {x.size} users ({ci_method}, {n_resamples} resamples), {_pct(level)}"
        if np.all(x == x[0]):
            return cls(mean, mean, mean, method)
        res = stats.bootstrap(
            (x,), np.mean, n_resamples=int(n_resamples), confidence_level=level,
            method=ci_method, rng=np.random.default_rng(seed), vectorized=True,
            batch=max(1, min(int(n_resamples), 2**20 // x.size)),
        )
        ci = res.confidence_interval
        return cls(mean, float(ci.low), float(ci.high), method)

    @classmethod
    def bootstrap_diff(
        cls,
        a: ArrayLike,
        b: ArrayLike,
        level: float = 0.95,
        seed: int = 0,
        n_resamples: int = 9999,
        *,
        ci_method: Literal["percentile", "basic", "BCa"] = "BCa",
        method: str | None = None,
    ) -> Estimate:
        """Paired mean difference ``mean(a - b)`` with a bootstrap interval over users.

        ``a`` and ``b`` are per-user values aligned by user (e.g. two systems' scores); resampling
        users keeps each pair together, so this is :meth:`bootstrap_mean` of ``a - b``.
        """
        x = _finite_1d(a, "a", minimum=2)
        y = _finite_1d(b, "b", minimum=2)
        if x.shape != y.shape:
            raise ValueError(f"paired arrays differ in length: {x.size} and {y.size}")
        method = method or (
            f"paired bootstrap over {x.size} users ({ci_method}, {n_resamples} resamples), {_pct(_level(level))}"
        )
        return cls.bootstrap_mean(x - y, level, seed, n_resamples, ci_method=ci_method, method=method)


# --------------------------------------------------------------------------------------------
# Formatting


def _decimals(x: float, sig: int) -> int:
    """Decimals giving ``sig`` significant digits of ``x`` in fixed notation (at least 0)."""
    if x == 0 or not math.isfinite(x):
        return max(0, sig - 1)
    return max(0, sig - 1 - math.floor(math.log10(abs(x))))


def _fixed_ok(*xs: float) -> bool:
    return all(x == 0 or 1e-4 <= abs(x) < 1e7 for x in xs)


def format_number(x: float | None, digits: int = 3) -> str:
    """``x`` with ``digits`` significant digits (fixed notation unless tiny or huge); ``—`` for none."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return _DASH
    x = float(x)
    if not _fixed_ok(x):
        return f"{x:.{digits}g}"
    return f"{x:.{_decimals(x, digits)}f}"


def format_estimate(est: Estimate | None, digits: int = 3) -> str:
    """``value [low, high]`` with a precision that shows ``digits`` significant digits of the value
    and at least two of the interval's width (so a narrow interval does not print as one number)."""
    if est is None:
        return _DASH
    if est.low is None or est.high is None:
        return format_number(est.value, digits)
    xs = (est.value, est.low, est.high)
    if not _fixed_ok(*xs):
        return f"{est.value:.{digits}g} [{est.low:.{digits}g}, {est.high:.{digits}g}]"
    d = _decimals(est.value, digits)
    width = est.high - est.low
    if width > 0:
        d = max(d, min(_decimals(width, 2), _decimals(est.value, 6) if est.value else 6))
    return f"{est.value:.{d}f} [{est.low:.{d}f}, {est.high:.{d}f}]"


def format_paper(value: float | str | None) -> str:
    """A paper's value as printed: numbers with up to six significant digits, text as is."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return _DASH
    if isinstance(value, (int, float, np.integer, np.floating)):
        return f"{float(value):g}"
    return str(value)


# --------------------------------------------------------------------------------------------
# Verdicts and rules


class Verdict(str, Enum):
    """How our result stands to the paper's claim."""

    AGREES = "agrees"
    DIFFERS = "differs"
    INCONCLUSIVE = "inconclusive"
    NOT_REPRODUCED = "not reproduced here"

    def __str__(self) -> str:
        return self.value


@dataclass(frozen=True)
class Outcome:
    """A verdict with our estimate and one computed sentence saying why.

    ``detail`` holds our result as text when it is not a number (an order such as
    ``"P > R > nDCG"``); ``ours`` may then still carry the estimate the verdict rests on.
    """

    verdict: Verdict
    ours: Estimate | None
    reason: str
    detail: str | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "verdict", Verdict(self.verdict))
        if not self.reason or not self.reason.strip():
            raise ValueError("an Outcome needs a reason")


def not_reproduced(reason: str) -> Outcome:
    """Verdict for a claim this book does not test (other data, other systems, a skipped study)."""
    return Outcome(Verdict.NOT_REPRODUCED, None, reason)


def _tolerance(paper: float, tolerance: float, relative: bool) -> float:
    if tolerance < 0 or not math.isfinite(tolerance):
        raise ValueError(f"tolerance must be finite and >= 0, got {tolerance!r}")
    return tolerance * abs(paper) if relative else tolerance


def value_rule(
    paper: float,
    ours: Estimate,
    tolerance: float = 0.0,
    relative: bool = False,
    *,
    max_width: float | None = None,
    label: str = "ours",
) -> Outcome:
    """Compare the paper's number with ours.

    With ``tol = tolerance`` (or ``tolerance · |paper|`` when ``relative``), e.g. half a unit of
    the paper's last printed digit:

    - our interval ``[low, high]`` widened by ``tol`` contains ``paper`` → **agrees**; but if
      ``max_width`` is given and ``high - low > max_width``, the interval is too wide to tell →
      **inconclusive**;
    - ``paper`` lies outside ``[low - tol, high + tol]`` (``paper ± tol`` misses our interval
      entirely) → **differs**;
    - no interval: ``|paper - value| <= tol`` → **agrees** (true whatever the interval);
      otherwise → **inconclusive** (a difference is never called without an interval).

    So a difference inside our band never reads "differs".
    """
    paper = float(paper)
    if not math.isfinite(paper):
        raise ValueError(f"the paper's value must be finite, got {paper!r}")
    tol = _tolerance(paper, tolerance, relative)
    p = format_paper(paper)
    widened = f" widened by {format_number(tol)}" if tol > 0 else ""
    if ours.low is None or ours.high is None:
        gap = ours.value - paper
        if abs(gap) <= tol:
            return Outcome(Verdict.AGREES, ours,
                           f"{label} {format_estimate(ours)} is within {format_number(tol)} of the paper's {p}")
        side = "above" if gap > 0 else "below"
        return Outcome(Verdict.INCONCLUSIVE, ours,
                       f"{label} {format_estimate(ours)} lies {side} the paper's {p} by "
                       f"{format_number(abs(gap))}, but has no interval to judge the difference")
    if ours.low - tol <= paper <= ours.high + tol:
        if max_width is not None and ours.high - ours.low > max_width:
            return Outcome(Verdict.INCONCLUSIVE, ours,
                           f"the paper's {p} lies inside {label} {format_estimate(ours)}, but that "
                           f"interval is wider than {format_number(max_width)}: too wide to tell")
        return Outcome(Verdict.AGREES, ours,
                       f"the paper's {p} lies inside {label} {format_estimate(ours)}{widened}")
    side = "below" if ours.high + tol < paper else "above"
    by = f", by more than the tolerance {format_number(tol)}" if tol > 0 else ""
    return Outcome(Verdict.DIFFERS, ours,
                   f"{label} {format_estimate(ours)} lies {side} the paper's {p}{by}")


def sign_rule(
    ours: Estimate,
    expected: Literal["positive", "negative"],
    *,
    label: str = "ours",
) -> Outcome:
    """A direction claim, as the sign of a difference or slope (``A - B``, ``τ(5 %) - τ(100 %)``).

    - the whole interval lies on the expected side of 0 (``low > 0`` for positive, ``high < 0``
      for negative) → **agrees**;
    - the whole interval lies on the other side → **differs**;
    - the interval contains 0 (including touching it), or there is no interval → **inconclusive**.
    """
    if expected not in ("positive", "negative"):
        raise ValueError(f"expected must be 'positive' or 'negative', got {expected!r}")
    text = f"{label} {format_estimate(ours)}"
    if ours.low is None or ours.high is None:
        sign = "positive" if ours.value > 0 else "negative" if ours.value < 0 else "zero"
        return Outcome(Verdict.INCONCLUSIVE, ours,
                       f"{text} is {sign} but has no interval, so its sign is not established "
                       f"(expected {expected})")
    if ours.low > 0 or ours.high < 0:
        side = "positive" if ours.low > 0 else "negative"
        where = "above" if side == "positive" else "below"
        if side == expected:
            return Outcome(Verdict.AGREES, ours, f"{text} lies wholly {where} 0, as expected ({expected})")
        return Outcome(Verdict.DIFFERS, ours, f"{text} lies wholly {where} 0; the paper expects {expected}")
    return Outcome(Verdict.INCONCLUSIVE, ours,
                   f"{text} contains 0, so the direction is not established (expected {expected})")


def _overlap(a: Estimate, b: Estimate) -> bool:
    """Whether two intervals share a point; an estimate without interval overlaps everything."""
    if a.low is None or a.high is None or b.low is None or b.high is None:
        return True
    return a.low <= b.high and b.low <= a.high


def _ranked(estimates: Mapping[str, Estimate], higher_is_better: bool) -> list[str]:
    if len(estimates) < 2:
        raise ValueError(f"an order needs at least two items, got {list(estimates)}")
    names = list(estimates)
    values = np.array([estimates[n].value for n in names])
    order = np.argsort(-values if higher_is_better else values, kind="stable")
    return [names[i] for i in order]


def top_set(estimates: Mapping[str, Estimate], higher_is_better: bool = True) -> tuple[str, ...]:
    """Items tied at the top: the best by value, then every item whose interval overlaps the best's.

    Ties between equal values keep the mapping's order. An estimate without interval overlaps
    every other, so it is tied with the best (and, as the best, ties with everything).
    """
    ranked = _ranked(estimates, higher_is_better)
    best = estimates[ranked[0]]
    return (ranked[0], *(n for n in ranked[1:] if _overlap(best, estimates[n])))


def _join(names: Iterable[str]) -> str:
    names = list(names)
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def order_rule(
    estimates: Mapping[str, Estimate],
    expected_best: str | Iterable[str],
    higher_is_better: bool = True,
) -> Outcome:
    """"X is the best": compare the top of our order with the paper's expected best item(s).

    The *top set* (:func:`top_set`) is the best item by value plus every item whose interval
    overlaps the best's interval (a conservative notion of a tie: intervals that overlap do not
    show a difference; for a paired test use :func:`sign_rule` on
    :meth:`Estimate.bootstrap_diff`).

    - the top set is a single item and it is expected → **agrees**;
    - the top set holds several items and one of them is expected → **inconclusive**;
    - no expected item is in the top set → **differs**.

    ``ours`` is the best item's estimate; ``detail`` gives the order by value, ``≈`` joining the
    items tied at the top (``"P ≈ R > nDCG"``).
    """
    expected = {expected_best} if isinstance(expected_best, str) else set(expected_best)
    if not expected:
        raise ValueError("expected_best names no item")
    unknown = expected - set(estimates)
    if unknown:
        raise ValueError(f"expected item(s) {sorted(unknown)} have no estimate; estimated: {list(estimates)}")
    ranked = _ranked(estimates, higher_is_better)
    top = top_set(estimates, higher_is_better)
    rest = [n for n in ranked if n not in top]
    detail = " > ".join([" ≈ ".join(top), *rest])
    best = ranked[0]
    wanted = _join(sorted(expected))
    hits = [n for n in top if n in expected]
    if len(top) == 1:
        text = f"{best} is best ({format_estimate(estimates[best])}) and its interval overlaps no other's"
        if hits:
            return Outcome(Verdict.AGREES, estimates[best], text, detail)
        return Outcome(Verdict.DIFFERS, estimates[best], f"{text}; the paper expects {wanted}", detail)
    tie = f"{_join(top)} tie at the top (overlapping intervals)"
    if hits:
        return Outcome(Verdict.INCONCLUSIVE, estimates[best], f"{tie}; the paper expects {wanted}", detail)
    return Outcome(Verdict.DIFFERS, estimates[best], f"{tie}, without the expected {wanted}", detail)


def clearly_above(a: Estimate, b: Estimate) -> bool:
    """Whether ``a`` lies wholly above ``b`` (intervals that do not touch; no interval: never)."""
    if a.low is None or a.high is None or b.low is None or b.high is None:
        return False
    return a.low > b.high


def rank_range(estimates: Mapping[str, Estimate], name: str, higher_is_better: bool = True) -> tuple[int, int]:
    """The ranks ``name`` can take given the intervals: ``(1 + #clearly better, n − #clearly worse)``.

    "Clearly" means intervals that do not overlap (:func:`clearly_above`), the notion of a tie
    of :func:`order_rule`; an estimate without interval overlaps everything, so its range is
    ``(1, n)``.
    """
    if name not in estimates:
        raise ValueError(f"no estimate for {name!r}; estimated: {list(estimates)}")
    me = estimates[name]
    others = [e for k, e in estimates.items() if k != name]
    above = sum(clearly_above(e, me) if higher_is_better else clearly_above(me, e) for e in others)
    below = sum(clearly_above(me, e) if higher_is_better else clearly_above(e, me) for e in others)
    return 1 + above, len(estimates) - below


def rank_rule(
    estimates: Mapping[str, Estimate],
    members: Iterable[str],
    best: int,
    worst: int,
    higher_is_better: bool = True,
    *,
    value: Estimate | None = None,
) -> Outcome:
    """"The members rank between ``best`` and ``worst``" ("X, Y and Z are the three most
    robust"; with ``best=1, worst=k`` and k members, "X and Y are the k best").

    With :func:`rank_range` of each member:

    - every member's range lies inside ``[best, worst]`` → **agrees** (whatever the ties);
    - some member's range lies wholly outside it → **differs**; and when the members are as
      many as the ranks claimed (an exact set), also when more other items are clearly better
      than a member than the ``best − 1`` ranks above the set can hold (or clearly worse than
      the ``n − worst`` ranks below it can hold): one of them would have to enter the set;
    - otherwise overlapping intervals leave it open → **inconclusive**.

    ``ours`` is ``value`` (e.g. the best item's estimate), else none; ``detail`` gives each
    member's range and the order by value.
    """
    members = list(members)
    n = len(estimates)
    if not members or not 1 <= best <= worst <= n:
        raise ValueError(f"need members and 1 <= best <= worst <= {n}, got {members}, {best}, {worst}")
    unknown = [m for m in members if m not in estimates]
    if unknown:
        raise ValueError(f"member(s) {unknown} have no estimate; estimated: {list(estimates)}")
    ranges = {m: rank_range(estimates, m, higher_is_better) for m in members}
    order = _ranked(estimates, higher_is_better)
    text = ", ".join(f"{m} {lo}–{hi}" if lo != hi else f"{m} {lo}" for m, (lo, hi) in ranges.items())
    detail = f"ranks {text} of {n}; best first: {', '.join(order)}"
    want = f"{best}–{worst}" if best != worst else f"{best}"
    outside = [m for m, (lo, hi) in ranges.items() if hi < best or lo > worst]
    if outside:
        m = outside[0]
        lo, hi = ranges[m]
        where = f"rank {lo}" if lo == hi else f"only rank {lo}–{hi}"
        return Outcome(Verdict.DIFFERS, value, f"{m} can {where} of {n}, outside the claimed {want}",
                       detail)
    if len(members) == worst - best + 1:
        rest = [k for k in estimates if k not in members]

        def better(a: str, b: str) -> bool:
            return (clearly_above(estimates[a], estimates[b]) if higher_is_better
                    else clearly_above(estimates[b], estimates[a]))

        for m in members:
            over = [o for o in rest if better(o, m)]
            under = [o for o in rest if better(m, o)]
            if len(over) > best - 1 or len(under) > n - worst:
                o = (over or under)[0]
                side = "above" if len(over) > best - 1 else "below"
                return Outcome(Verdict.DIFFERS, value,
                               f"{o} is separated {side} {m} ({format_estimate(estimates[o])} against "
                               f"{format_estimate(estimates[m])}), so {', '.join(members)} cannot "
                               f"hold ranks {want} together", detail)
    if all(best <= lo and hi <= worst for lo, hi in ranges.values()):
        return Outcome(Verdict.AGREES, value,
                       f"{', '.join(members)} rank within {want} of {n} whatever the overlaps", detail)
    open_ = [m for m, (lo, hi) in ranges.items() if not (best <= lo and hi <= worst)]
    return Outcome(Verdict.INCONCLUSIVE, value,
                   f"overlapping intervals leave {', '.join(open_)} free to rank outside {want} "
                   f"of {n}", detail)


# --------------------------------------------------------------------------------------------
# Claims and ledgers


class MissingResult(LookupError):
    """A claim read a result it did not declare in ``needs``."""


class _Needed(Mapping[str, Any]):
    """Read-only view of the results a claim declared; reading any other name is an error."""

    def __init__(self, results: Mapping[str, Any], claim: Claim) -> None:
        self._results = results
        self._claim = claim

    def _check(self, key: str) -> None:
        if key not in self._claim.needs:
            raise MissingResult(
                f"claim {self._claim.id!r} reads result {key!r}, which is not among its needs "
                f"{self._claim.needs}; add it there"
            )

    def __getitem__(self, key: str) -> Any:
        self._check(key)
        return self._results[key]

    def __contains__(self, key: object) -> bool:
        self._check(str(key))
        return key in self._results

    def get(self, key: str, default: Any = None) -> Any:
        self._check(key)
        return self._results.get(key, default)

    def __iter__(self) -> Iterator[str]:
        return (k for k in self._claim.needs if k in self._results)

    def __len__(self) -> int:
        return sum(k in self._results for k in self._claim.needs)


_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:+-]*$")


@dataclass(frozen=True)
class Claim:
    """One claim of a paper and how to check it on the chapter's results.

    ``evaluate`` receives the chapter's named results restricted to ``needs`` and returns an
    :class:`Outcome`; ``rule`` says the verdict rule in words for the reader. ``paper_value`` is
    the number or text as the paper prints it, ``paper_dataset`` the data it was measured on.
    """

    id: str
    chapter: str
    statement: str
    source: str
    rule: str
    evaluate: Callable[[Mapping[str, Any]], Outcome] = field(repr=False)
    paper_value: float | str | None = None
    paper_dataset: str | None = None
    needs: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if not _ID.match(self.id):
            raise ValueError(f"claim id {self.id!r} must be non-empty letters, digits and . _ : + -")
        for name in ("chapter", "statement", "source", "rule"):
            if not str(getattr(self, name)).strip():
                raise ValueError(f"claim {self.id!r} needs a non-empty {name}")
        if not callable(self.evaluate):
            raise TypeError(f"claim {self.id!r}: evaluate must be callable")
        object.__setattr__(self, "needs", tuple(self.needs))

    def missing(self, results: Mapping[str, Any]) -> list[str]:
        """The needed results that are absent (or ``None``) in ``results``."""
        return [n for n in self.needs if results.get(n) is None]

    def outcome(self, results: Mapping[str, Any], *, strict: bool = True) -> Outcome:
        """Evaluate the claim.

        A needed result that is absent gives **not reproduced here**, naming it. With
        ``strict=False`` an error raised by ``evaluate`` is recorded as **not reproduced here**
        with the error as the reason, instead of propagating.
        """
        missing = self.missing(results)
        if missing:
            names = ", ".join(repr(m) for m in missing)
            return not_reproduced(
                f"result {names} was not computed in this run (e.g. skipped by the profile)"
                if len(missing) == 1 else
                f"results {names} were not computed in this run (e.g. skipped by the profile)"
            )
        try:
            out = self.evaluate(_Needed(results, self))
            if not isinstance(out, Outcome):
                raise TypeError(f"claim {self.id!r}: evaluate returned {type(out).__name__}, not an Outcome")
        except Exception as exc:
            if strict:
                raise
            return not_reproduced(f"evaluation failed: {type(exc).__name__}: {exc}")
        return out


def _nan(x: float | None) -> float:
    return float("nan") if x is None else float(x)


class Ledger:
    """The ordered claims of one chapter (one paper).

    Register claims with :meth:`add` or the :meth:`claim` decorator::

        ledger = Ledger("robustness", paper="valcarce2018robustness")

        @ledger.claim("valcarce2018.fig5.precision-most-robust", statement=..., source="§5.1, Fig. 5a",
                      paper_value="P", paper_dataset="ML-1M", rule="order rule on mean τ",
                      needs=("tau_sparsity",))
        def _(results):
            return order_rule(..., expected_best="P")
    """

    def __init__(self, chapter: str, *, paper: str | None = None, title: str | None = None) -> None:
        if not chapter or not chapter.strip():
            raise ValueError("a ledger needs a chapter name")
        self.chapter = chapter
        self.paper = paper
        self.title = title or chapter
        self._claims: dict[str, Claim] = {}

    def __repr__(self) -> str:
        return f"Ledger({self.chapter!r}, {len(self)} claims)"

    def __len__(self) -> int:
        return len(self._claims)

    def __iter__(self) -> Iterator[Claim]:
        return iter(self._claims.values())

    def __getitem__(self, claim_id: str) -> Claim:
        try:
            return self._claims[claim_id]
        except KeyError:
            known = ", ".join(self._claims)
            raise KeyError(f"no claim {claim_id!r} in ledger {self.chapter!r}; claims: {known}") from None

    @property
    def ids(self) -> list[str]:
        return list(self._claims)

    def add(self, claim: Claim) -> Claim:
        """Append ``claim``; its chapter must be the ledger's and its id new."""
        if claim.chapter != self.chapter:
            raise ValueError(f"claim {claim.id!r} belongs to chapter {claim.chapter!r}, not {self.chapter!r}")
        if claim.id in self._claims:
            raise ValueError(f"ledger {self.chapter!r} already has a claim {claim.id!r}")
        self._claims[claim.id] = claim
        return claim

    def claim(
        self,
        id: str,
        *,
        statement: str,
        source: str,
        rule: str,
        paper_value: float | str | None = None,
        paper_dataset: str | None = None,
        needs: Iterable[str] = (),
    ) -> Callable[[Callable[[Mapping[str, Any]], Outcome]], Callable[[Mapping[str, Any]], Outcome]]:
        """Decorator registering the decorated function as the ``evaluate`` of a new claim."""

        def register(fn: Callable[[Mapping[str, Any]], Outcome]) -> Callable[[Mapping[str, Any]], Outcome]:
            self.add(Claim(id=id, chapter=self.chapter, statement=statement, source=source,
                           rule=rule, evaluate=fn, paper_value=paper_value,
                           paper_dataset=paper_dataset, needs=tuple(needs)))
            return fn

        return register

    def evaluate(
        self,
        results: Mapping[str, Any],
        *,
        dataset: str,
        profile: str,
        strict: bool = True,
    ) -> pd.DataFrame:
        """Evaluate every claim on ``results``: one row per claim, columns :data:`COLUMNS`.

        ``ours``/``low``/``high`` are floats (NaN when absent), ``ours_text`` our result as text
        when it is not a number, ``verdict`` the :class:`Verdict`'s value. See
        :meth:`Claim.outcome` for absent results and ``strict``.
        """
        from ..chapters import PROFILES

        if profile not in PROFILES:
            raise ValueError(f"profile {profile!r} is not one of {PROFILES}")
        rows = []
        for c in self:
            out = c.outcome(results, strict=strict)
            est = out.ours
            rows.append({
                "chapter": self.chapter, "claim": c.id, "statement": c.statement, "source": c.source,
                "paper_value": c.paper_value, "paper_dataset": c.paper_dataset, "rule": c.rule,
                "ours": _nan(est.value if est else None),
                "low": _nan(est.low if est else None), "high": _nan(est.high if est else None),
                "ours_text": out.detail or "", "method": est.method if est else "",
                "verdict": out.verdict.value, "reason": out.reason,
                "dataset": str(dataset), "profile": profile,
            })
        frame = pd.DataFrame(rows, columns=list(COLUMNS))
        frame[["ours", "low", "high"]] = frame[["ours", "low", "high"]].astype(float)
        frame["paper_value"] = frame["paper_value"].astype(object)
        return frame

    @staticmethod
    def to_markdown(frame: pd.DataFrame, digits: int = 3) -> str:
        """See :func:`to_markdown`."""
        return to_markdown(frame, digits)

    @staticmethod
    def counts(frame: pd.DataFrame) -> pd.Series:
        """See :func:`counts`."""
        return counts(frame)


def _row_estimate(row: Mapping[str, Any]) -> Estimate | None:
    value, low, high = (row.get(k) for k in ("ours", "low", "high"))
    if value is None or pd.isna(value):
        return None
    both = low is not None and high is not None and not pd.isna(low) and not pd.isna(high)
    return Estimate(value, low if both else None, high if both else None, str(row.get("method") or ""))


def ours_text(row: Mapping[str, Any], digits: int = 3) -> str:
    """Our result of one ledger row as text: ``ours_text`` if given, else ``value [low, high]``."""
    text = row.get("ours_text")
    if isinstance(text, str) and text:
        return text
    return format_estimate(_row_estimate(row), digits)


def paper_text(row: Mapping[str, Any]) -> str:
    """The paper's value of one ledger row with its dataset: ``0.0077 (ML-1M)``."""
    value = format_paper(row.get("paper_value"))
    ds = row.get("paper_dataset")
    return f"{value} ({ds})" if isinstance(ds, str) and ds else value


def _cell(text: object) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def to_markdown(frame: pd.DataFrame, digits: int = 3) -> str:
    """The ledger table a chapter ends with: claim (source), paper (value, dataset), ours
    (``value [low, high]`` or text), verdict, reason.

    A chapter column is added when the frame spans several chapters, a dataset/profile column
    when it spans several runs.
    """
    records = frame.to_dict("records")
    multi_chapter = frame["chapter"].nunique() > 1 if len(frame) else False
    multi_run = frame[["dataset", "profile"]].drop_duplicates().shape[0] > 1 if len(frame) else False
    head = [*(["Chapter"] if multi_chapter else []), "Claim", "Paper", "Ours", "Verdict", "Why",
            *(["Run"] if multi_run else [])]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in records:
        cells = [
            *([r["chapter"]] if multi_chapter else []),
            f"{r['statement']} ({r['source']})", paper_text(r), ours_text(r, digits),
            r["verdict"], r["reason"],
            *([f"{r['dataset']}, {r['profile']}"] if multi_run else []),
        ]
        lines.append("| " + " | ".join(_cell(c) for c in cells) + " |")
    return "\n".join(lines) + "\n"


def counts(frame: pd.DataFrame) -> pd.Series:
    """Number of claims per verdict, every verdict listed (zeros included), in :class:`Verdict` order."""
    order = [v.value for v in Verdict]
    return frame["verdict"].astype(str).value_counts().reindex(order, fill_value=0).rename("claims")
