"""The roster: names, diversity, configuration keys, and the recommender-X mapping."""

from __future__ import annotations

import json

import numpy as np
import pytest

from recmeta.recommenders import roster


def test_roster_is_large_and_diverse():
    names = roster.names()
    assert len(names) >= 16 and len(set(names)) == len(names)
    families = {s.family for s in roster.ROSTER.values()}
    assert {"baseline", "item-knn", "user-knn", "mf", "linear", "latent", "item-cf"} <= families
    comps = {s.component for s in roster.ROSTER.values()}
    for c in ("EASEScorer", "FunkSVDScorer", "BiasedSVDScorer", "BiasedMFScorer",
              "ImplicitMFScorer", "FlexMFImplicitScorer", "PLSAScorer", "ItemCFScorer"):
        assert any(x.endswith(":" + c) for x in comps), c
    losses = {s.config.get("preset") or s.config.get("loss") for s in roster.ROSTER.values()
              if s.component.endswith("FlexMFImplicitScorer")}
    assert losses == {"bpr", "warp", "logistic"}


def test_every_system_builds_and_has_a_json_key():
    for s in roster.ROSTER.values():
        key = s.config_key()
        assert json.loads(json.dumps(key)) == key
        assert key["component"] == s.component
        for k, v in s.config.items():  # the given hyper-parameters are in the key
            assert key["config"][k] == v, (s.name, k)
        assert s.pipeline(n=10).component("scorer") is not None


def test_key_changes_with_a_hyper_parameter():
    a = roster.get("kr-z")
    b = roster.System("kr-z", a.component, {**a.config, "k_prime": 11})
    assert a.config_key() != b.config_key()


def test_lookup_errors_name_the_roster():
    with pytest.raises(KeyError, match="kr-y"):
        roster.get("no-such-system")
    assert [s.name for s in roster.systems("pop, kr-y")] == ["pop", "kr-y"]
    assert len(roster.systems("all")) == len(roster.ROSTER)
    with pytest.raises(ValueError, match="no system"):
        roster.systems(" , ")


def test_krichene_rendle_x_mapping():
    """LensKit's ImplicitMF with w=1/α, r=λ(1+α)/α solves Krichene & Rendle's loss (rescaled).

    For fixed item factors Q, their user step solves (Q_H'Q_H + α Q'Q + λI) x = Q_H'1. LensKit's
    user step (its own code) on items √(1+α)·Q must return √(1+α)·x.
    """
    x_sys = roster.get("kr-x")
    cfg = x_sys.config
    alpha, lam = 0.2, 10.0
    assert cfg["embedding_size"] == 16
    assert cfg["weight"] == pytest.approx(1 / alpha)
    assert cfg["regularization"] == pytest.approx(lam * (1 + alpha) / alpha)

    rng = np.random.default_rng(0)
    n_items, d = 30, 16
    Q = rng.normal(size=(n_items, d)).astype(np.float64)
    hist = np.array([1, 4, 5, 17, 29])
    QH = Q[hist]
    x_kr = np.linalg.solve(QH.T @ QH + alpha * Q.T @ Q + lam * np.eye(d), QH.T @ np.ones(len(hist)))

    scorer = x_sys.scorer()
    s = np.sqrt(1 + alpha)
    Qs = s * Q
    otor = Qs.T @ Qs + cfg["regularization"] * np.eye(d)
    x_lk = scorer._train_new_row(hist, np.full(len(hist), cfg["weight"]), Qs, otor)
    assert np.allclose(x_lk, s * x_kr, rtol=1e-6, atol=1e-9)
    # hence the scores are (1 + α) times X's: same rankings
    assert np.allclose(Qs @ x_lk, (1 + alpha) * (Q @ x_kr))
