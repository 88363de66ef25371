"""Table 3, Fig. 1 and Fig. 6 of Bellogín, Castells & Cantador (2017) written out: the
definitions of the target-set designs, the paper's toy example, and the two popularity-neutralising
splits, each as a check that the chapter's builders follow them.

- :func:`design_violations`: how many target sets break a definition of Table 3 (AI: 𝒞 = ℐ;
  TI: 𝒞 = ∪_u R_test(u); AR: T_u ⊇ PR_test(u); 1R: |T_u^r ∩ PR_test(u)| = 1; AN:
  N_u = 𝒞 ∖ PR_test(u) ∖ R_train(u); NN: |N_u| fixed, drawn from that pool);
- :data:`TOY_TRAIN`, :data:`TOY_TEST`, :data:`TOY_SETS`: Fig. 1's toy example as its caption
  describes it, with user ``u``'s target sets worked out by hand, and :func:`toy_mismatches`;
- :func:`uniform_violations` (Fig. 6b) and :func:`percentile_violations` (Fig. 6a).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pandas as pd

from ... import protocols
from ...data.popularity import item_counts, percentile_strata
from ...protocols import Protocol

__all__ = [
    "TOY_DESIGNS",
    "TOY_SETS",
    "TOY_TEST",
    "TOY_TRAIN",
    "design_violations",
    "percentile_violations",
    "toy_mismatches",
    "toy_sets",
    "uniform_violations",
]


def _pairs(frame: pd.DataFrame) -> pd.MultiIndex:
    return pd.MultiIndex.from_arrays([frame["user"].to_numpy(), frame["item"].to_numpy()])


def design_violations(
    train: pd.DataFrame,
    test: pd.DataFrame,
    sets: pd.DataFrame,
    protocol: Protocol,
    items: np.ndarray,
) -> dict[str, int]:
    """The number of target sets of ``sets`` that break each definition of Table 3 for
    ``protocol`` on the split ``train``/``test`` (``items``: ℐ):

    - ``candidates``: a set holds an item outside 𝒞 (ℐ for AI, the test items for TI);
    - ``relevant``: AR, a set misses an item of PR_test(u) or holds a relevant item not in it;
      1R, a set holds other than one relevant item, or one not in PR_test(u);
    - ``nonrelevant``: a non-relevant item is outside the pool 𝒞 ∖ PR_test(u) ∖ R_train(u);
      AN, a set misses an item of its user's pool; NN, a set holds other than
      min(|N_u|, |pool|) non-relevant items.
    """
    pos = test.loc[test["rating"] >= protocol.threshold]
    cand = np.unique(items if protocol.candidates == "AI" else test["item"].to_numpy())
    by_set = sets.groupby("set")
    n_sets = by_set.ngroups
    bad_cand = sets.loc[~sets["item"].isin(cand), "set"].nunique()
    rel = sets.loc[sets["relevant"]]
    rel_ok = _pairs(rel).isin(_pairs(pos))
    n_rel = rel.groupby("set").size().reindex(by_set.size().index, fill_value=0)
    wrong_rel = set(rel.loc[~rel_ok, "set"])
    if protocol.relevant == "1R":
        wrong_rel |= set(n_rel.index[n_rel != 1])
    else:
        # every positive test rating of a user with a set must be in that set
        users = sets.drop_duplicates("set")[["set", "user"]]
        want = pos.merge(users, on="user")
        got = want.merge(rel[["set", "item"]], on=["set", "item"], how="left", indicator=True)
        wrong_rel |= set(got.loc[got["_merge"] == "left_only", "set"])
    # the pool of each user: 𝒞 minus her positive test items and her training items
    excluded = _pairs(pd.concat([pos[["user", "item"]], train[["user", "item"]]]))
    non = sets.loc[~sets["relevant"]]
    outside = set(non.loc[_pairs(non).isin(excluded) | ~non["item"].isin(cand), "set"])
    users = sets.drop_duplicates("set")[["set", "user"]].set_index("set")["user"]
    taken = excluded[excluded.get_level_values(1).isin(cand)]
    blocked = pd.Series(1, index=taken).groupby(level=0).sum()
    pool = (len(cand) - blocked.reindex(users.to_numpy(), fill_value=0)).to_numpy()
    n_non = non.groupby("set").size().reindex(users.index, fill_value=0).to_numpy()
    if protocol.nonrelevant == "AN":
        short = n_non != pool
    else:
        assert protocol.n_nonrelevant is not None
        short = n_non != np.minimum(protocol.n_nonrelevant, pool)
    outside |= set(users.index[short])
    return {
        "sets": n_sets,
        "candidates": int(bad_cand),
        "relevant": len(wrong_rel),
        "nonrelevant": len(outside),
    }


# ---- Fig. 1: the paper's toy example -------------------------------------------------------------
# user u likes d and e in test and rated f in training; b and c have test ratings of others (TI
# candidates), a has none (AI only); relevant: rating >= 4
TOY_TRAIN = pd.DataFrame(
    {
        "user": ["u", "v", "v", "w", "w"],
        "item": ["f", "a", "d", "e", "c"],
        "rating": [5, 3, 2, 5, 2],
    }
)
TOY_TEST = pd.DataFrame(
    {
        "user": ["u", "u", "v", "v", "w"],
        "item": ["d", "e", "b", "c", "f"],
        "rating": [5, 4, 1, 5, 4],
    }
)
TOY_ITEMS = np.array(list("abcdef"))
#: u's target sets in each design, worked out by hand from the caption of Fig. 1; an NN set holds
#: its relevant item(s) and one item of the pool (``{"x"}`` marks the sampled slot)
TOY_SETS: dict[str, list[tuple[frozenset[str], frozenset[str]]]] = {
    # (fixed items, the pool the one sampled item comes from; empty for AN)
    "TI-AN AR": [(frozenset("bcde"), frozenset())],
    "AI-AN AR": [(frozenset("abcde"), frozenset())],
    "TI-NN AR": [(frozenset("de"), frozenset("bc"))],
    "AI-NN AR": [(frozenset("de"), frozenset("abc"))],
    "TI-AN 1R": [(frozenset("bcd"), frozenset()), (frozenset("bce"), frozenset())],
    "AI-AN 1R": [(frozenset("abcd"), frozenset()), (frozenset("abce"), frozenset())],
    "TI-NN 1R": [(frozenset("d"), frozenset("bc")), (frozenset("e"), frozenset("bc"))],
    "AI-NN 1R": [(frozenset("d"), frozenset("abc")), (frozenset("e"), frozenset("abc"))],
}
TOY_DESIGNS = tuple(TOY_SETS)

Builder = Callable[[pd.DataFrame, pd.DataFrame, Protocol, np.ndarray], pd.DataFrame]


def _build(train: pd.DataFrame, test: pd.DataFrame, p: Protocol, items: np.ndarray) -> pd.DataFrame:
    return protocols.target_sets(train, test, p, seed=0, items=items)


def _protocol(design: str) -> Protocol:
    cand, rest = design.split("-")
    non, rel = rest.split(" ")
    return Protocol(cand, rel, non, 1 if non == "NN" else None, threshold=4)  # type: ignore[arg-type]


def toy_sets(build: Builder = _build) -> dict[str, list[str]]:
    """User ``u``'s target sets of Fig. 1's toy example in each design of Table 3, as built by
    ``build`` (default: :func:`recmeta.protocols.target_sets`), each set as its sorted items."""
    out = {}
    for design in TOY_DESIGNS:
        sets = build(TOY_TRAIN, TOY_TEST, _protocol(design), TOY_ITEMS)
        mine = sets.loc[sets["user"] == "u"]
        out[design] = ["".join(sorted(g["item"])) for _, g in mine.groupby("set")]
    return out


def _fits(built: set[str], fixed: frozenset[str], pool: frozenset[str]) -> bool:
    """A built set is the expected one: the fixed items, plus one item of the pool (NN)."""
    if not pool:
        return built == fixed
    return fixed <= built and len(built - fixed) == 1 and built - fixed <= pool


def toy_mismatches(build: Builder = _build) -> dict[str, str]:
    """The designs whose sets for ``u`` differ from :data:`TOY_SETS`, with what was built."""
    bad = {}
    for design, built in toy_sets(build).items():
        want = TOY_SETS[design]
        ok = len(built) == len(want) and all(
            any(_fits(set(b), fixed, pool) for b in built) for fixed, pool in want
        )
        if not ok:
            bad[design] = ", ".join("{" + b + "}" for b in built) or "no set"
    return bad


# ---- Fig. 6: the two splits ----------------------------------------------------------------


def uniform_violations(
    ratings: pd.DataFrame, split: protocols.UniformSplit, sigma: float, epsilon: float
) -> dict[str, int]:
    """How the uniform-test split breaks §6.2's construction (Fig. 6b): items of T without
    exactly η test ratings, items outside T with a test rating, items of T keeping less than a
    share ε of their ratings for training, T not the |T| most popular items, the test share
    |T|η/|R| below σ (0 or 1), and the next item's ζ + 1 satisfying the condition too (0 or 1:
    T is then not the largest)."""
    counts = item_counts(ratings)
    tested = split.test.groupby("item").size().reindex(counts.index, fill_value=0)
    in_t = counts.index.isin(split.items)
    eta, size = split.eta, len(split.items)
    c = counts.to_numpy()
    top = set(counts.index[:size])
    nxt = int(np.floor((1 - epsilon) * c[size] + 1e-9)) if size < len(c) else 0
    return {
        "T": size,
        "eta": eta,
        "not eta": int((tested[in_t] != eta).sum()),
        "outside T": int((tested[~in_t] > 0).sum()),
        "training share": int((c[in_t] - eta < epsilon * c[in_t] - 1e-9).sum()),
        "not the top": len(top ^ set(split.items)),
        "test share": int(size * eta < sigma * len(ratings)),
        "not largest": int(nxt >= 1 and (size + 1) * nxt >= sigma * len(ratings)),
    }


def percentile_violations(ratings: pd.DataFrame, m: int) -> dict[str, int]:
    """How the popularity percentiles of P1R break §6.1 (Fig. 6a): strata other than ``m``,
    sizes more than one apart, and pairs of neighbouring strata whose popularity ranges overlap
    out of order (an item of a later stratum more popular than one of an earlier one)."""
    strata = percentile_strata(ratings, m)
    counts = item_counts(ratings).reindex(strata.index)
    sizes = strata.value_counts()
    lo = counts.groupby(strata.to_numpy()).min()
    hi = counts.groupby(strata.to_numpy()).max()
    return {
        "items": len(strata),
        "strata": int(len(sizes) != m),
        "sizes": int(sizes.max() - sizes.min() > 1),
        "order": int((hi.to_numpy()[1:] > lo.to_numpy()[:-1]).sum()),
    }
