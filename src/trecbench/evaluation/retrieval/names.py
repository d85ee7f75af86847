"""Measure names: ir-measures' (`nDCG@10`, `P(rel=2)@5`) and trec_eval's (`ndcg_cut.10`, `all_trec`).

Every name becomes one or more `Request`s for the engine. ir-measures names report under the name as
written; trec_eval names report under trec_eval's printed names (`ndcg_cut_10`).
"""
from __future__ import annotations

import re
from typing import Callable, NamedTuple

from .engine import Request
from .measures import REGISTRY, SETS
from .measures.base import no_params

# ir-measures measure -> (trec_eval family, how its parameter is written)
_IRM = {
    "AP": "map", "nDCG": "ndcg", "R": "recall", "P": "P", "RR": "recip_rank", "Rprec": "Rprec",
    "Bpref": "bpref", "infAP": "infAP", "Success": "success", "IPrec": "iprec_at_recall",
    "NumRet": "num_ret", "NumRel": "num_rel", "NumQ": "num_q", "SetP": "set_P", "SetR": "set_recall",
    "SetF": "set_F", "SetAP": "set_map",
}
_SUPPORTED = ", ".join(sorted([*_IRM, "Judged", "NumRelRet", "SetRelP"]))


class MeasureError(ValueError):
    """A measure name that cannot be computed, with the reason."""


def parse_measures(names: list[str], version: int = 9, notes: list[str] | None = None) -> list[Request]:
    """Turn user measure names into engine requests (sets such as `all_trec` expand).

    A trec_eval measure asked for twice is computed once, with the parameters of the first `-m` that gave
    any, as trec_eval does (`-m P.5 -m P.10` is P_5; `-m P.5,10` gives both). Each such ignored
    parameter list, and parameters of a measure that takes none, add a sentence to `notes`.
    """
    requests: list[Request] = []
    seen: dict[tuple, int] = {}
    given: dict[str, str] = {}  # family -> the -m whose parameters it uses
    notes = notes if notes is not None else []
    for name in names:
        for req in _parse_one(name.strip(), version, notes):
            if req.label is None and not req.extra:
                key: tuple = (req.family,)
                if req.raw is not None:
                    if req.family not in given:
                        given[req.family] = name.strip()
                    elif requests[seen[key]].raw != req.raw:
                        notes.append(f"-m {name.strip()} ignored: trec_eval uses the first parameters given for "
                                     f"{req.family} (-m {given[req.family]}); list them in one -m, e.g. "
                                     f"{req.family}.{requests[seen[key]].raw},{req.raw}")
                        continue
                if key in seen:
                    if req.raw is not None and requests[seen[key]].raw is None:
                        requests[seen[key]] = req
                    continue
            else:
                key = (req.family, req.label, req.rel_level, req.extra, req.raw)
                if key in seen:
                    continue
            seen[key] = len(requests)
            requests.append(req)
    for req in requests:  # parameters are checked here, before any file is read
        if req.raw is not None:
            try:
                REGISTRY[req.family].parse(req.raw)
            except ValueError as e:
                raise MeasureError(f"{req.label or req.family}: {e}") from None
    return requests


def _parse_one(name: str, version: int, notes: list[str]) -> list[Request]:
    if not name:
        raise MeasureError("empty measure name")
    if name in SETS:
        return [Request(f) for f in SETS[name] if version in REGISTRY[f].versions]
    family, _, raw = name.partition(".")
    if "@" not in name and "(" not in name and family not in REGISTRY:
        family, raw = _printed_name(name) or (family, raw)
    if family in REGISTRY and "@" not in name and "(" not in name:
        fam = REGISTRY[family]
        if version not in fam.versions:
            raise MeasureError(f"{name}: trec_eval {version} has no measure {family} (try --trec-eval-version 10)")
        try:
            fam.parse(raw or None)
        except ValueError as e:
            raise MeasureError(f"{name}: {e}") from None
        if raw and fam.parse is no_params:
            notes.append(f"-m {name}: {family} takes no parameters; {raw!r} ignored, as trec_eval ignores it")
            raw = ""
        return [Request(family, raw or None)]
    return [_parse_ir_measures(name)]


def _printed_name(name: str) -> tuple[str, str] | None:
    """A name as trec_eval prints it (`ndcg_cut_10`, `P_5`, `iprec_at_recall_0.10`) -> (family, parameters)."""
    for i in range(len(name) - 1, 0, -1):
        if name[i] == "_" and name[:i] in REGISTRY and name[i + 1:]:
            return name[:i], name[i + 1:]
    return None


# The common names, read without importing ir_measures (which costs more than scoring a small run).
_PLAIN = re.compile(r"(AP|RR|nDCG|R|P)(?:@([1-9][0-9]*))?")
_PLAIN_FAMILY = {("AP", False): "map", ("AP", True): "map_cut", ("RR", False): "recip_rank",
                 ("nDCG", False): "ndcg", ("nDCG", True): "ndcg_cut", ("R", True): "recall", ("P", True): "P"}


def _parse_plain(name: str) -> Request | None:
    m = _PLAIN.fullmatch(name)
    family = _PLAIN_FAMILY.get((m.group(1), m.group(2) is not None)) if m else None
    if m is None or family is None:
        return None
    return Request(family, m.group(2), None, name)


def _parse_ir_measures(name: str) -> Request:
    """An ir-measures name as a request for the engine, reported under the name as written."""
    plain = _parse_plain(name)
    if plain is not None:
        return plain
    m = _ir_measure(name)
    params = dict(m.params)
    rel = params.pop("rel", None)
    cutoff = params.pop("cutoff", None)
    if params.pop("judged_only", False):
        raise MeasureError(f"{name}: judged_only is a run-wide option here: --judged-only (trec_eval -J)")
    if m.NAME == "SetP" and not params.get("relative", True):
        params.pop("relative")
    if m.NAME == "NumRet" and rel is not None:  # NumRelRet is NumRet(rel=1) in ir-measures
        return Request("num_rel_ret", None, rel, name)
    if m.NAME not in _IRM and m.NAME not in _TRANSLATE:
        raise MeasureError(f"{name}: {m.NAME} is not supported; supported: {_SUPPORTED} "
                           "and trec_eval names such as map, ndcg_cut.10, P.10, official, all_trec")
    return _TRANSLATE.get(m.NAME, _translated)(_Asked(name, m.NAME, params, rel, cutoff))


def _ir_measure(name: str):
    """ir_measures' reading of the name, refused when it names a parameter the measure does not take."""
    import ir_measures

    try:
        m = ir_measures.parse_measure(name)
    except Exception as e:  # ir_measures raises several kinds on a bad name
        close = closest_names(name)
        hint = f"did you mean {' or '.join(close)}? " if close else ""
        raise MeasureError(f"{name}: not a measure name ({e}); {hint}supported: {_SUPPORTED} "
                           "and trec_eval names such as map, ndcg_cut.10, P.10, official, all_trec") from None
    supported = getattr(type(m), "SUPPORTED_PARAMS", {})
    unknown = sorted(set(m.params) - set(supported))
    if unknown:
        raise MeasureError(f"{name}: {m.NAME} has no parameter {', '.join(map(repr, unknown))} "
                           f"(its parameters: {', '.join(sorted(supported)) or 'none'})")
    return m


# trec_eval's families under the ir-measures name they are asked for with a cutoff (`map@10` means AP@10)
_IR_NAME = {**{family: measure for measure, family in _IRM.items()}, "ndcg_cut": "nDCG", "map_cut": "AP",
            "precision": "P", "mrr": "RR"}
_IR_NAMES = [*_IRM, "Judged", "NumRelRet", "SetRelP"]
_CLOSE = 75.0  # rapidfuzz ratio (0-100) from which a name is offered as the one meant


def closest_names(name: str, limit: int = 3) -> list[str]:
    """The measure names closest to a name that is none (`ndcg@10` -> nDCG@10), its cutoff and parameters kept.

    A measure written in another case or under its trec_eval family name (`map@10`, `recall@100`) comes
    first; then the ir-measures and trec_eval names that rapidfuzz finds close to it.
    """
    from rapidfuzz import fuzz, process

    m = re.match(r"[A-Za-z_]+", name)
    if m is None:
        return []
    head, rest = m.group(0), name[m.end():]
    by_lower = {n.lower(): n for n in _IR_NAMES}
    out: list[str] = []
    same = by_lower.get(head.lower()) or _IR_NAME.get(head.lower())
    if same is not None:
        out.append(same + rest)
    if rest:  # the cutoff or parameters belong to an ir-measures name
        choices = _IR_NAMES
    else:
        choices = [*_IR_NAMES, *(f for f in REGISTRY if f not in _IR_NAME or f in _IRM.values()), *SETS]
    for found, _, _ in process.extract(head, choices, scorer=fuzz.ratio, processor=str.lower, limit=limit,
                                       score_cutoff=_CLOSE):
        if found + rest not in out:
            out.append(found + rest)
    return out[:limit]


class _Asked(NamedTuple):
    """An ir-measures measure as asked for: its name as written (the label), its parameters not yet read."""

    name: str
    measure: str  # ir_measures' NAME (`nDCG`)
    params: dict
    rel: int | None
    cutoff: int | None


def _translated(a: _Asked) -> Request:
    """A measure whose trec_eval family takes the cutoff as its parameter (P, R, Success) or nothing."""
    family = _IRM[a.measure]
    _reject(a.name, a.params)
    if family in ("P", "recall", "success"):
        if a.cutoff is None:
            raise MeasureError(f"{a.name}: needs a cutoff, e.g. {a.measure}@10")
        return Request(family, str(a.cutoff), a.rel, a.name)
    if a.cutoff is not None:
        raise MeasureError(f"{a.name}: {a.measure} takes no cutoff")
    return Request(family, None, a.rel, a.name)


def _judged(a: _Asked) -> Request:
    _reject(a.name, a.params)
    return Request("judged", None, None, a.name, extra=f"Judged@{a.cutoff}" if a.cutoff else "Judged")


def _ndcg(a: _Asked) -> Request:
    """trec_eval's nDCG only: ndcg_cut at a cutoff, ndcg with custom gains (as `grade=gain` parameters)."""
    gains = a.params.pop("gains", None)
    dcg = a.params.pop("dcg", "log2")
    judged_only = a.params.pop("judged_only", False)
    if dcg != "log2" or judged_only:
        raise MeasureError(f"{a.name}: only trec_eval's nDCG (dcg='log2', judged_only=False) is supported")
    _reject(a.name, a.params)
    if gains:
        raw = ",".join(f"{k}={v}" for k, v in sorted(gains.items()))
        if a.cutoff is not None:
            raise MeasureError(f"{a.name}: custom gains with a cutoff are not supported by trec_eval's ndcg_cut")
        return Request("ndcg", raw, a.rel, a.name)
    if a.cutoff is not None:
        return Request("ndcg_cut", str(a.cutoff), a.rel, a.name)
    return Request("ndcg", None, a.rel, a.name)


def _rr(a: _Asked) -> Request:
    """RR@k is computed outside trec_eval (`extras`); plain RR is recip_rank."""
    if a.cutoff is None:
        return _translated(a)
    _reject(a.name, a.params)
    return Request("recip_rank", None, a.rel, a.name, extra=f"RR@{a.cutoff}")


def _ap(a: _Asked) -> Request:
    if a.cutoff is None:
        return _translated(a)
    _reject(a.name, a.params)
    return Request("map_cut", str(a.cutoff), a.rel, a.name)


def _iprec(a: _Asked) -> Request:
    recall = a.params.pop("recall", None)
    _reject(a.name, a.params)
    return Request("iprec_at_recall", str(recall), a.rel, a.name)


def _set_p(a: _Asked) -> Request:
    if not a.params.pop("relative", False):
        return _translated(a)
    _reject(a.name, a.params)  # SetRelP is SetP(relative=True)
    return Request("set_relative_P", None, a.rel, a.name)


def _set_f(a: _Asked) -> Request:
    beta = a.params.pop("beta", 1.0)
    _reject(a.name, a.params)
    return Request("set_F", None if beta == 1.0 else repr(float(beta)), a.rel, a.name)


# ir-measures measures whose parameters need more than `_translated` reads
_TRANSLATE: dict[str, Callable[[_Asked], Request]] = {
    "Judged": _judged, "nDCG": _ndcg, "RR": _rr, "AP": _ap, "IPrec": _iprec, "SetP": _set_p, "SetF": _set_f,
}


def _reject(name: str, params: dict) -> None:
    params = {k: v for k, v in params.items() if v is not None}
    if params:
        raise MeasureError(f"{name}: unsupported parameters {sorted(params)}")
