"""Claims and ledgers: a paper's claim in our words, and how the chapter's results decide it.

A :class:`Claim` holds the statement, its source in the paper, the paper's printed value and
dataset, the rule in words, the results it ``needs`` and the function computing its
:class:`~recmeta.ledger.rules.Outcome`. A :class:`Ledger` is the ordered claims of one chapter;
:meth:`Ledger.evaluate` gives one row per claim (columns :data:`COLUMNS`).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from .. import analyses
from .kinds import DERIVED, Kind, kind_of, paper_datasets
from .rules import Outcome, Verdict, not_reproduced
from .table import COLUMNS, counts, to_markdown

__all__ = ["PROFILES", "MissingResult", "Claim", "Ledger", "with_tie_sensitive"]

#: the book's profiles: ``full`` (the book's default) and ``quick`` (small sizes, for CI)
PROFILES = ("full", "quick")


class MissingResult(LookupError):
    """A claim read a result it did not declare in ``needs``."""


class _Needed(Mapping[str, Any]):
    """Read-only view of the results a claim declared; reading any other name is an error."""

    def __init__(self, results: Mapping[str, Any], claim: Claim) -> None:
        self._results = results
        self._claim = claim

    def _check(self, key: str) -> None:
        if key not in self._claim.needs:
            raise MissingResult(
                f"claim {self._claim.id!r} reads result {key!r}, which is not among its needs "
                f"{self._claim.needs}; add it there"
            )

    def __getitem__(self, key: str) -> Any:
        self._check(key)
        return self._results[key]

    def __contains__(self, key: object) -> bool:
        self._check(str(key))
        return key in self._results

    def get(self, key: str, default: Any = None) -> Any:
        self._check(key)
        return self._results.get(key, default)

    def __iter__(self) -> Iterator[str]:
        return (k for k in self._claim.needs if k in self._results)

    def __len__(self) -> int:
        return sum(k in self._results for k in self._claim.needs)


_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:+-]*$")


@dataclass(frozen=True)
class Claim:
    """One claim of a paper and how to check it on the chapter's results.

    ``evaluate`` receives the chapter's named results restricted to ``needs`` and returns an
    :class:`Outcome`; ``rule`` says the verdict rule in words for the reader. ``paper_value`` is
    the number or text as the paper prints it, ``paper_dataset`` the data it was measured on.
    """

    id: str
    chapter: str
    statement: str
    source: str
    rule: str
    evaluate: Callable[[Mapping[str, Any]], Outcome] = field(repr=False)
    paper_value: float | str | None = None
    paper_dataset: str | None = None
    needs: tuple[str, ...] = ()
    data_free: str | None = None

    def __post_init__(self) -> None:
        if not _ID.match(self.id):
            raise ValueError(
                f"claim id {self.id!r} must be non-empty letters, digits and . _ : + -"
            )
        for name in ("chapter", "statement", "source", "rule"):
            if not str(getattr(self, name)).strip():
                raise ValueError(f"claim {self.id!r} needs a non-empty {name}")
        if not callable(self.evaluate):
            raise TypeError(f"claim {self.id!r}: evaluate must be callable")
        object.__setattr__(self, "needs", tuple(self.needs))
        if self.data_free is not None and not self.data_free.strip():
            raise ValueError(f"claim {self.id!r}: data_free must say why (or be None)")

    @property
    def setting_known(self) -> bool:
        """Whether the claim's setting is declared: a derivation, a named dataset or data-free."""
        return (
            self.paper_dataset == DERIVED
            or bool(paper_datasets(self.paper_dataset))
            or bool(self.data_free)
        )

    def kind(self, dataset: str) -> Kind:
        """The kind of this claim's verdict on ``dataset`` (see :func:`.kinds.kind_of`)."""
        return kind_of(self.paper_dataset, self.data_free, dataset)

    def missing(self, results: Mapping[str, Any]) -> list[str]:
        """The needed results that are absent (or ``None``) in ``results``."""
        return [n for n in self.needs if results.get(n) is None]

    def outcome(self, results: Mapping[str, Any], *, strict: bool = True) -> Outcome:
        """Evaluate the claim.

        A needed result that is absent gives **not reproduced here**, naming it. With
        ``strict=False`` an error raised by ``evaluate`` is recorded as **not reproduced here**
        with the error as the reason, instead of propagating.
        """
        missing = self.missing(results)
        if missing:
            names = ", ".join(repr(m) for m in missing)
            return not_reproduced(
                f"result {names} was not computed in this run (e.g. skipped by the profile)"
                if len(missing) == 1
                else f"results {names} were not computed in this run (e.g. skipped by the profile)"
            )
        try:
            out = self.evaluate(_Needed(results, self))
            if not isinstance(out, Outcome):
                raise TypeError(
                    f"claim {self.id!r}: evaluate returned {type(out).__name__}, not an Outcome"
                )
        except Exception as exc:
            if strict:
                raise
            return not_reproduced(f"evaluation failed: {type(exc).__name__}: {exc}")
        return out


def with_tie_sensitive(frame: pd.DataFrame, variants: Mapping[str, pd.DataFrame]) -> pd.DataFrame:
    """``frame`` (a :meth:`Ledger.evaluate` frame) with ``tie_sensitive`` filled from the frames
    of the same ledger evaluated under other tie rules (``variants``, by rule): a claim is tie
    sensitive when its verdict under some variant where it is reproduced differs from its
    verdict in ``frame``; a claim not reproduced in ``frame`` is not."""
    gone = Verdict.NOT_REPRODUCED.value
    verdicts = [v.set_index("claim")["verdict"] for v in variants.values()]
    for name, v in zip(variants, verdicts, strict=True):
        missing = sorted(set(frame["claim"]) - set(v.index))
        if missing:
            raise ValueError(
                f"the frame under {name!r} lacks claims {missing}: evaluate the "
                "same ledger under every rule"
            )
    out = frame.copy()
    out["tie_sensitive"] = [
        v != gone and bool({o[c] for o in verdicts} - {gone} - {v})
        for c, v in zip(frame["claim"], frame["verdict"], strict=True)
    ]
    return out


def _needed(
    names: Iterable[str], results: Mapping[str, Any], memo: dict[str, Any]
) -> dict[str, Any]:
    """What keys an evaluation in the analysis cache: the content digest
    (:func:`recmeta.analyses.token`) of each named result, taken from ``memo`` when another
    claim of the same evaluation hashed it; a result the cache cannot key stays as it is, so
    the evaluation is computed uncached, with the cache's warning. With the cache off
    (:func:`recmeta.analyses.cache_dir` is None) nothing is keyed, so nothing is hashed."""
    out: dict[str, Any] = {}
    if analyses.cache_dir() is None:
        return out
    for k in names:
        if k not in results:
            continue
        if k not in memo:
            try:
                memo[k] = analyses.token(results[k])
            except TypeError:
                memo[k] = results[k]
        out[k] = memo[k]
    return out


def _nan(x: float | None) -> float:
    return float("nan") if x is None else float(x)


def _graded(claim: Claim, kind: Kind, out: Outcome, dataset: str) -> tuple[Verdict, str]:
    """The verdict as the kind reads it: a derivation holds or fails; a magnitude measured on
    other data (a transfer's value rule, unless the claim declares its quantity data-free) is
    shown and not graded."""
    v = out.verdict
    if kind is Kind.DERIVATION:
        mapped = {Verdict.AGREES: Verdict.HOLDS, Verdict.DIFFERS: Verdict.FAILS}
        return mapped.get(v, v), out.reason
    if (
        kind is Kind.TRANSFER
        and out.rule == "value"
        and not claim.data_free
        and v in (Verdict.AGREES, Verdict.DIFFERS, Verdict.INCONCLUSIVE)
    ):
        return Verdict.NOT_GRADED, (
            f"the paper measured this on {claim.paper_dataset}, ours is on {dataset}: a "
            "magnitude on other data is shown, not graded"
        )
    return v, out.reason


class Ledger:
    """The ordered claims of one chapter (one paper).

    Register claims with :meth:`add` or the :meth:`claim` decorator::

        ledger = Ledger("robustness", paper="valcarce2018robustness")

        @ledger.claim("valcarce2018.fig5.precision-most-robust", statement=...,
                      source="§5.1, Fig. 5a", paper_value="P", paper_dataset="ML-1M",
                      rule="order rule on mean τ", needs=("tau_sparsity",))
        def _(results):
            return order_rule(..., expected_best="P")
    """

    def __init__(self, chapter: str, *, paper: str | None = None, title: str | None = None) -> None:
        if not chapter or not chapter.strip():
            raise ValueError("a ledger needs a chapter name")
        self.chapter = chapter
        self.paper = paper
        self.title = title or chapter
        self._claims: dict[str, Claim] = {}

    def __repr__(self) -> str:
        return f"Ledger({self.chapter!r}, {len(self)} claims)"

    def __len__(self) -> int:
        return len(self._claims)

    def __iter__(self) -> Iterator[Claim]:
        return iter(self._claims.values())

    def __getitem__(self, claim_id: str) -> Claim:
        try:
            return self._claims[claim_id]
        except KeyError:
            known = ", ".join(self._claims)
            raise KeyError(
                f"no claim {claim_id!r} in ledger {self.chapter!r}; claims: {known}"
            ) from None

    @property
    def ids(self) -> list[str]:
        return list(self._claims)

    def add(self, claim: Claim) -> Claim:
        """Append ``claim``; its chapter must be the ledger's and its id new."""
        if claim.chapter != self.chapter:
            raise ValueError(
                f"claim {claim.id!r} belongs to chapter {claim.chapter!r}, not {self.chapter!r}"
            )
        if claim.id in self._claims:
            raise ValueError(f"ledger {self.chapter!r} already has a claim {claim.id!r}")
        self._claims[claim.id] = claim
        return claim

    def claim(
        self,
        id: str,
        *,
        statement: str,
        source: str,
        rule: str,
        paper_value: float | str | None = None,
        paper_dataset: str | None = None,
        needs: Iterable[str] = (),
        data_free: str | None = None,
    ) -> Callable[[Callable[[Mapping[str, Any]], Outcome]], Callable[[Mapping[str, Any]], Outcome]]:
        """Decorator registering the decorated function as the ``evaluate`` of a new claim."""

        def register(
            fn: Callable[[Mapping[str, Any]], Outcome],
        ) -> Callable[[Mapping[str, Any]], Outcome]:
            self.add(
                Claim(
                    id=id,
                    chapter=self.chapter,
                    statement=statement,
                    source=source,
                    rule=rule,
                    evaluate=fn,
                    paper_value=paper_value,
                    paper_dataset=paper_dataset,
                    needs=tuple(needs),
                    data_free=data_free,
                )
            )
            return fn

        return register

    def evaluate(
        self,
        results: Mapping[str, Any],
        *,
        dataset: str,
        profile: str,
        strict: bool = True,
        tie_variants: Mapping[str, Mapping[str, Any]] | None = None,
    ) -> pd.DataFrame:
        """Evaluate every claim on ``results``: one row per claim, columns :data:`COLUMNS`.

        ``ours``/``low``/``high`` are floats (NaN when absent), ``unresolved`` the end of the
        interval the replicates could not place (``"low"``, ``"high"``, ``"both"`` or None; that
        end lies further out than written), ``ours_text`` our result as text
        when it is not a number, ``verdict`` the :class:`Verdict`'s value. See
        :meth:`Claim.outcome` for absent results and ``strict``.

        ``tie_variants`` maps another tie rule to the results computed under it; a claim is
        ``tie_sensitive`` when its verdict under some variant (where it is reproduced) differs
        from its verdict here. Without variants ``tie_sensitive`` is ``None``: not assessed.

        The evaluation is an analysis (:mod:`recmeta.analyses`): a re-run on the same results
        reads it from the analysis cache, when every claim's rule is the package's own code
        (:meth:`analysis_key`); results the cache cannot key are evaluated, uncached.
        """

        memo: dict[str, Any] = {}  # each result hashed once, for the key and for every row

        def compute() -> pd.DataFrame:
            return self._evaluate(
                results,
                dataset=dataset,
                profile=profile,
                strict=strict,
                tie_variants=tie_variants,
                memo=memo,
            )

        inputs = (_needed(results, results, memo), dataset, profile, strict, tie_variants)
        frame: pd.DataFrame = self._analysis("evaluate", inputs, compute)
        return frame

    def _analysis(self, name: str, inputs: tuple[Any, ...], compute: Callable[[], Any]) -> Any:
        """``compute()`` through the analysis cache, keyed by :meth:`analysis_key` and
        ``inputs``; computed uncached when the ledger has no key."""
        key = self.analysis_key()
        if key is None:
            return compute()
        return analyses.cached_call(
            f"recmeta.ledger.Ledger.{name}", (key, *inputs), compute, unkeyable="compute"
        )

    def analysis_key(self) -> tuple[Any, ...] | None:
        """What determines the ledger's verdicts besides the results: its chapter and, per
        claim, its declaration and the name of its rule's function. None when a rule is defined
        outside the package, whose code the analysis cache's key does not cover."""
        parts = []
        for c in self:
            fn, bound = c.evaluate, []
            while isinstance(fn, functools.partial):  # a shared rule with its arguments
                bound.append((fn.args, fn.keywords))
                fn = fn.func
            module = getattr(fn, "__module__", None) or ""
            if not module.startswith("recmeta."):
                return None
            declared = (c.id, c.statement, c.source, c.rule, c.paper_value, c.paper_dataset)
            name = f"{module}.{getattr(fn, '__qualname__', '?')}"
            parts.append((*declared, c.needs, c.data_free, name, tuple(bound)))
        return (self.chapter, self.paper, self.title, tuple(parts))

    def _evaluate(
        self,
        results: Mapping[str, Any],
        *,
        dataset: str,
        profile: str,
        strict: bool,
        tie_variants: Mapping[str, Mapping[str, Any]] | None,
        memo: dict[str, Any],
    ) -> pd.DataFrame:
        # each row through the analysis cache: a claim the chapter's text cited is read back;
        # a result several claims need is hashed once for all of them
        rows = [
            self._cached_row(
                c.id,
                results,
                _needed(c.needs, results, memo),
                dataset=dataset,
                profile=profile,
                strict=strict,
            )
            for c in self
        ]
        frame = pd.DataFrame(rows, columns=list(COLUMNS))
        frame[["ours", "low", "high", "margin"]] = frame[["ours", "low", "high", "margin"]].astype(
            float
        )
        frame["paper_value"] = frame["paper_value"].astype(object)
        if tie_variants:
            other = {
                name: self.evaluate(res, dataset=dataset, profile=profile, strict=strict)
                for name, res in tie_variants.items()
            }
            frame = with_tie_sensitive(frame, other)
        return frame

    def row(
        self,
        claim_id: str,
        results: Mapping[str, Any],
        *,
        dataset: str,
        profile: str,
        strict: bool = True,
    ) -> dict[str, Any]:
        """One claim evaluated on ``results``, as the row :meth:`evaluate` gives it (a dict);
        an analysis, cached as :meth:`evaluate` is, keyed by the results the claim needs (the
        only ones its rule can read)."""

        needed = _needed(self[claim_id].needs, results, {})
        return self._cached_row(
            claim_id, results, needed, dataset=dataset, profile=profile, strict=strict
        )

    def _cached_row(
        self,
        claim_id: str,
        results: Mapping[str, Any],
        needed: Mapping[str, Any],
        *,
        dataset: str,
        profile: str,
        strict: bool,
    ) -> dict[str, Any]:
        """:meth:`row` through the analysis cache, keyed by ``needed`` (:func:`_needed`)."""

        def compute() -> dict[str, Any]:
            return self._row(claim_id, results, dataset=dataset, profile=profile, strict=strict)

        row: dict[str, Any] = self._analysis(
            "row", (claim_id, needed, dataset, profile, strict), compute
        )
        return row

    def _row(
        self,
        claim_id: str,
        results: Mapping[str, Any],
        *,
        dataset: str,
        profile: str,
        strict: bool,
    ) -> dict[str, Any]:
        if profile not in PROFILES:
            raise ValueError(f"profile {profile!r} is not one of {PROFILES}")
        c = self[claim_id]
        out = c.outcome(results, strict=strict)
        est = out.ours
        kind = c.kind(dataset)
        verdict, reason = _graded(c, kind, out, str(dataset))
        return {
            "chapter": self.chapter,
            "claim": c.id,
            "statement": c.statement,
            "source": c.source,
            "paper_value": c.paper_value,
            "paper_dataset": c.paper_dataset,
            "kind": kind.value,
            "rule": out.rule,
            "rule_text": c.rule,
            "margin": out.margin,
            "data_free": bool(c.data_free),
            "tie_sensitive": None,
            "ours": _nan(est.value if est else None),
            "low": _nan(est.low if est else None),
            "high": _nan(est.high if est else None),
            "unresolved": est.unresolved if est else None,
            "ours_text": out.detail or "",
            "method": est.method if est else "",
            "verdict": verdict.value,
            "reason": reason,
            "dataset": str(dataset),
            "profile": profile,
        }

    @staticmethod
    def to_markdown(frame: pd.DataFrame, digits: int = 3) -> str:
        """See :func:`recmeta.ledger.table.to_markdown`."""
        return to_markdown(frame, digits)

    @staticmethod
    def counts(frame: pd.DataFrame) -> pd.Series:
        """See :func:`recmeta.ledger.table.counts`."""
        return counts(frame)
