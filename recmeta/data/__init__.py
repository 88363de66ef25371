"""Datasets: the GroupLens MovieLens registry, a verified download cache, and bring-your-own data.

Every loader returns a *tidy ratings frame*: one row per (user, item) pair with the columns
``user``, ``item``, ``rating`` (float64) and, where the source has one, ``timestamp`` (int64).
Data without ratings (implicit feedback: clicks, plays, purchases) load as an *interaction
frame*, the same without the ``rating`` column; every interaction counts as relevant, and
:func:`is_implicit` tells the two apart.

:func:`load` is the one loader of the package: it takes a registered release name, the path
of a ratings file of your own (CSV, TSV, MovieLens ``.dat``, Parquet; columns recognised by their
usual names or named with ``columns=``, the ``--columns`` option of every command), a pandas
frame or a LensKit ``Dataset`` / ``ItemListCollection``, so every command and chapter parameter
that names a dataset accepts any of them.

The package's modules, in the order the data flows:

- :mod:`~recmeta.data.registry`: the GroupLens releases and the verified download cache
  (``$RECMETA_DATA``, else ``data/`` in the project folder);
- :mod:`~recmeta.data.columns`, :mod:`~recmeta.data.lenskit_objects`: files, frames and LensKit
  objects of one's own; :mod:`~recmeta.data.validation`: what is refused and why;
- :mod:`~recmeta.data.loading`: :func:`load`, the one loader;
- :mod:`~recmeta.data.splits`: train/test splits; :mod:`~recmeta.data.popularity`: item
  popularity, strata and the simulated long tail;
- :mod:`~recmeta.data.description`, :mod:`~recmeta.data.figures`,
  :mod:`~recmeta.data.sentences`: a dataset described in numbers, figures and sentences.

Reference for the data: F. Maxwell Harper and Joseph A. Konstan. 2015. The MovieLens Datasets:
History and Context. ACM TiiS 5(4), 19.
"""

from __future__ import annotations

from . import popularity as popularity, splits as splits
from .columns import (
    COLUMN_SPELLINGS,
    FILE_SUFFIXES,
    ROLES,
    ColumnNames,
    Columns,
    ColumnsRecognised,
    from_csv,
    from_frame,
    parse_columns,
    usual_names,
)
from .description import gini, stats
from .lenskit_objects import from_lenskit, is_lenskit, lenskit_frame, to_lenskit
from .loading import is_path, load
from .registry import (
    REGISTRY,
    DatasetInfo,
    DatasetNotAvailable,
    cache_dir,
    describe_source,
    fetch,
    info,
    project_root,
)
from .validation import DataError, is_implicit, validate_ratings

__all__ = [
    "DatasetInfo",
    "REGISTRY",
    "DataError",
    "DatasetNotAvailable",
    "project_root",
    "cache_dir",
    "info",
    "fetch",
    "load",
    "is_path",
    "is_implicit",
    "describe_source",
    "from_frame",
    "from_csv",
    "from_lenskit",
    "lenskit_frame",
    "usual_names",
    "is_lenskit",
    "parse_columns",
    "Columns",
    "ColumnNames",
    "ColumnsRecognised",
    "COLUMN_SPELLINGS",
    "FILE_SUFFIXES",
    "ROLES",
    "validate_ratings",
    "stats",
    "gini",
    "to_lenskit",
]
