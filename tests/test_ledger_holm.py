"""Holm's step-down rejections (recmeta.ledger.every.holm_reject) against statsmodels'
``multipletests(..., method="holm")`` on random, tied and boundary p-values."""

from __future__ import annotations

import gc

import numpy as np
import pytest
from statsmodels.stats.multitest import multipletests

from recmeta.ledger.every import holm_reject


def test_holm_matches_statsmodels_on_random_and_tied_p_values(monkeypatch):
    # statsmodels runs a full garbage collection on every call: about a second each in a
    # process that has run other tests; the collection changes no value, so it is skipped here
    monkeypatch.setattr(gc, "collect", lambda *args: 0)
    rng = np.random.default_rng(0)
    mixed = 0
    for i in range(200):
        m = int(rng.integers(1, 40))
        p = rng.beta(0.3, 1.0, m)
        if i % 2:  # ties, including at the thresholds
            p = np.round(p, 2)
        alpha = (0.01, 0.05, 0.1)[i % 3]
        ours = holm_reject(p, alpha)
        assert (ours == multipletests(p, alpha, "holm")[0]).all(), (p, alpha)
        mixed += 0 < ours.sum() < m
    assert mixed >= 40  # the cases reject some parts and not others


def test_holm_steps_down_and_stops_at_the_first_failure():
    # thresholds for m = 3 at 0.05: 0.0167, 0.025, 0.05
    assert holm_reject([0.01, 0.02, 0.04], 0.05).tolist() == [True, True, True]
    assert holm_reject([0.04, 0.01, 0.03], 0.05).tolist() == [False, True, False]
    # 0.049 < 0.05 alone, but the step before it failed
    assert holm_reject([0.001, 0.03, 0.049], 0.05).tolist() == [True, False, False]
    assert holm_reject([0.0167], 0.0167).tolist() == [True]


@pytest.mark.parametrize("bad", [[], [0.1, float("nan")], [1.2], [-0.1]])
def test_holm_refuses_what_is_not_a_list_of_p_values(bad):
    with pytest.raises(ValueError, match="p-values"):
        holm_reject(bad, 0.05)
