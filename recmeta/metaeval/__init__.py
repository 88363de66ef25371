"""Meta-evaluation: how far a metric's verdicts can be trusted.

- :mod:`~recmeta.metaeval.incompleteness`: test sets made incomplete on purpose (random ratings,
  items or users kept; popular items removed), scored by the metric engine;
- :mod:`~recmeta.metaeval.two_level`: the two-level bootstrap over users and random masks;
- :mod:`~recmeta.metaeval.agreement`: Kendall's τ between system orders, robustness curves;
- :mod:`~recmeta.metaeval.significance`: paired tests over users (permutation, t, Wilcoxon),
  multiple-comparison corrections and discriminative power.
"""

from __future__ import annotations

from . import agreement, bootstrap, incompleteness, significance, two_level

__all__ = ["agreement", "bootstrap", "incompleteness", "significance", "two_level"]
