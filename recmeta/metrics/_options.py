r"""The engine's options: infAP's pool, nDCG's gain, and the order of tied items.

Papers and libraries give one name to several numbers where they read infAP's pool, nDCG's gain
or tied scores differently. The engine takes each reading as a named option of
:func:`~recmeta.metrics.evaluate`, :func:`~recmeta.metrics.score_matrices`,
:func:`~recmeta.metrics.score_matrix` and :class:`~recmeta.metrics.Subsets`; the defaults are
trec_eval's readings, so a result without options is what trec_eval prints. This docstring is the
one place the options are defined; the book's Metrics page shows each on a small example.

``infap=`` — which items are in infAP's pool (Yilmaz & Aslam 2006)
    For a relevant item at rank :math:`j + 1`, infAP's estimate of the precision above it is
    :math:`\frac{1}{j+1} + \frac{j}{j+1}\cdot\frac{|d|}{j}\cdot\frac{r + \epsilon}{n_d + 2\epsilon}`
    (1 at rank 1), :math:`|d|` the pooled items among the :math:`j` above, :math:`n_d` the judged
    ones among them, :math:`r` the relevant ones, :math:`\epsilon = 10^{-5}`; infAP is the mean
    of these estimates over the relevant items (a missed relevant item adds 0).

    * ``"trec_eval"`` (default): the pool is the judged items, plus the items a qrels file lists
      with a negative grade (pooled but not judged; ``Judgments.from_frame(..., negative=
      "pooled")``). On judgments without negative grades :math:`|d| = n_d` and infAP is AP up to
      :math:`\epsilon` — trec_eval's ``m_infap.c`` on such qrels.
    * ``"pooled"``: every ranked item is in the pool, so :math:`|d| = j`; the ranked items the
      user did not rate are pooled but unjudged, as trec_eval reads them given a qrels line with
      grade −1 for each. This is infAP as Valcarce et al. (2020, eq. 11; 2018, eq. 8) use it in
      recommendation: the precision above a relevant item is estimated from its judged
      neighbours only.

``gain=`` — the gain of a grade :math:`r` in nDCG (Järvelin & Kekäläinen 2002)
    The gain of the ``nDCG`` names that do not set their own (``nDCG(gain=exp)@10`` does); the
    ideal DCG ranks all the user's judged items by that gain. Unjudged items gain 0.

    * ``"linear"`` (default): :math:`g = r`, trec_eval's ``ndcg_cut`` and Valcarce et al.
      (2020, eq. 5);
    * ``"exponential"`` (or ``"exp"``): :math:`g = 2^r - 1` (Burges et al. 2005);
    * ``"binary"``: :math:`g = 1` for a relevant item (:math:`r \ge \tau`, :math:`r > 0`), else 0;
    * a mapping ``{grade: gain}``: any other gain; every grade the judgments hold must be a key.

``ties=`` — the order of items with equal scores
    A *tie block* is a run of consecutive items of one list with equal scores (or equal ranks).
    Runs built from scores (:meth:`Runs.from_frame`, :meth:`Runs.from_trec`) record their
    blocks; the rules other than ``"trec_eval"`` need them. An evaluation reads the rule it is
    given, or else the runs' own (``Runs.from_frame(..., ties=...)``, ``"trec_eval"`` unless
    said otherwise).

    * ``"trec_eval"`` (default): score descending, then item id *as text* descending — trec_eval's
      ``comp_sim_docno``, the order in which :class:`~recmeta.metrics.Runs` stores every list.
    * ``"item_id"``: score descending, then item id ascending in the ids' own order (numbers as
      numbers) — the order of the statistical-biases chapter (Bellogín et al. 2017).
    * ``"pessimistic"``: within a block, items by increasing grade — unjudged items first, then
      judged ones from the lowest grade up, so the relevant items come last; equal grades keep
      the trec_eval order. For P, R, AP, RR, ERR, and nDCG with a gain that grows with the
      grade, this is the lowest value any ordering of the blocks gives.
    * ``"optimistic"``: within a block, items by decreasing grade — relevant items first; the
      highest value, in the same sense.
    * ``"expected"``: the mean of the metric over every ordering of every block, all equally
      likely — the tie-aware measures of McSherry & Najork (2008). With a block of :math:`n`
      items, :math:`m` of them relevant, at ranks :math:`s+1 .. s+n`, and :math:`H` relevant
      items above it, each position :math:`s+1+t` (:math:`t = 0..n-1`) holds a relevant item
      with probability :math:`m/n` and the block's mean gain, so P, R, F1, nDCG, NDCNG,
      SRecall, Rprec and the counts take these expected hits and gains;
      :math:`\mathrm{E}[\mathrm{AP}] = \frac{1}{|R|}\sum_{t} \frac{m}{n}\,
      \frac{H + 1 + t\,(m-1)/(n-1)}{s+1+t}` (the expected number of relevant items at or above
      a relevant one); RR and Success read the first block holding a relevant item, whose first
      relevant item sits at :math:`s+1+t` with probability
      :math:`\frac{m}{n-t}\prod_{q<t}\frac{n-m-q}{n-q}`. ERR, bpref, infAP, AUC, µAP and IPrec
      are refused: they are not sums of per-position terms, and no closed form is given here.

    The reorderings act on the lists as the runs hold them: a block cut by the depth of a
    list (``depth=`` or a top-k run) is read as the items it kept. Sampled evaluation
    (:mod:`recmeta.sampled`) places one held-out item among sampled candidates with the same
    rules (its ``"trec_eval"`` is this order; ``"expected"`` averages the metric over the
    item's span of ranks, the same mean over the block's orderings).

References: Yilmaz & Aslam (2006), *Estimating average precision with incomplete and imperfect
judgments*, CIKM; Valcarce, Bellogín, Parapar & Castells (2018, 2020); Järvelin & Kekäläinen
(2002), *Cumulated gain-based evaluation of IR techniques*, TOIS; Burges et al. (2005),
*Learning to rank using gradient descent*, ICML; McSherry & Najork (2008), *Computing
information retrieval performance measures efficiently in the presence of tied scores*, ECIR.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

__all__ = ["INFAP", "GAINS", "TIES", "EXPECTED_METRICS", "Options", "options", "OptionError"]

#: the readings of infAP's pool, default first
INFAP = ("trec_eval", "pooled")
#: the named gains of nDCG, default first (a mapping grade → gain is accepted too)
GAINS = ("linear", "exponential", "binary")
#: the tie rules, default first
TIES = ("trec_eval", "item_id", "pessimistic", "optimistic", "expected")
#: the metrics ``ties="expected"`` computes; the others are refused by name
EXPECTED_METRICS = frozenset(
    {
        "P",
        "R",
        "F1",
        "AP",
        "nDCG",
        "NDCNG",
        "RR",
        "Success",
        "SRecall",
        "Rprec",
        "NumQ",
        "NumRet",
        "NumRel",
        "NumRelRet",
    }
)

_GAIN_ALIASES = {"linear": "linear", "exponential": "exp", "exp": "exp", "binary": "binary"}
# kernel codes of the tie rules ("item_id" is applied to the lists before the pass: code 0)
TIE_CODES = {"trec_eval": 0, "item_id": 0, "pessimistic": 1, "optimistic": 2, "expected": 3}


class OptionError(ValueError):
    """An unknown option value, or one these inputs cannot take; the message says which."""


@dataclass(frozen=True)
class Options:
    """Validated options: ``infap``, ``gain`` (``"linear"``, ``"exp"``, ``"binary"`` or a tuple of
    (grade, gain) pairs sorted by grade) and ``ties``. Build with :func:`options`."""

    infap: str = "trec_eval"
    gain: str | tuple[tuple[float, float], ...] = "linear"
    ties: str = "trec_eval"

    @property
    def gain_table(self) -> tuple[np.ndarray, np.ndarray]:
        """Sorted grades and their gains (empty unless ``gain`` is a mapping)."""
        if isinstance(self.gain, str):
            return np.zeros(0), np.zeros(0)
        keys = np.array([k for k, _ in self.gain], dtype=np.float64)
        return keys, np.array([v for _, v in self.gain], dtype=np.float64)


def gain_name(value: str) -> str:
    """The canonical name of a named gain (``"exponential"`` → ``"exp"``); raises otherwise."""
    try:
        return _GAIN_ALIASES[value]
    except (KeyError, TypeError):
        raise OptionError(
            f"gain must be one of {', '.join(GAINS)} (or 'exp'), or a mapping "
            f"grade → gain; got {value!r}"
        ) from None


def options(
    infap: str = "trec_eval", gain: str | Mapping[float, float] = "linear", ties: str = "trec_eval"
) -> Options:
    """Check the option values (see the module docstring) and return them as :class:`Options`."""
    if infap not in INFAP:
        raise OptionError(f"infap must be one of {', '.join(map(repr, INFAP))}, got {infap!r}")
    if ties not in TIES:
        raise OptionError(f"ties must be one of {', '.join(map(repr, TIES))}, got {ties!r}")
    if isinstance(gain, Mapping):
        if not gain:
            raise OptionError("gain mapping is empty; give the gain of every grade")
        try:
            pairs = sorted((float(k), float(v)) for k, v in gain.items())
        except (TypeError, ValueError):
            raise OptionError(f"gain mapping must map numbers to numbers, got {gain!r}") from None
        if not all(np.isfinite(k) and np.isfinite(v) for k, v in pairs):
            raise OptionError("gain mapping holds a NaN or infinite grade or gain")
        return Options(infap, tuple(pairs), ties)
    return Options(infap, gain_name(gain), ties)
