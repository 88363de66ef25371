"""The definitions of the metrics, and the plan that hands them to the compiled pass.

Notation for one user and one list: ``L@k`` the first k items of the list, ``R`` the user's
relevant items (grade ``r >= τ``), ``N`` the judged non-relevant ones (``0 <= r < τ``), ``rel_i``
= 1 if the item at rank i is relevant. Unjudged items count as non-relevant with grade 0, except
in bpref and infAP, which skip them. A negative grade (trec_eval's "in the pool but not judged",
read with ``Judgments.from_frame(..., negative="pooled")``) is unjudged in every metric but infAP,
which counts it in the pool. A cut-off ``@k`` reads the first ``min(k, depth)`` positions;
without ``@k`` the whole list is read.

* ``P@k = |L@k ∩ R| / k`` — trec_eval ``P``: divides by k even when the list is shorter.
* ``R@k = |L@k ∩ R| / |R|`` — trec_eval ``recall`` (not ÷ min(|R|, k)).
* ``F1@k = 2 P R / (P + R)``, 0 when nothing relevant is retrieved (Valcarce et al. 2020, eq. 3).
* ``AP@k = (1/|R|) sum_{i<=k} rel_i P@i`` — trec_eval ``map_cut``, divided by all of |R|
  (Valcarce et al. 2020, eq. 4); some libraries divide by min(|R|, k) (see the Metrics page).
* ``nDCG@k = DCG@k / IDCG@k``, ``DCG@k = sum_{i<=k} g(r_i) / log2(i + 1)`` (Järvelin &
  Kekäläinen 2002). The gain g is the name's (``nDCG(gain=exp)``) or else the evaluation's
  ``gain=`` option: linear (default, trec_eval ``ndcg_cut``), exponential, binary or a mapping
  (:mod:`recmeta.metrics._options`). The ideal DCG ranks *all* the user's judged items by gain
  and cuts at k; an ideal of 0 gives 0. Without ``@k`` the ideal is not cut (trec_eval
  ``ndcg``): the value no longer depends on the length of the longest list evaluated alongside.
* ``NDCNG@k``: nDCG with the normalised gain 2^(r/m) − 1, m the user's highest grade; 0 when
  m = 0 (Scheel et al., eq. 5).
* ``RR@k = 1 / rank`` of the first relevant item within k, 0 if none — trec_eval
  ``recip_rank`` (Valcarce et al. 2020, eq. 6).
* ``ERR@k = sum_{i<=k} (1/i) G_i prod_{p<i} (1 − G_p)``, ``G = (2^r − 1) / 2^rmax`` (Chapelle et
  al. 2009; Valcarce et al. 2020, eqs. 7–8). ``rmax`` (``ERR(rmax=5)``) defaults to
  ``Judgments.max_grade``; judged items below τ still give their small gain, as in the formula;
  a ranked grade above rmax is an error.
* ``bpref = (1/|R|) sum_{r in R retrieved} (1 − min(n_r, |R|) / min(|N|, |R|))``, ``n_r`` the
  judged non-relevant items above r; a term is 1 when ``|N| = 0`` — Buckley & Voorhees (2004),
  trec_eval ``m_bpref.c``.
* ``infAP = (1/|R|) sum_{relevant at rank j+1} E[P@(j+1)]``, ``E[P@1] = 1`` and for j >= 1
  ``E[P@(j+1)] = 1/(j+1) + j/(j+1) · ((a + u)/j) · (ra + ε)/(a + 2ε)``, ``ra``/``a`` the
  relevant / judged items above, ``u`` the pooled but unjudged items above (negative grades),
  ε = 1e-5 — Yilmaz & Aslam (2006) as trec_eval ``m_infap.c`` computes it. With
  ``infap="pooled"`` every ranked item is in the pool, ``a + u = j`` (Valcarce et al. 2020,
  eq. 11; see :mod:`recmeta.metrics._options`).
* ``AUC = (n − (|R| − 1)/2 − mean rank of R) / (n − |R|)`` (Krichene & Rendle 2020, eq. 2) over
  the list (cut at k) followed by the relevant items it misses, placed last; n is that length.
  Every other listed item counts as non-relevant; with no non-relevant item AUC = 1.
* ``µAP@k = sum_{t in L} d_t AP^t / sum_{t in L} d_t`` (Scheel et al., eq. 4): ``L`` the user's
  positive grades, ``AP^t`` AP@k with "relevant" meaning r >= t (÷ the items with r >= t),
  ``d_t`` the distance from t to the next lower level of L (to 0 for the lowest). τ is not used;
  grades <= 0 are irrelevant. NaN for a user without a positive grade.
* ``SRecall@k = sum_{i in L@k ∩ R} w_i / sum_{i in R} w_i``, ``w_i = N_i^(-γ/(γ+1))`` with
  ``N_i`` the relevant ratings of item i (Steck 2011; Bellogín et al. 2017, sec. 6); γ = 0 gives
  recall, γ = inf ``w_i = 1/N_i``. ``N_i`` comes from ``Judgments.item_popularity`` if set, else
  from the relevant entries of the judgments.
* ``Rprec = |L@|R| ∩ R| / |R|`` — precision at rank |R| (trec_eval ``Rprec``; Buckley & Voorhees
  2005); a list shorter than |R| is read whole.
* ``Success@k = 1`` if a relevant item is in ``L@k``, else 0 (trec_eval ``success``).
* ``IPrec(recall=x) = max_{h >= c} h / rank_h``, ``rank_h`` the rank of the h-th relevant item
  retrieved and ``c = ⌊x |R| + 0.9⌋`` (trec_eval 9.0.8 ``iprec_at_recall``: interpolated
  precision at recall x); 0 when fewer than c relevant items are retrieved; for c = 0 the
  largest precision anywhere. ``IPrec11`` is the mean of IPrec at x = 0, 0.1, ..., 1
  (trec_eval ``11pt_avg``), summed from x = 1 down as trec_eval sums.
* ``NumRet@k = |L@k|``, ``NumRel = |R|``, ``NumRelRet@k = |L@k ∩ R|``, ``NumQ = 1``: trec_eval's
  counts; their average over users is a sum (:data:`recmeta.metrics._names.SUMMED`).

Users without a relevant item are left out (NaN) unless ``all_users``; then, as in trec_eval,
every metric that divides by |R| is 0 for them (AUC is NaN), and nDCG still reads the gains of
the grades below τ. Tied items are read in the order of the ``ties=`` option
(:mod:`recmeta.metrics._options`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..arrays import compile_once
from . import _kernel as K
from ._judgments import Judgments
from ._names import ELEVEN_POINTS, GAIN_FROM_OPTION, MetricSpec
from ._options import EXPECTED_METRICS, TIE_CODES, OptionError, Options, options
from ._registry import REGISTRY
from ._runs import Runs, id_order, text_order

_CODES = {
    "P": K.P,
    "R": K.R,
    "F1": K.F1,
    "AP": K.AP,
    "RR": K.RR,
    "ERR": K.ERR,
    "bpref": K.BPREF,
    "infAP": K.INFAP,
    "AUC": K.AUC,
    "muAP": K.MUAP,
    "NDCNG": K.NDCNG,
    "SRecall": K.SRECALL,
    "Rprec": K.RPREC,
    "Success": K.SUCCESS,
    "IPrec": K.IPREC,
    "NumQ": K.NUM_Q,
    "NumRet": K.NUM_RET,
    "NumRel": K.NUM_REL,
    "NumRelRet": K.NUM_REL_RET,
}
_NDCG_CODES = (K.NDCG_LIN, K.NDCG_EXP, K.NDCG_BIN, K.NDCNG, K.NDCG_MAP)
#: Inputs with fewer ranked positions to read (systems × users × largest cut-off) run in the
#: calling thread. Measured on two loaded cores: 20 systems × 943 users × 100 (ML-100K, 1.9 M
#: positions) took half the time in one thread; 20 × 6,040 × 100 (12 M) was 15 % faster threaded.
PARALLEL_MIN_POSITIONS = 5_000_000

_GAINS = {"linear": K.NDCG_LIN, "exp": K.NDCG_EXP, "binary": K.NDCG_BIN}
_NO_TIES = np.zeros((1, 1, 1), dtype=np.bool_)


@dataclass(frozen=True)
class Plan:
    """Kernel inputs for a list of metrics; requests are sorted by the position they are read at."""

    order: np.ndarray  # request j computes specs[order[j]]
    codes: np.ndarray
    cuts: np.ndarray  # positions read: min(k, depth), or depth
    kdivs: np.ndarray  # k, or without a cut-off depth (P divides by it) or, for nDCG, the
    #                    largest judged set (nDCG's ideal cuts at it)
    slots: np.ndarray  # index into rmax (ERR), weights (SRecall) or recall levels (IPrec)
    need: np.ndarray  # bool per code
    rmax: np.ndarray
    weights: np.ndarray  # (gammas, judged items) SRecall weights
    recall_levels: np.ndarray
    ideal_len: int
    gain_keys: np.ndarray  # a mapped gain: sorted grades
    gain_vals: np.ndarray  # and their gains
    infap_pooled: bool
    tie_mode: int


def make_plan(
    judgments: Judgments, runs: Runs, specs: Sequence[MetricSpec], opts: Options | None = None
) -> Plan:
    """Kernel inputs for ``specs`` under the options ``opts`` (trec_eval's readings if None)."""
    opts = opts or options()
    if opts.ties == "expected":
        refused = sorted({str(s) for s in specs if s.name not in EXPECTED_METRICS})
        if refused:
            raise OptionError(
                f"ties='expected' has no closed form for {', '.join(refused)} here; it computes "
                f"{', '.join(sorted(EXPECTED_METRICS))}. Evaluate the others with another tie "
                "rule (e.g. ties='pessimistic' and ties='optimistic' bound them)"
            )
    depth = runs.depth
    largest = max(_max_entries(judgments), 1)
    codes, kdivs, cuts, slots = [], [], [], []
    rmaxes: list[float] = []
    gammas: list[float] = []
    levels: list[float] = []
    for spec in specs:
        if dict(spec.params).get("rel") is not None or not REGISTRY[spec.name].engine:
            raise ValueError(
                f"{spec} is computed by trec_eval's pass only: use recmeta.metrics.trec_eval "
                "(`recmeta evaluate`); here relevance is the judgments' threshold (rel= is not "
                "read) and RBP, Judged, SetP, SetR, SetF are not computed"
            )
        if spec.name == "nDCG":
            gain = spec.param("gain")
            gain = opts.gain if gain is GAIN_FROM_OPTION else gain
            code = K.NDCG_MAP if isinstance(gain, tuple) else _GAINS[gain]
        elif spec.name in _CODES:
            code = _CODES[spec.name]
        else:
            raise ValueError(f"{spec} is not computed by the compiled pass")
        slot = 0
        if code == K.ERR:
            rmax = spec.param("rmax")
            rmax = float(judgments.max_grade if rmax is None else rmax)
            slot = _slot(rmaxes, rmax)
        elif code == K.SRECALL:
            slot = _slot(gammas, float(spec.param("gamma")))
        elif code == K.IPREC:
            slot = _slot(levels, float(spec.param("recall")))
        codes.append(code)
        if spec.k is not None:
            kdivs.append(spec.k)
            cuts.append(min(spec.k, depth))
        else:
            kdivs.append(largest if code in _NDCG_CODES else depth)
            cuts.append(depth)
        slots.append(slot)
    kdivs_a = np.asarray(kdivs, dtype=np.int64)
    cuts_a = np.asarray(cuts, dtype=np.int64)
    order = np.argsort(cuts_a, kind="stable")
    codes_a = np.asarray(codes, dtype=np.int64)
    need = np.zeros(K.N_CODES, dtype=np.bool_)
    need[codes_a] = True
    ndcg = np.isin(codes_a, _NDCG_CODES)
    ideal_len = min(int(kdivs_a[ndcg].max()), largest) if ndcg.any() else 0
    gain_keys, gain_vals = opts.gain_table
    if need[K.NDCG_MAP]:
        _check_gain_table(judgments, gain_keys)
    return Plan(
        order,
        codes_a[order],
        cuts_a[order],
        kdivs_a[order],
        np.asarray(slots, dtype=np.int64)[order],
        need,
        np.asarray(rmaxes, dtype=np.float64),
        _srecall_weights(judgments, gammas),
        np.asarray(levels, dtype=np.float64),
        ideal_len,
        gain_keys,
        gain_vals,
        opts.infap == "pooled",
        TIE_CODES[opts.ties],
    )


def _check_gain_table(judgments: Judgments, keys: np.ndarray) -> None:
    e = judgments._entries
    grades = np.unique(e.grades[judgments.active() & (e.grades >= 0)])
    missing = grades[~np.isin(grades, keys)]
    if missing.size:
        raise OptionError(
            f"the gain mapping has no gain for grade(s) {', '.join(f'{g:g}' for g in missing[:10])}"
            f"; give a gain for every grade of the judgments (grades: "
            f"{', '.join(f'{g:g}' for g in grades[:20])})"
        )


def tie_lists(runs: Runs, ties: str) -> tuple[np.ndarray, np.ndarray]:
    """The lists and tie flags the pass reads under the tie rule ``ties``.

    ``trec_eval`` and ``item_id`` are orders: tie blocks are re-sorted when the runs hold the
    other one. ``pessimistic``, ``optimistic`` and ``expected`` read trec_eval's order and the
    blocks. Runs without tie blocks are read as given under ``trec_eval`` and refused otherwise.
    """
    ranks = np.ascontiguousarray(runs.ranks, dtype=np.int32)
    if runs.tied is None:
        if ties != "trec_eval":
            raise OptionError(
                f"ties={ties!r} needs the runs' tie blocks, and these runs have none (built from "
                "item orders or ranks alone); build them from scores with Runs.from_frame or "
                "Runs.from_trec, or pass tied= to Runs.from_orders"
            )
        return ranks, _NO_TIES
    tied = np.ascontiguousarray(runs.tied, dtype=np.bool_)
    order = "item_id" if ties == "item_id" else "trec_eval"
    stored = "item_id" if runs.ties == "item_id" else "trec_eval"
    if order != stored and tied.any():
        ranks = _reorder_blocks(runs, ranks, tied, order)
    return ranks, (tied if ties not in ("trec_eval", "item_id") else _NO_TIES)


def _reorder_blocks(runs: Runs, ranks: np.ndarray, tied: np.ndarray, order: str) -> np.ndarray:
    """``ranks`` with each tie block sorted in ``order`` (trec_eval: id text descending;
    item_id: ids ascending)."""
    key_of = -text_order(runs.items) if order == "trec_eval" else id_order(runs.items)
    block = np.cumsum(~tied, axis=2)
    key = np.where(ranks >= 0, key_of[np.maximum(ranks, 0)], np.iinfo(np.int64).max)
    s, u, d = ranks.shape
    lists = np.repeat(np.arange(s * u), d)
    perm = np.lexsort((key.ravel(), block.ravel(), lists))
    return np.ascontiguousarray(ranks.ravel()[perm].reshape(ranks.shape))


def _slot(values: list[float], value: float) -> int:
    if value not in values:
        values.append(value)
    return values.index(value)


def _max_entries(judgments: Judgments) -> int:
    return int(np.diff(judgments._entries.indptr).max(initial=0))


def _srecall_weights(judgments: Judgments, gammas: list[float]) -> np.ndarray:
    """``w_i = N_i^(-γ/(γ+1))`` per judged item, one row per γ (see the module docstring)."""
    n = len(judgments.items)
    if not gammas:
        return np.zeros((0, n))
    e = judgments._entries
    keep = judgments.active() & (e.grades >= judgments.threshold) & (e.grades >= 0)
    if judgments.item_popularity is not None:
        pop = np.asarray(judgments.item_popularity, dtype=np.float64)
    else:
        pop = np.bincount(e.items[keep], minlength=n).astype(np.float64)
    if (pop[e.items[keep]] <= 0).any():
        raise ValueError(
            "stratified recall: a relevant item has popularity 0; popularity counts must "
            "include the test ratings (count relevant ratings over the whole data set)"
        )
    safe = np.where(pop > 0, pop, 1.0)
    rows = [safe ** (-1.0 if np.isinf(g) else -g / (g + 1.0)) for g in gammas]
    return np.ascontiguousarray(np.stack(rows))


def _eleven(spec: MetricSpec) -> list[MetricSpec]:
    """The IPrec specs whose mean is ``IPrec11`` (same cut-off)."""
    return [MetricSpec("IPrec", spec.k, (("recall", x),)) for x in ELEVEN_POINTS]


def unique_specs(specs: Sequence[MetricSpec]) -> list[MetricSpec]:
    """The distinct specs the pass computes (``IPrec11`` becomes its eleven levels)."""
    flat: list[MetricSpec] = []
    for spec in specs:
        flat.extend(_eleven(spec) if spec.name == "IPrec11" else [spec])
    return list(dict.fromkeys(MetricSpec(f.name, f.k, f.params) for f in flat))


def check_err(plan: Plan, gmax: float) -> None:
    if plan.rmax.size and gmax > plan.rmax.min():
        raise ValueError(
            f"ERR: a grade exceeds rmax={plan.rmax.min():g}; pass ERR(rmax=...) >= the top grade"
        )


def run_plan(
    judgments: Judgments,
    runs: Runs,
    specs: Sequence[MetricSpec],
    all_users: bool = False,
    opts: Options | None = None,
) -> list[np.ndarray]:
    """Per-user values (systems × users) of each spec, in the order given (NaN = excluded).

    ``all_users`` also scores the users without a relevant item (see the module docstring);
    ``opts`` are the options of :mod:`recmeta.metrics._options` (trec_eval's if None).
    """
    opts = opts or options()
    unique = unique_specs(specs)
    plan = make_plan(judgments, runs, unique, opts)
    ranks, tied = tie_lists(runs, opts.ties)
    e = judgments._entries
    positions = (
        ranks.size
        if plan.cuts.size == 0
        else ranks.shape[0] * ranks.shape[1] * int(plan.cuts.max())
    )
    kernel = K.evaluate_lists if positions >= PARALLEL_MIN_POSITIONS else K.evaluate_lists_serial
    args = (
        ranks,
        tied,
        plan.tie_mode,
        e.indptr,
        e.items,
        e.grades,
        judgments.active(),
        len(judgments.items),
        float(judgments.threshold),
        plan.infap_pooled,
        plan.codes,
        plan.cuts,
        plan.kdivs,
        plan.slots,
        plan.need,
        plan.rmax,
        plan.weights,
        plan.recall_levels,
        plan.gain_keys,
        plan.gain_vals,
        plan.ideal_len,
        _max_entries(judgments),
        bool(all_users),
    )
    # the largest kernel: processes starting together compile it once; the threaded pass
    # calls the per-user block it compiles (``_table_block``) from Python
    compile_once(K.evaluate_lists_serial, args)
    out, gmax = kernel(*args)
    check_err(plan, gmax.max(initial=0.0))
    return by_request(specs, unique, plan, out)


def by_request(
    specs: Sequence[MetricSpec], unique: list[MetricSpec], plan: Plan, out: np.ndarray
) -> list[np.ndarray]:
    """The kernel's output (requests × ...) as one array per spec, in the order of ``specs``."""
    by_spec: dict[MetricSpec, np.ndarray] = {}
    for j, i in enumerate(plan.order):
        by_spec[unique[i]] = out[j]
    values = []
    handed: set[MetricSpec] = set()
    for spec in specs:
        if spec.name == "IPrec11":
            total = np.zeros_like(by_spec[_eleven(spec)[0]])
            for part in reversed(_eleven(spec)):  # trec_eval adds from the top level down
                total = total + by_spec[part]
            values.append(total / len(ELEVEN_POINTS))
            continue
        key = MetricSpec(spec.name, spec.k, spec.params)
        values.append(by_spec[key].copy() if key in handed else by_spec[key])  # callers write
        handed.add(key)
    return values
