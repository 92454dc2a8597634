"""Why a document does not match a query, in the shape of MongoDB's document-validation
``errInfo.details`` (``$validate``'s DLQ reasons)."""
from __future__ import annotations

from typing import Any, Callable

from .. import ejson
from .bson import MISSING, true_value, type_name
from .catalogue import is_operator_doc
from .jsonschema import schema_failure_details
from .match import NOT_EVALUATED, Env, match_field, match_query, match_top, path_op
from .paths import iter_path

__all__ = ["explain_failure", "failure_details"]


def explain_failure(query: dict, doc: dict, *, expr: Callable[[Any, Any], Any] | None = None) -> str:
    """Why ``doc`` does not match ``query``: ``"Document failed validation: <details>"`` where
    details are MongoDB ``errInfo.details``-like relaxed Extended JSON. Meant for documents
    known to have failed (on the driver, for DLQ entries): without ``expr`` an ``$expr`` clause is
    reported as not evaluated, and when nothing else explains the failure the text is just
    ``"Document failed validation"``; never raises for a valid query."""
    details = failure_details(query, doc, expr=expr)
    if details is None:
        return "Document failed validation"
    return "Document failed validation: " + ejson.dumps(details, default=str)


def failure_details(query: dict, doc: dict, *, expr: Callable[[Any, Any], Any] | None = None) -> dict | None:
    """MongoDB-like ``errInfo.details`` for a failing document, None when it matches (an
    ``$expr`` that cannot be evaluated counts as failed)."""
    env = Env(expr or (lambda d, e: NOT_EVALUATED))
    if match_query(doc, query, env):
        return None
    return _explain_query(doc, query, env)


def _explain_query(doc: Any, query: dict, env: Env) -> dict:
    clauses = list(query.items())
    failing = []
    for i, (k, a) in enumerate(clauses):
        ok = match_top(doc, k, a, env) if k.startswith("$") else match_field(doc, k, a, env)
        if not ok:
            failing.append((i, _explain_clause(doc, k, a, env)))
    if len(clauses) == 1 and failing:
        return failing[0][1]
    return {"operatorName": "$and",
            "clausesNotSatisfied": [{"index": i, "details": d} for i, d in failing]}


def _explain_clause(doc: Any, key: str, arg: Any, env: Env) -> dict:
    if key in ("$and", "$or", "$nor"):
        out: dict = {"operatorName": key}
        if key == "$nor":
            out["clausesSatisfied"] = [
                {"index": i, "details": {"operatorName": "$nor", "reason": "clause matched"}}
                for i, q in enumerate(arg) if match_query(doc, q, env)]
        else:
            out["clausesNotSatisfied"] = [
                {"index": i, "details": _explain_query(doc, q, env)}
                for i, q in enumerate(arg) if not match_query(doc, q, env)]
        return out
    if key == "$jsonSchema":
        return schema_failure_details(doc, arg)
    if key == "$expr":
        res = env.expr(doc, arg)
        if res is NOT_EVALUATED:
            return {"operatorName": "$expr", "specifiedAs": {"$expr": arg},
                    "reason": "expression was not evaluated"}
        return {"operatorName": "$expr", "specifiedAs": {"$expr": arg},
                "reason": "expression did not match", "expressionResult": res}
    if key.startswith("$"):
        return {"operatorName": key, "reason": "did not match"}
    if is_operator_doc(arg):
        for op, val in arg.items():
            if not path_op(doc, key, op, val, arg, env):
                return _explain_op(doc, key, op, val, arg)
        return {"operatorName": "$and", "reason": "did not match"}
    return _explain_op(doc, key, "$eq", arg, {"$eq": arg}, implicit=True)


_REASONS = {
    "$eq": "comparison failed", "$gt": "comparison failed", "$gte": "comparison failed",
    "$lt": "comparison failed", "$lte": "comparison failed", "$ne": "comparison succeeded",
    "$in": "no matching value found in array", "$nin": "matching value found in array",
    "$type": "type did not match", "$regex": "regular expression did not match",
    "$size": "array length was not equal to given size",
    "$all": "array did not contain all specified values",
    "$elemMatch": "array did not satisfy the child predicate",
    "$mod": "$mod did not evaluate to expected remainder", "$not": "child expression matched",
}


def _explain_op(doc: Any, path: str, op: str, val: Any, opdoc: dict, implicit: bool = False) -> dict:
    spec = {path: val} if implicit else {path: {op: val} if op not in ("$regex", "$options") else
                                         {k: v for k, v in opdoc.items() if k in ("$regex", "$options")}}
    out: dict = {"operatorName": op, "specifiedAs": spec}
    values = [v for v in iter_path(doc, path, False)]
    present = [v for v in values if v is not MISSING]
    if op == "$exists":
        out["reason"] = "path does not exist" if true_value(val) else "path does exist"
        return out
    if not present and op not in ("$ne", "$nin", "$not"):
        out["reason"] = "field was missing"
        return out
    out["reason"] = _REASONS.get(op, "did not match")
    if len(present) == 1:
        out["consideredValue"] = present[0]
        if op == "$type":
            out["consideredType"] = type_name(present[0])
    else:
        out["consideredValues"] = present
    return out
