"""every_sign: "every part lies on the expected side of its threshold", Holm across the parts,
on hand cases whose Holm steps are worked out below."""

import numpy as np
import pytest
from scipy import stats

from recmeta.ledger import Estimate, SignPart, Verdict, every_sign

A, D, I = Verdict.AGREES, Verdict.DIFFERS, Verdict.INCONCLUSIVE


def _p(value, p_pos, p_neg, shift=0.0, h=0.01, floor=0.0):
    return SignPart(Estimate(value, value - h, value + h), p_pos, p_neg, shift, floor)


def test_holm_steps_by_hand():
    # sorted p 0.001, 0.02, 0.03 against 0.05/3, 0.05/2, 0.05: every part rejected
    parts = {"a": _p(0.5, 0.001, 0.999), "b": _p(0.2, 0.02, 0.98), "c": _p(0.3, 0.03, 0.97)}
    out = every_sign(parts, "positive")
    assert out.verdict is A and out.rule == "every sign"
    assert out.ours == parts["b"].estimate  # the smallest value: nearest to the other side
    # 0.02, 0.02, 0.02: the first step needs 0.05/3 = 0.0167, so nothing is rejected
    same = {k: _p(0.3, 0.02, 0.98) for k in "abc"}
    assert every_sign(same, "positive").verdict is I
    # one part rejected the other way (0.0001 < 0.05/3): differs, whatever the others say
    parts["c"] = _p(-0.3, 0.9999, 0.0001)
    out = every_sign(parts, "positive")
    assert out.verdict is D and out.reason.startswith("c ")
    assert out.ours == parts["c"].estimate


def test_negative_direction_swaps_the_p_values():
    parts = {"a": _p(-0.5, 0.999, 0.001), "b": _p(-0.1, 0.98, 0.01)}
    out = every_sign(parts, "negative")
    assert out.verdict is A and out.ours == parts["b"].estimate  # the largest: nearest to 0
    assert every_sign(parts, "positive").verdict is D


def test_shift_moves_each_part_s_threshold():
    # τ = 0.93 and 0.95 above 0.9; the sign rule reads τ − 0.9, ours stays τ
    parts = {"x": _p(0.93, 0.001, 0.999, shift=0.9), "y": _p(0.95, 0.001, 0.999, shift=0.9)}
    out = every_sign(parts, "positive", label="τ minus 0.9")
    assert out.verdict is A and out.ours.value == pytest.approx(0.93)
    assert out.detail == "x: 0.930 [0.920, 0.940]; y: 0.950 [0.940, 0.960]"  # unshifted
    # a τ of 0.85 lies below 0.9: the part's sign rule reads 0.85 − 0.9 wholly below 0
    parts["x"] = _p(0.85, 0.999, 0.0001, shift=0.9)
    out = every_sign(parts, "positive", label="τ minus 0.9")
    assert out.verdict is D and "τ minus 0.9" in out.reason and "wholly below 0" in out.reason


def test_from_replicates_reads_the_bootstrap_and_its_floor():
    reps = np.r_[np.full(97, 0.95), 0.85, np.nan, 0.9]
    part = SignPart.from_replicates(Estimate(0.95, 0.9, 0.96), reps, shift=0.9)
    # 99 finite replicates; ≤ 0.9: two (0.85, 0.9); ≥ 0.9: 98 (0.9 and the 97 at 0.95);
    # about the point 0.95: two below, 97 tied (half each), z0 = Φ⁻¹(50.5/99)
    z0 = stats.norm.ppf(50.5 / 99)
    up = stats.norm.cdf(stats.norm.ppf(2 / 99) - 2 * z0)
    down = stats.norm.cdf(stats.norm.ppf(98 / 99) + 2 * z0)
    assert part.p_positive == pytest.approx((1 + 99 * up) / 100)
    assert part.p_negative == pytest.approx((1 + 99 * down) / 100)
    assert part.p_floor == pytest.approx(1 / 100) and part.shift == 0.9
    with pytest.raises(ValueError, match="finite"):
        SignPart.from_replicates(Estimate(0.0, 0.0, 0.0), [np.nan])


def test_too_few_resamples_are_named_in_the_reason():
    # 40 replicates: p ≥ 1/41 ≈ 0.024, above Holm's first threshold 0.05/7 ≈ 0.007
    reps = np.full(40, 0.5)
    parts = {k: SignPart.from_replicates(Estimate(0.5, 0.5, 0.5), reps) for k in "abcdefg"}
    out = every_sign(parts, "positive")
    assert out.verdict is I and "more resamples" in out.reason
    # with two parts the first threshold is 0.025 > 1/41: no note, and both are established
    two = {k: parts[k] for k in "ab"}
    out = every_sign(two, "positive")
    assert out.verdict is A and "resamples" not in out.reason


def test_bad_input_is_refused():
    with pytest.raises(ValueError, match="at least one part"):
        every_sign({}, "positive")
    with pytest.raises(ValueError, match="expected"):
        every_sign({"a": _p(1, 0.01, 0.99)}, "up")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="probability"):
        _p(1, 1.5, 0.0)
