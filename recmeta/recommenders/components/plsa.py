r"""Probabilistic latent semantic analysis for collaborative filtering (Hofmann 2004).

The model explains user *u*'s choice of item *i* through *Z* latent topics,
:math:`P(i \mid u) = \sum_z P(z \mid u)\,P(i \mid z)`, fitted by (tempered) EM to the training
counts :math:`n_{ui}` (1 per interaction, or the rating with ``feedback="explicit"``):

* E-step: :math:`q(z \mid u, i) \propto [P(z \mid u)\,P(i \mid z)]^\beta`;
* M-step: :math:`P(i \mid z) \propto \sum_u n_{ui}\,q(z \mid u, i)` and
  :math:`P(z \mid u) \propto \sum_i n_{ui}\,q(z \mid u, i)`.

Both sums factorise, :math:`\sum_i n_{ui} q(z|u,i) = \theta_{uz}^\beta (R\,\phi^\beta)_{uz}` with
:math:`R_{ui} = n_{ui} / \sum_z \theta^\beta_{uz}\phi^\beta_{iz}` on the observed pairs, so an
iteration costs two sparse–dense products (memory O(nnz + (|U| + |I|) Z)), never an
nnz × Z array. β = 1 is plain EM, whose log-likelihood
:math:`\sum_{ui} n_{ui} \log P(i \mid u)` never decreases; Hofmann's tempered EM uses β < 1.
The score of item *i* for user *u* is :math:`P(i \mid u)`.

Bellogín et al. (2017) report pLSA as the strongest of their recommenders; this implementation
follows Hofmann's model, not their (unpublished) code. Users unknown at training time cannot be
scored (no folding-in).
"""

from __future__ import annotations

from typing import Literal, override

import numpy as np
import scipy.sparse as sp
from lenskit.data import Dataset, ItemList, QueryInput, Vocabulary
from lenskit.pipeline import Component
from lenskit.training import Trainable, TrainingOptions
from pydantic import BaseModel, PositiveFloat, PositiveInt

from ._common import scored, training_matrix, user_number

__all__ = ["PLSAConfig", "PLSAScorer", "em_step", "log_likelihood"]

_CHUNK = 1 << 18


class PLSAConfig(BaseModel, extra="forbid"):
    """Hyper-parameters of :class:`PLSAScorer`."""

    topics: PositiveInt = 50
    "Number of latent topics Z."
    iterations: PositiveInt = 50
    "EM iterations."
    beta: PositiveFloat = 1.0
    "Tempering exponent of the E-step (1 = plain EM; Hofmann 2004 anneals below 1)."
    feedback: Literal["implicit", "explicit"] = "implicit"
    "``implicit``: n_ui = 1 per interaction; ``explicit``: n_ui = the rating."


def _pair_dots(a: np.ndarray, b: np.ndarray, rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
    """``sum(a[rows] * b[cols], axis=1)`` in chunks, to bound memory."""
    out = np.empty(len(rows))
    for s in range(0, len(rows), _CHUNK):
        e = s + _CHUNK
        out[s:e] = np.einsum("ij,ij->i", a[rows[s:e]], b[cols[s:e]])
    return out


def em_step(
    counts: sp.csr_array,
    theta: np.ndarray,
    phi: np.ndarray,
    beta: float = 1.0,
    *,
    dots: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """One (tempered) EM iteration; ``theta`` = P(z|u) (users × Z), ``phi`` = P(i|z) (items × Z).

    ``dots``: the sums Σ_z P(z|u) P(i|z) over the observed pairs in ``coo_array(counts)``'s
    order, when already computed (for β = 1 they are the E-step's denominators, and
    :func:`log_likelihood`'s terms)."""
    tb, pb = (theta, phi) if beta == 1.0 else (theta**beta, phi**beta)
    c = sp.coo_array(counts)
    denom = dots if dots is not None and beta == 1.0 else _pair_dots(tb, pb, c.row, c.col)
    ratio = sp.csr_array(
        (np.divide(c.data, denom, out=np.zeros_like(denom), where=denom > 0), (c.row, c.col)),
        shape=counts.shape,
    )
    new_theta = tb * (ratio @ pb)
    new_phi = pb * (ratio.T @ tb)
    t_sum = new_theta.sum(axis=1, keepdims=True)
    p_sum = new_phi.sum(axis=0, keepdims=True)
    new_theta = np.divide(
        new_theta, t_sum, out=np.full_like(new_theta, 1 / theta.shape[1]), where=t_sum > 0
    )
    new_phi = np.divide(new_phi, p_sum, out=np.zeros_like(new_phi), where=p_sum > 0)
    return new_theta, new_phi


def log_likelihood(counts: sp.csr_array, theta: np.ndarray, phi: np.ndarray) -> float:
    r""":math:`\sum_{(u,i)} n_{ui} \log \sum_z P(z|u) P(i|z)` over the observed pairs."""
    c = sp.coo_array(counts)
    return _log_likelihood(c.data, _pair_dots(theta, phi, c.row, c.col))


def _log_likelihood(counts: np.ndarray, dots: np.ndarray) -> float:
    return float(np.sum(counts * np.log(dots)))


class PLSAScorer(Component[ItemList], Trainable):
    """pLSA recommender (Hofmann 2004): score = P(i | u); see the module docstring."""

    config: PLSAConfig
    users: Vocabulary
    items: Vocabulary
    theta_: np.ndarray
    "P(z | u), users × topics."
    phi_: np.ndarray
    "P(i | z), items × topics (columns sum to 1)."
    log_likelihood_: list[float]
    "Training log-likelihood after each iteration."

    @override
    def is_trained(self) -> bool:
        return hasattr(self, "theta_")

    @override
    def train(self, data: Dataset, options: TrainingOptions = TrainingOptions()) -> None:
        c = self.config
        counts = training_matrix(data, field="rating" if c.feedback == "explicit" else None)
        if c.feedback == "explicit" and np.any(counts.data < 0):
            raise ValueError(
                "pLSA with feedback='explicit' uses ratings as counts and needs them >= 0; "
                "shift the ratings or use feedback='implicit'"
            )
        rng = options.random_generator()
        theta = rng.random((counts.shape[0], c.topics)) + 0.5
        phi = rng.random((counts.shape[1], c.topics)) + 0.5
        theta /= theta.sum(axis=1, keepdims=True)
        phi /= phi.sum(axis=0, keepdims=True)
        ll = []
        from tqdm import tqdm

        # the likelihood's terms of one iteration are the next E-step's denominators (β = 1)
        pairs = sp.coo_array(counts)
        dots = None
        for _ in tqdm(range(c.iterations), desc="pLSA EM", leave=False, disable=None):
            theta, phi = em_step(counts, theta, phi, c.beta, dots=dots)
            dots = _pair_dots(theta, phi, pairs.row, pairs.col)
            ll.append(_log_likelihood(pairs.data, dots))
        self.theta_, self.phi_, self.log_likelihood_ = theta, phi, ll
        self.users, self.items = data.users, data.items

    def score_matrix(self, users: np.ndarray) -> np.ndarray:
        """P(i | u) for the training users numbered ``users`` and every item."""
        return self.theta_[np.asarray(users)] @ self.phi_.T

    @override
    def __call__(self, query: QueryInput, items: ItemList) -> ItemList:
        u = user_number(query, self.users)
        if u is None:
            return ItemList(items, scores=np.nan)
        return scored(items, self.items, self.phi_ @ self.theta_[u])
