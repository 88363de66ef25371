"""Our value of a quantity and its uncertainty (:class:`Estimate`), and how numbers are printed.

Three kinds of estimate enter the verdict rules (:mod:`recmeta.ledger.rules`):

- an *interval* ``[low, high]`` (``low <= high``): a statement about our uncertainty;
- an *exact* value (:meth:`Estimate.exact`): the interval ``[value, value]``, for quantities that
  involve no sampling (an analytic formula, a count);
- a *point* without interval (``low = high = None``, :meth:`Estimate.point`): the uncertainty is
  unknown. The rules conclude from a point only what would hold for *any* interval around it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike
from scipy import stats

from ..metaeval.bootstrap import replicate_ends, replicate_interval, scipy_interval

__all__ = ["Estimate", "INTERVALS", "format_number", "format_estimate", "format_paper"]

#: how the ledger's intervals are read, for the ledger page's legend and ``recmeta claims``
INTERVALS = (
    "95 % intervals. Read off bootstrap replicates they are bias-corrected percentile intervals "
    "(BC, Efron 1981, 1987): the replicates' quantiles at Φ(2 z0 ∓ 1.96), where z0 = Φ⁻¹(share "
    "of the replicates below our value), so a statistic whose replicates sit off its value (near "
    "a bound, as a τ near 1) gets no interval leaning to their side; a mean over users has BCa. "
    "A part's one-sided bootstrap p-value inverts the same interval. Each record's method says "
    "which interval it has. An end written >x (or <x) lies beyond every replicate: the "
    "resamples are too few to place it, so no verdict leans on it (more resamples would)"
)

_DASH = "—"


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
    ``low <= high``. The interval need not contain ``value`` (a bias-corrected interval of skewed
    replicates may not). ``method`` says in words how the interval was obtained, e.g.
    ``"bootstrap over users (BCa, 9999 resamples), 95 %"``.

    ``low_open`` (``high_open``) marks an end the interval's method could not place: the true
    end lies below ``low`` (above ``high``), as when a bias-corrected level asks for a quantile
    beyond every bootstrap replicate (:func:`recmeta.metaeval.bootstrap.replicate_ends`). The
    verdict rules read such an end as unbounded (:attr:`reach`).
    """

    value: float
    low: float | None = None
    high: float | None = None
    method: str = "point estimate, no interval"
    low_open: bool = False
    high_open: bool = False

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
        elif self.low_open or self.high_open:
            raise ValueError("an open end needs an interval (low and high)")
        object.__setattr__(self, "low_open", bool(self.low_open))
        object.__setattr__(self, "high_open", bool(self.high_open))

    @property
    def has_interval(self) -> bool:
        """Whether the uncertainty is known (an interval, possibly of width zero)."""
        return self.low is not None

    @property
    def width(self) -> float | None:
        """``high - low``, or ``None`` without an interval."""
        return None if self.low is None or self.high is None else self.high - self.low

    @property
    def reach(self) -> tuple[float, float]:
        """The interval as the verdict rules read it: ``(low, high)``, with an open end (or a
        missing interval) as ``∓inf``."""
        low = -math.inf if self.low is None or self.low_open else self.low
        high = math.inf if self.high is None or self.high_open else self.high
        return low, high

    @property
    def unresolved(self) -> str | None:
        """Which end is open: ``"low"``, ``"high"``, ``"both"`` or ``None``."""
        if self.low_open and self.high_open:
            return "both"
        return "low" if self.low_open else "high" if self.high_open else None

    def shifted(self, by: float) -> Estimate:
        """The estimate of ``quantity − by``: value and ends moved, open ends kept."""
        return Estimate(
            self.value - by,
            None if self.low is None else self.low - by,
            None if self.high is None else self.high - by,
            self.method,
            self.low_open,
            self.high_open,
        )

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
        cls, samples: ArrayLike, level: float = 0.95, *, method: str | None = None
    ) -> Estimate:
        """The mean of draws with the band of their spread: the ``(1 ∓ level)/2`` quantiles
        (``numpy.quantile``, linear), e.g. the Monte-Carlo band of Kendall's τ over 50 random
        masks, where the draws are the quantity itself and no point estimate exists. For the
        bootstrap replicates of a value computed on the data, use :meth:`from_replicates`."""
        level = _level(level)
        x = _finite_1d(samples, "samples")
        low, high = replicate_interval(x, level, point=None)
        return cls(
            float(x.mean()),
            low,
            high,
            method or f"percentile band of {x.size} draws, {_pct(level)}",
        )

    @classmethod
    def from_replicates(
        cls,
        point: float,
        replicates: ArrayLike,
        level: float = 0.95,
        *,
        acceleration: float = 0.0,
        method: str | None = None,
    ) -> Estimate:
        """``point`` (the statistic on the data) with the bias-corrected percentile interval of
        its bootstrap ``replicates`` (BC, Efron 1981/1987; BCa with an ``acceleration``):
        :func:`recmeta.metaeval.bootstrap.replicate_ends`, whose docstring has the formula."""
        level = _level(level)
        x = _finite_1d(replicates, "replicates")
        ends = replicate_ends(x, level, point=point, acceleration=acceleration)
        kind = "BCa" if acceleration else "BC"
        return cls(
            point,
            ends.low,
            ends.high,
            method or f"bias-corrected ({kind}) interval of {x.size} replicates, {_pct(level)}",
            ends.low_open,
            ends.high_open,
        )

    @classmethod
    def mean_se(
        cls, values: ArrayLike, level: float = 0.95, *, method: str | None = None
    ) -> Estimate:
        """Mean of ``values`` with Student's t interval ``mean ± t_{n-1} · s/√n``.

        Computed by ``scipy.stats.ttest_1samp(values, 0).confidence_interval(level)``; suited to a
        few independent replicates such as cross-validation folds. Identical values give the
        zero-width interval.
        """
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
        """Mean of a per-user array with a bootstrap interval over users
        (``scipy.stats.bootstrap``).

        The interval is ``scipy.stats.bootstrap((x,), np.mean, n_resamples=n_resamples,
        confidence_level=level, method=ci_method, rng=np.random.default_rng(seed))``: resampling
        users with replacement, bias-corrected and accelerated (BCa, Efron 1987) by default. The
        resamples are drawn in batches to bound memory, which does not change the result. When
        every value is equal the interval has width zero.
        """
        level = _level(level)
        x = _finite_1d(per_user_values, "per_user_values", minimum=2)
        mean = float(x.mean())
        method = method or (
            f"bootstrap over {x.size} users ({ci_method}, {n_resamples} resamples), {_pct(level)}"
        )
        if np.all(x == x[0]):
            return cls(mean, mean, mean, method)
        low, high = scipy_interval(
            x, np.mean, confidence=level, n_resamples=n_resamples, seed=seed, method=ci_method
        )
        return cls(mean, float(low), float(high), method)

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
            f"paired bootstrap over {x.size} users ({ci_method}, {n_resamples} resamples), "
            f"{_pct(_level(level))}"
        )
        return cls.bootstrap_mean(
            x - y, level, seed, n_resamples, ci_method=ci_method, method=method
        )


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
    """``x`` with ``digits`` significant digits (fixed notation unless tiny or huge); ``—`` for
    none."""
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
    lo, hi = ("<" if est.low_open else ""), (">" if est.high_open else "")
    xs = (est.value, est.low, est.high)
    if not _fixed_ok(*xs):
        return f"{est.value:.{digits}g} [{lo}{est.low:.{digits}g}, {hi}{est.high:.{digits}g}]"
    d = _decimals(est.value, digits)
    width = est.high - est.low
    if width > 0:
        d = max(d, min(_decimals(width, 2), _decimals(est.value, 6) if est.value else 6))
    return f"{est.value:.{d}f} [{lo}{est.low:.{d}f}, {hi}{est.high:.{d}f}]"


def format_paper(value: float | str | None) -> str:
    """A paper's value as printed: numbers with up to six significant digits, text as is."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return _DASH
    if isinstance(value, (int, float, np.integer, np.floating)):
        return f"{float(value):g}"
    return str(value)
