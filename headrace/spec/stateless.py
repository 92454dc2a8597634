"""Stateless stage parsing: ``$validate``, ``$match``, ``$project``, ``$addFields``/``$set``,
``$unset``, ``$replaceRoot``, ``$replaceWith`` and ``$unwind``, each validated and returned as a
:class:`~headrace.spec.model.Stage` with its typed spec (:func:`headrace.spec.stages.spec_of`).
"""
from __future__ import annotations

from typing import Any

from .checks import _bool, _Ctx, _expression, _keys, _obj, _query, _str
from .model import Stage
from .stages import nested_spec, spec_of


def parse_stateless(name: str, arg: Any, c: _Ctx) -> Stage:
    if name == "$match":
        _query(arg, c)
    elif name == "$validate":
        d = _obj(arg, c)
        _keys(d, ("validator", "validationAction"), c)
        if "validator" not in d:
            raise c.err("MISSING_OPTION", "needs 'validator'", "validator", expected="a query document", found=d)
        _query(d["validator"], c, "validator")
        if "validationAction" in d:
            _str(d["validationAction"], c, "validationAction", allowed=("discard", "dlq"))
    elif name in ("$addFields", "$set"):
        d = _obj(arg, c)
        if not d:
            raise c.err("BAD_VALUE", "needs at least one field", expected="a field", found=d)
        for k, v in d.items():
            _field_name(k, c)
            _expression(v, c, k)
    elif name == "$project":
        _project(arg, c)
    elif name == "$unset":
        fields = [arg] if isinstance(arg, str) else arg
        if not isinstance(fields, list) or not fields or not all(isinstance(f, str) and f for f in fields):
            raise c.err("TYPE_MISMATCH", "must be a field name or an array of field names",
                        expected="a string or array of strings", found=arg)
        for f in fields:
            _field_name(f, c)
    elif name == "$replaceRoot":
        d = _obj(arg, c)
        _keys(d, ("newRoot",), c)
        if "newRoot" not in d:
            raise c.err("MISSING_OPTION", "needs 'newRoot'", "newRoot", expected="an expression", found=d)
        _expression(d["newRoot"], c, "newRoot")
    elif name == "$replaceWith":
        _expression(arg, c)
    elif name == "$unwind":
        d = {"path": arg} if isinstance(arg, str) else _obj(arg, c, what="a field path or an object")
        _keys(d, ("path", "includeArrayIndex", "preserveNullAndEmptyArrays"), c)
        p = d.get("path")
        if not isinstance(p, str) or not p.startswith("$") or p.startswith("$$") or len(p) < 2:
            raise c.err("BAD_VALUE", "path must be a field path starting with '$'", "path",
                        expected='a field path such as "$items"', found=p)
        if "includeArrayIndex" in d:
            f = _str(d["includeArrayIndex"], c, "includeArrayIndex")
            if f.startswith("$"):
                raise c.err("BAD_VALUE", "must be a field name, not a path", "includeArrayIndex",
                            expected="a field name", found=f)
        if "preserveNullAndEmptyArrays" in d:
            _bool(d["preserveNullAndEmptyArrays"], c, "preserveNullAndEmptyArrays")
    return Stage(name, c.pos, arg, spec_of(name, arg))


def _field_name(k: str, c: _Ctx) -> None:
    if not k or k.startswith("$") or any(not part for part in k.split(".")):
        raise c.err("BAD_FIELD_NAME", "invalid field name", k, expected="a field name not starting with '$'",
                    found=k)


def _project(arg: Any, c: _Ctx) -> None:
    """Inclusions, computed fields or exclusions, not inclusions and exclusions together (``_id``
    aside), at every level of nesting; no path inside another (``{contact: 1,
    "contact.address.country": 1}`` is a path collision, as MongoDB has it)."""
    d = _obj(arg, c)
    if not d:
        raise c.err("BAD_VALUE", "needs at least one field", expected="a field specification", found=d)
    mode = {"inclusion": False, "exclusion": False}
    paths: list[tuple[str, str, _Ctx]] = []

    def walk(spec: dict, prefix: str, c: _Ctx) -> None:
        for k, v in spec.items():
            _field_name(k, c)
            full = prefix + k
            if isinstance(v, bool) or isinstance(v, (int, float)):
                if v:
                    mode["inclusion"] = True
                elif full != "_id":
                    mode["exclusion"] = True
                paths.append((full, k, c))
            elif nested_spec(v):
                walk(v, full + ".", c.sub(k))
            else:
                _expression(v, c, k)
                mode["inclusion"] = True
                paths.append((full, k, c))
            if mode["inclusion"] and mode["exclusion"]:
                raise c.err("PROJECT_MIXED", "cannot mix inclusion and exclusion (except _id)", k,
                            expected="only inclusions or only exclusions", found=d)
    walk(d, "", c)
    seen = {p for p, _, _ in paths}
    for p, k, pc in paths:
        parts = p.split(".")
        for i in range(1, len(parts)):
            if ".".join(parts[:i]) in seen:
                raise pc.err("PROJECT_PATH_COLLISION", f"path collision at {p}", k,
                             expected=f"no field path inside another ({'.'.join(parts[:i])} is given too)",
                             found=d)
