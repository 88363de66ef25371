"""A claim's ``tie_sensitive``: computed by :meth:`Ledger.evaluate` from results under other tie
rules, or by :func:`with_tie_sensitive` from frames already evaluated under them; both readings
agree on a hand-made ledger whose verdicts are known."""

from __future__ import annotations

import pytest

from recmeta.ledger import DERIVED, Estimate, Ledger, not_reproduced, sign_rule
from recmeta.ledger.claims import with_tie_sensitive


def _ledger() -> Ledger:
    led = Ledger("ties-demo")

    @led.claim(
        "d.moves",
        statement="a sign that moves with the rule",
        source="§1",
        rule="sign",
        paper_dataset=DERIVED,
        needs=("x",),
    )
    def _(r):
        return sign_rule(Estimate(r["x"], r["x"] - 0.1, r["x"] + 0.1), "positive")

    @led.claim(
        "d.stays",
        statement="a sign that does not move",
        source="§1",
        rule="sign",
        paper_dataset=DERIVED,
        needs=("y",),
    )
    def _(r):
        return sign_rule(Estimate(r["y"], r["y"] - 0.1, r["y"] + 0.1), "positive")

    @led.claim(
        "d.gone",
        statement="a claim not run under other rules",
        source="§1",
        rule="sign",
        paper_dataset=DERIVED,
        needs=("z",),
    )
    def _(r):
        if r.get("z") == "skip":
            return not_reproduced("not run under this rule")
        return sign_rule(Estimate(1.0, 0.9, 1.1), "positive")

    return led


HERE = {"x": 1.0, "y": 1.0, "z": "run"}
OTHER = {
    "pessimistic": {"x": -1.0, "y": 1.0, "z": "skip"},
    "optimistic": {"x": 0.05, "y": 1.0, "z": "skip"},
}


def test_evaluate_with_variants_and_with_tie_sensitive_agree():
    led = _ledger()
    kw = {"dataset": "synthetic", "profile": "quick"}
    direct = led.evaluate(HERE, tie_variants=OTHER, **kw)
    frames = {k: led.evaluate(v, **kw) for k, v in OTHER.items()}
    plain = led.evaluate(HERE, **kw)
    assert plain["tie_sensitive"].isna().all()  # not assessed without variants
    read = with_tie_sensitive(plain, frames)
    assert dict(zip(direct["claim"], direct["tie_sensitive"], strict=True)) == {
        "d.moves": True,
        "d.stays": False,
        "d.gone": False,
    }
    assert list(read["tie_sensitive"]) == list(direct["tie_sensitive"])
    assert plain["tie_sensitive"].isna().all()  # the given frame is not changed


def test_a_claim_not_reproduced_here_is_not_tie_sensitive():
    led = _ledger()
    kw = {"dataset": "synthetic", "profile": "quick"}
    here = led.evaluate({"x": 1.0, "y": 1.0, "z": "skip"}, **kw)
    other = {"p": led.evaluate({"x": 1.0, "y": 1.0, "z": "run"}, **kw)}
    assert not with_tie_sensitive(here, other).set_index("claim").loc["d.gone", "tie_sensitive"]


def test_a_variant_frame_of_another_ledger_is_refused():
    led = _ledger()
    kw = {"dataset": "synthetic", "profile": "quick"}
    here = led.evaluate(HERE, **kw)
    short = here[here["claim"] != "d.moves"]
    with pytest.raises(ValueError, match="lacks claims"):
        with_tie_sensitive(here, {"p": short})
