"""The codes of trec_eval's measures and the constants of the compiled pass
(:mod:`._te_kernel`), in a module of their own so that the catalogue (:mod:`._trec_names`)
reads them without importing numba."""

from __future__ import annotations

(
    NUM_RET,
    NUM_REL,
    NUM_REL_RET,
    MAP,
    GM_MAP,
    RPREC,
    BPREF,
    RECIP_RANK,
    IPREC,
    P,
    RECALL,
    INFAP,
    GM_BPREF,
    RPREC_MULT,
    UTILITY,
    PT11,
    BING,
    G,
    DCG,
    IDEAL_DCG,
    NDCG,
    NDCG_REL,
    RNDCG,
    NDCG_CUT,
    MAP_CUT,
    REL_P,
    SUCCESS,
    SET_P,
    SET_REL_P,
    SET_RECALL,
    SET_MAP,
    SET_F,
    NONREL_JUDGED_RET,
    RBP,
    RBP_RESID,
    UNJ,
    NUM_Q,
    JUDGED,
) = range(38)

NONPOOL = -1  # RELVALUE_NONPOOL: retrieved, not in the qrels
UNJUDGED = -2  # RELVALUE_UNJUDGED: in the qrels with a negative grade
MIN_GEO_MEAN = 1e-5
INFAP_EPSILON = 1e-5

# ------------------------------------------------------------------ the reader (._te_parse)
#: field kinds given to :func:`._te_parse.parse_trec`, one per column
SKIP, ID, NUMBER = 0, 1, 2
#: its error codes (``status[S_ERROR]``)
OK, FIELD_COUNT, NOT_A_NUMBER, EMPTY = 0, 1, 2, 3
#: the slots of its ``status``
S_ERROR, S_LINE, S_GOT, S_START, S_END, S_COLUMN, S_ROWS, S_SLOW = range(8)
