"""Verdicts and the rules that give them: a value, a sign, an order, a rank.

Each rule is a small pure function from our :class:`~recmeta.ledger.estimate.Estimate` (and the
paper's value) to an :class:`Outcome`: a :class:`Verdict` with one computed sentence saying why.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, replace
from decimal import Decimal
from enum import StrEnum
from typing import Any, Literal, TypeVar, cast

import numpy as np

from .estimate import Estimate, format_estimate, format_number, format_paper
from .order import format_order, order_groups

__all__ = [
    "Verdict",
    "Outcome",
    "not_reproduced",
    "value_rule",
    "Margin",
    "MEANING",
    "sign_rule",
    "order_rule",
    "rank_rule",
    "rank_range",
    "clearly_above",
    "top_set",
    "all_of",
    "equivalence_rule",
    "half_unit",
]


class Verdict(StrEnum):
    """How our result stands to the paper's claim (``str()`` of a member is its value)."""

    AGREES = "agrees"
    DIFFERS = "differs"
    INCONCLUSIVE = "inconclusive"
    HOLDS = "holds"
    FAILS = "fails"
    NOT_GRADED = "shown, not graded"
    NOT_REPRODUCED = "not reproduced here"


#: what each verdict means, for the ledger page's legend and ``recmeta claims``
MEANING: dict[Verdict, str] = {
    Verdict.AGREES: (
        "a value: our whole interval lies inside the paper's value ± the declared margin; "
        "a sign, order or rank: our intervals establish the paper's direction"
    ),
    Verdict.DIFFERS: (
        "a value: our whole interval lies outside the paper's value ± the margin; "
        "a sign, order or rank: our intervals establish the opposite"
    ),
    Verdict.INCONCLUSIVE: (
        "neither: our interval straddles the margin's edge, or the intervals overlap, or there is "
        "no interval; a wider interval only ever moves a verdict here"
    ),
    Verdict.HOLDS: "a derivation (identity, bound, closed form) that our computation confirms",
    Verdict.FAILS: "a derivation that our computation contradicts",
    Verdict.NOT_GRADED: (
        "a magnitude the paper measured on other data, shown beside ours and not graded"
    ),
    Verdict.NOT_REPRODUCED: "not tested here; the reason says why (other data, another study)",
}


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
    rule: str = "custom"
    margin: float | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "verdict", Verdict(self.verdict))
        if not self.rule or not self.rule.strip():
            raise ValueError("an Outcome needs the name of its rule")
        if not self.reason or not self.reason.strip():
            raise ValueError("an Outcome needs a reason")


_F = TypeVar("_F", bound=Callable[..., Outcome])


def _named(rule: str) -> Callable[[_F], _F]:
    """Mark every Outcome a rule function returns with the rule's name (``value``, ``sign``...)."""

    def wrap(fn: _F) -> _F:
        @functools.wraps(fn)
        def named(*args: Any, **kwargs: Any) -> Outcome:
            out = fn(*args, **kwargs)
            return out if out.rule != "custom" else replace(out, rule=rule)

        return cast(_F, named)

    return wrap


def not_reproduced(reason: str) -> Outcome:
    """Verdict for a claim this book does not test (other data, other systems, a skipped study)."""
    return Outcome(Verdict.NOT_REPRODUCED, None, reason, rule="none")


@_named("sign")
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
        return Outcome(
            Verdict.INCONCLUSIVE,
            ours,
            f"{text} is {sign} but has no interval, so its sign is not established "
            f"(expected {expected})",
        )
    low, high = ours.reach
    if low > 0 or high < 0:
        side = "positive" if low > 0 else "negative"
        where = "above" if side == "positive" else "below"
        if side == expected:
            return Outcome(
                Verdict.AGREES, ours, f"{text} lies wholly {where} 0, as expected ({expected})"
            )
        return Outcome(
            Verdict.DIFFERS, ours, f"{text} lies wholly {where} 0; the paper expects {expected}"
        )
    return Outcome(
        Verdict.INCONCLUSIVE,
        ours,
        f"{text} contains 0, so the direction is not established (expected {expected})"
        f"{_open_note(ours)}",
    )


def _open_note(ours: Estimate) -> str:
    """The reason's note on an interval end the replicates could not place (``""`` if none)."""
    end = ours.unresolved
    if end is None:
        return ""
    side = {"both": "both ends lie", "low": "its lower end lies", "high": "its upper end lies"}
    which = side[end]
    return f"; {which} beyond every bootstrap replicate: more resamples would place it"


def _overlap(a: Estimate, b: Estimate) -> bool:
    """Whether two intervals share a point; an estimate without interval overlaps everything."""
    (a_low, a_high), (b_low, b_high) = a.reach, b.reach
    return a_low <= b_high and b_low <= a_high


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


@_named("order")
def order_rule(
    estimates: Mapping[str, Estimate],
    expected_best: str | Iterable[str],
    higher_is_better: bool = True,
) -> Outcome:
    """ "X is the best": compare the top of our order with the paper's expected best item(s).

    The *top set* is the first group of :func:`~recmeta.ledger.order.order_groups`: the best
    item by value and every item the intervals do not separate from it (a conservative notion of
    a tie: intervals that overlap do not show a difference; for a paired test use
    :func:`sign_rule` on :meth:`Estimate.bootstrap_diff`).

    - the top set is a single item and it is expected → **agrees**;
    - the top set holds several items and one of them is expected → **inconclusive**;
    - no expected item is in the top set → **differs**.

    ``ours`` is the best item's estimate; ``detail`` the order as groups
    (:func:`~recmeta.ledger.order.format_order`, ``"P ≈ R > nDCG"``).
    """
    expected = {expected_best} if isinstance(expected_best, str) else set(expected_best)
    if not expected:
        raise ValueError("expected_best names no item")
    unknown = expected - set(estimates)
    if unknown:
        raise ValueError(
            f"expected item(s) {sorted(unknown)} have no estimate; estimated: {list(estimates)}"
        )
    ranked = _ranked(estimates, higher_is_better)
    top = order_groups(estimates, higher_is_better)[0]
    detail = format_order(estimates, higher_is_better)
    best = ranked[0]
    wanted = _join(sorted(expected))
    hits = [n for n in top if n in expected]
    if len(top) == 1:
        text = (
            f"{best} is best ({format_estimate(estimates[best])}) and its interval overlaps "
            "no other's"
        )
        if hits:
            return Outcome(Verdict.AGREES, estimates[best], text, detail)
        return Outcome(
            Verdict.DIFFERS, estimates[best], f"{text}; the paper expects {wanted}", detail
        )
    tie = f"{_join(top)} tie at the top (overlapping intervals)"
    if hits:
        return Outcome(
            Verdict.INCONCLUSIVE, estimates[best], f"{tie}; the paper expects {wanted}", detail
        )
    return Outcome(
        Verdict.DIFFERS, estimates[best], f"{tie}, without the expected {wanted}", detail
    )


def clearly_above(a: Estimate, b: Estimate) -> bool:
    """Whether ``a`` lies wholly above ``b`` (intervals that do not touch; no interval or an open
    end on the facing side: never)."""
    return a.reach[0] > b.reach[1]


def rank_range(
    estimates: Mapping[str, Estimate], name: str, higher_is_better: bool = True
) -> tuple[int, int]:
    """The ranks ``name`` can take given the intervals:
    ``(1 + #clearly better, n − #clearly worse)``.

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


@_named("rank")
def rank_rule(
    estimates: Mapping[str, Estimate],
    members: Iterable[str],
    best: int,
    worst: int,
    higher_is_better: bool = True,
    *,
    value: Estimate | None = None,
) -> Outcome:
    """ "The members rank between ``best`` and ``worst``" ("X, Y and Z are the three most
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
        raise ValueError(
            f"need members and 1 <= best <= worst <= {n}, got {members}, {best}, {worst}"
        )
    unknown = [m for m in members if m not in estimates]
    if unknown:
        raise ValueError(f"member(s) {unknown} have no estimate; estimated: {list(estimates)}")
    ranges = {m: rank_range(estimates, m, higher_is_better) for m in members}
    order = _ranked(estimates, higher_is_better)
    text = ", ".join(
        f"{m} {lo}–{hi}" if lo != hi else f"{m} {lo}" for m, (lo, hi) in ranges.items()
    )
    detail = f"ranks {text} of {n}; best first: {', '.join(order)}"
    want = f"{best}–{worst}" if best != worst else f"{best}"
    outside = [m for m, (lo, hi) in ranges.items() if hi < best or lo > worst]
    if outside:
        m = outside[0]
        lo, hi = ranges[m]
        where = f"rank {lo}" if lo == hi else f"only rank {lo}–{hi}"
        return Outcome(
            Verdict.DIFFERS, value, f"{m} can {where} of {n}, outside the claimed {want}", detail
        )
    if len(members) == worst - best + 1:
        rest = [k for k in estimates if k not in members]

        def better(a: str, b: str) -> bool:
            return (
                clearly_above(estimates[a], estimates[b])
                if higher_is_better
                else clearly_above(estimates[b], estimates[a])
            )

        for m in members:
            over = [o for o in rest if better(o, m)]
            under = [o for o in rest if better(m, o)]
            if len(over) > best - 1 or len(under) > n - worst:
                o = (over or under)[0]
                side = "above" if len(over) > best - 1 else "below"
                return Outcome(
                    Verdict.DIFFERS,
                    value,
                    f"{o} is separated {side} {m} ({format_estimate(estimates[o])} against "
                    f"{format_estimate(estimates[m])}), so {', '.join(members)} cannot "
                    f"hold ranks {want} together",
                    detail,
                )
    if all(best <= lo and hi <= worst for lo, hi in ranges.values()):
        return Outcome(
            Verdict.AGREES,
            value,
            f"{', '.join(members)} rank within {want} of {n} whatever the overlaps",
            detail,
        )
    open_ = [m for m, (lo, hi) in ranges.items() if not (best <= lo and hi <= worst)]
    return Outcome(
        Verdict.INCONCLUSIVE,
        value,
        f"overlapping intervals leave {', '.join(open_)} free to rank outside {want} of {n}",
        detail,
    )


def all_of(outcomes: Mapping[str, Outcome]) -> Outcome:
    """A claim made for several cases at once: **differs** if any case differs, **agrees** if
    all agree, else **inconclusive** (not reproduced when no case could be evaluated)."""
    if not outcomes:
        raise ValueError("all_of needs at least one outcome")
    verdicts = {k: o.verdict for k, o in outcomes.items()}
    detail = "; ".join(f"{k}: {o.detail or format_estimate(o.ours)}" for k, o in outcomes.items())
    tally = ", ".join(f"{k} {v.value}" for k, v in verdicts.items())
    if all(v is Verdict.NOT_REPRODUCED for v in verdicts.values()):
        return not_reproduced("; ".join(o.reason for o in outcomes.values()))
    rules = {o.rule for o in outcomes.values() if o.verdict is not Verdict.NOT_REPRODUCED}
    rule = rules.pop() if len(rules) == 1 else "all"
    bad = [k for k, v in verdicts.items() if v is Verdict.DIFFERS]
    if bad:
        return Outcome(
            Verdict.DIFFERS,
            None,
            f"{tally} ({bad[0]}: {outcomes[bad[0]].reason})",
            detail,
            rule=rule,
        )
    if all(v is Verdict.AGREES for v in verdicts.values()):
        return Outcome(Verdict.AGREES, None, f"holds in every case: {tally}", detail, rule=rule)
    return Outcome(Verdict.INCONCLUSIVE, None, tally, detail, rule=rule)


@_named("equivalence")
def equivalence_rule(ours: Estimate, margin: float, *, label: str = "the difference") -> Outcome:
    """ "A is comparable to B": ``ours`` (A − B) within ± ``margin``.

    The interval inside ``[-margin, margin]`` → **agrees**; wholly outside → **differs**;
    otherwise (or without interval) → **inconclusive**.
    """
    if not margin > 0:
        raise ValueError(f"margin must be positive, got {margin!r}")
    text = f"{label} {format_estimate(ours)}"
    m = format_number(margin)
    if ours.low is None or ours.high is None:
        return Outcome(
            Verdict.INCONCLUSIVE,
            ours,
            f"{text} has no interval to compare with ± {m}",
            margin=margin,
        )
    low, high = ours.reach
    if -margin <= low and high <= margin:
        return Outcome(Verdict.AGREES, ours, f"{text} lies within ± {m}", margin=margin)
    if low > margin or high < -margin:
        return Outcome(Verdict.DIFFERS, ours, f"{text} lies wholly beyond ± {m}", margin=margin)
    return Outcome(
        Verdict.INCONCLUSIVE, ours, f"{text} straddles ± {m}{_open_note(ours)}", margin=margin
    )


@dataclass(frozen=True)
class Margin:
    """The equivalence margin of a value claim, in the units of the paper's value.

    ``rounding`` is what the paper's printing hides (half a unit of its last digit,
    :func:`half_unit`), ``substantive`` the difference the claim's reading does not care about,
    and ``reason`` one line saying why that much.
    """

    rounding: float
    substantive: float
    reason: str

    def __post_init__(self) -> None:
        for name in ("rounding", "substantive"):
            x = float(getattr(self, name))
            if not (math.isfinite(x) and x >= 0):
                raise ValueError(f"a margin's {name} must be finite and >= 0, got {x!r}")
            object.__setattr__(self, name, x)
        if self.total <= 0:
            raise ValueError("a margin must be positive (rounding + substantive > 0)")
        if not self.reason or not self.reason.strip():
            raise ValueError("a margin needs its reason")

    @property
    def total(self) -> float:
        return self.rounding + self.substantive

    @classmethod
    def printed(cls, paper: float | str, substantive: float, reason: str) -> Margin:
        """Half a unit of the paper's last printed digit plus ``substantive`` (pass ``paper`` as
        the printed string when it ends in zeros: ``"0.90"``, see :func:`half_unit`)."""
        return cls(half_unit(paper), substantive, reason)


def value_rule(paper: float, ours: Estimate, margin: Margin, *, label: str = "ours") -> Outcome:
    """A value claim as an equivalence test: the paper's ``p`` with margin ``m``
    (:class:`Margin`).

    - our whole interval ``[low, high]`` lies inside ``[p − m, p + m]`` → **agrees**;
    - our whole interval lies outside it (``high < p − m`` or ``low > p + m``) → **differs**;
    - otherwise, and always without an interval → **inconclusive**.

    A wider interval can only move the verdict towards inconclusive (two one-sided tests read
    from the interval, Schuirmann 1987). An end the replicates could not place
    (:attr:`Estimate.reach`) counts as unbounded, so it never supports a verdict.
    """
    paper = float(paper)
    if not math.isfinite(paper):
        raise ValueError(f"the paper's value must be finite, got {paper!r}")
    if not isinstance(margin, Margin):
        raise TypeError(f"margin must be a Margin (rounding, substantive, reason), got {margin!r}")
    m = margin.total
    band = f"the paper's {format_paper(paper)} ± {format_number(m)}"
    text = f"{label} {format_estimate(ours)}"

    def out(verdict: Verdict, why: str) -> Outcome:
        return Outcome(verdict, ours, why, rule="value", margin=m)

    if ours.low is None or ours.high is None:
        return out(Verdict.INCONCLUSIVE, f"{text} has no interval to hold against {band}")
    low, high = ours.reach
    if paper - m <= low and high <= paper + m:
        return out(Verdict.AGREES, f"{text} lies wholly inside {band}")
    if high < paper - m or low > paper + m:
        side = "below" if high < paper - m else "above"
        return out(Verdict.DIFFERS, f"{text} lies wholly {side} {band}")
    return out(
        Verdict.INCONCLUSIVE,
        f"{text} reaches beyond {band}: neither inside nor outside{_open_note(ours)}",
    )


def half_unit(printed: float | str) -> float:
    """Half a unit of the last digit the paper prints: 0.001 → 0.0005, 0.00045 → 0.000005,
    ``"0.90"`` → 0.005, 100 → 0.5.

    A number cannot carry the zeros the paper printed at its end (0.90 is 0.9): pass such a value
    as the printed string. A whole number reads as printed without decimals."""
    if isinstance(printed, str):
        exponent = Decimal(printed.strip()).as_tuple().exponent
    elif float(printed).is_integer():
        exponent = 0
    else:
        exponent = Decimal(repr(float(printed))).as_tuple().exponent
    return 0.5 * 10.0 ** int(exponent)
