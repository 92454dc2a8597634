"""Field order of output documents, carried beside the data.

MongoDB keeps a document's fields in insertion order; Spark's VARIANT stores an object's fields
sorted by name. So the engine computes values in VARIANT and the sink, which decodes each output
document in Python on the executor that writes it (:mod:`headrace.spark.runtime.records`), puts
its fields back in MongoDB's order with a *template* (the forms are in :mod:`.order_templates`).

A source document's template is the document itself, read from the record's raw text (JSON keeps
the order). Each stage turns its input template into its output template by MongoDB's rules:
``$addFields``/``$set`` keep an existing field where it is and append new ones in the
specification's order; ``$project`` inclusion keeps the included fields in the document's order,
then appends the computed ones in the specification's order; exclusion, ``$unset``, ``$match``,
``$validate``, ``$sort`` and ``$limit`` keep the order; ``$replaceRoot``/``$replaceWith`` take the
template of the new root's expression; ``$unwind`` gives the unwound field its elements'
template; a window's ``$group`` gives ``_id`` then the accumulators in the specification's order,
``$count`` its one field. An expression's template follows field paths, variables, object
literals, ``$literal``, ``$mergeObjects`` (first document's fields, then new ones), the branches
of ``$cond``/``$ifNull``/``$switch``, ``$let``, ``$getField``/``$setField``/``$unsetField``, the
array operators that keep or pick elements (``$filter``, ``$slice``, ``$arrayElemAt``,
``$first``, ``$map``, ``$reduce``...), ``$zip``, ``$objectToArray`` (with its values), the documents of fixed shape
(``$regexFind``, ``$dateToParts``) and, over a source value (a template holds the source
document's values), ``$arrayToObject`` and ``$toObject``. Anything else gives ``None``: such
fields keep VARIANT's order (by name), a known difference the README lists (an order decided at
run time; whole documents inside a window's ``$group`` results, as partial aggregates keep no raw
text). A window without ``$group`` or ``$count`` emits its documents themselves: it keeps their
raw text in its state, and their template is the source's through every stage
(:meth:`OrderPlan.window_output`).

Pure Python: no pyspark.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, Callable

from ..spec import defaults
from .order_templates import (REST, Each, KeyOrder, _info, _is_array_t, elements, get_path, reorder,  # noqa: F401
                              set_path, source_template, union, union_all)


# ---------------------------------------------------------------- expressions

_PICK_ONE = {"$arrayElemAt", "$first", "$last"}
_KEEP_ELEMS = {"$filter", "$slice", "$reverseArray", "$concatArrays", "$sortArray", "$firstN", "$lastN",
               "$setDifference", "$setIntersection", "$setUnion"}


def expr_template(e: Any, root: Any, variables: "dict[str, Any] | None" = None) -> Any:
    """The template of expression ``e``'s value over a document with template ``root``."""
    v = variables or {}
    if isinstance(e, str):
        if e.startswith("$$"):
            name, _, rest = e[2:].partition(".")
            base = root if name in ("ROOT", "CURRENT") else v.get(name)
            return get_path(base, rest) if rest else base
        if e.startswith("$"):
            return get_path(root, e[1:])
        return None
    if isinstance(e, list):
        return [expr_template(x, root, v) for x in e]
    if not isinstance(e, dict):
        return None
    if len(e) == 1:
        (op, arg), = e.items()
        if op.startswith("$"):
            return _operator(op, arg, root, v)
    return {k: expr_template(x, root, v) for k, x in e.items()}


def _operator(op: str, arg: Any, root: Any, v: dict) -> Any:  # noqa: C901 - one dispatch
    ex: Callable[[Any], Any] = lambda x: expr_template(x, root, v)  # noqa: E731
    if op == "$literal":
        return arg if isinstance(arg, (dict, list)) else None
    if op == "$mergeObjects":
        return union_all(ex(x) for x in (arg if isinstance(arg, list) else [arg]))
    if op == "$cond":
        branches = arg[1:] if isinstance(arg, list) else [arg.get("then"), arg.get("else")]
        return union_all(ex(x) for x in branches)
    if op == "$ifNull":
        return union_all(ex(x) for x in arg) if isinstance(arg, list) else None
    if op == "$switch" and isinstance(arg, dict):
        return union_all([ex(b.get("then")) for b in arg.get("branches", []) if isinstance(b, dict)]
                         + [ex(arg.get("default"))])
    if op == "$let" and isinstance(arg, dict):
        bound = {**v, **{k: ex(x) for k, x in (arg.get("vars") or {}).items()}}
        return expr_template(arg.get("in"), root, bound)
    if op == "$getField":
        if _literal_name(arg) is not None:
            return root.get(_literal_name(arg)) if type(root) is dict else None
        if isinstance(arg, dict) and _literal_name(arg.get("field")) is not None:
            src = ex(arg["input"]) if "input" in arg else root
            return src.get(_literal_name(arg["field"])) if type(src) is dict else None
        return None
    if op in ("$setField", "$unsetField") and isinstance(arg, dict) and _literal_name(arg.get("field")) is not None:
        src = ex(arg.get("input"))
        if op == "$unsetField":
            return src
        return set_path(src if type(src) is dict else {}, [_literal_name(arg["field"])], ex(arg.get("value")))
    if op in _PICK_ONE:
        x = arg[0] if isinstance(arg, list) and op == "$arrayElemAt" else (
            arg[0] if isinstance(arg, list) and len(arg) == 1 else arg)
        return elements(ex(x))
    if op == "$concatArrays" and isinstance(arg, list):
        pairs = _key_order_parts(arg, ex)
        if pairs is not None:
            return pairs
    if op in _KEEP_ELEMS:
        if isinstance(arg, dict):
            src = [arg.get("input")]
        elif isinstance(arg, list):
            src = arg if op in ("$concatArrays", "$setUnion", "$setIntersection", "$setDifference") else arg[:1]
        else:
            src = [arg]
        u = union_all(elements(ex(x)) for x in src)
        return None if u is None else Each(u)
    if op == "$map" and isinstance(arg, dict):
        name = arg.get("as", "this")
        elem = elements(ex(arg.get("input")))
        return Each(expr_template(arg.get("in"), root, {**v, name: elem}))
    if op == "$reduce" and isinstance(arg, dict):
        init = ex(arg.get("initialValue"))
        step = expr_template(arg.get("in"), root, {**v, "value": init, "this": elements(ex(arg.get("input")))})
        return union(step, init)
    if op in ("$regexFind", "$regexFindAll"):
        shape = {"match": None, "idx": None, "captures": None}
        return shape if op == "$regexFind" else Each(shape)
    if op == "$dateToParts":
        iso = isinstance(arg, dict) and arg.get("iso8601") is True
        head = ("isoWeekYear", "isoWeek", "isoDayOfWeek") if iso else ("year", "month", "day")
        return dict.fromkeys(head + ("hour", "minute", "second", "millisecond"))
    if op == "$arrayToObject":
        return _object_of_pairs(ex(arg[0] if isinstance(arg, list) and len(arg) == 1 else arg))
    if op in ("$toObject", "$toArray") or (op == "$convert" and isinstance(arg, dict)
                                            and arg.get("to") in ("object", "array")):
        src = ex(arg.get("input") if op == "$convert" else (arg[0] if isinstance(arg, list) and len(arg) == 1 else arg))
        return _parsed(src)
    if op == "$objectToArray":
        src = ex(arg[0] if isinstance(arg, list) and len(arg) == 1 else arg)
        if type(src) is dict:
            keys = tuple(k for k in src if k is not REST)
            return KeyOrder(keys, tuple((k, src[k]) for k in keys if _info(src[k]) is not None))
        return None
    if op == "$zip" and isinstance(arg, dict) and isinstance(arg.get("inputs"), list):
        return Each([elements(ex(x)) for x in arg["inputs"]])
    return None


def _literal_name(f: Any) -> "str | None":
    """A field name given as a string or ``{$literal: string}`` (``"$price"``); else None."""
    if isinstance(f, dict) and len(f) == 1 and isinstance(f.get("$literal"), str):
        return f["$literal"]
    return f if isinstance(f, str) else None


def _key_order_parts(parts: list, ex: Callable[[Any], Any]) -> "KeyOrder | None":
    """``$concatArrays`` of ``$objectToArray`` results and literal arrays of ``{k: "name", v}``
    documents: their keys in order (a name already there keeps its place)."""
    keys: list = []
    values: dict = {}
    for x in parts:
        if isinstance(x, list) and all(type(e) is dict and isinstance(e.get("k"), str)
                                       and not e["k"].startswith("$") for e in x):
            items = [(e["k"], ex(e.get("v"))) for e in x]
        else:
            t = ex(x)
            if type(t) is not KeyOrder:
                return None
            subs = dict(t.values)
            items = [(k, subs.get(k)) for k in t.keys]
        for k, v in items:
            if k not in values:
                keys.append(k)
            values[k] = v
    return KeyOrder(tuple(keys), tuple((k, v) for k, v in values.items() if _info(v) is not None))


def _object_of_pairs(t: Any) -> Any:
    """``$arrayToObject`` of a source array (its template holds the values), or of
    ``$objectToArray`` results (:class:`KeyOrder`): the keys in order."""
    if type(t) is KeyOrder:
        subs = dict(t.values)
        return {k: subs.get(k) for k in t.keys}
    if type(t) is not list:
        return None
    out: dict = {}
    for e in t:
        if type(e) is dict and isinstance(e.get("k"), str):
            k, x = e["k"], e.get("v")
        elif type(e) is list and len(e) == 2 and isinstance(e[0], str):
            k, x = e
        else:
            return None
        out[k] = x                  # a repeated name keeps its first place, with the last value
    return out


def _parsed(t: Any) -> Any:
    """``$toObject``/``$toArray`` of a source string (its template holds the value): the JSON's order."""
    if not isinstance(t, str):
        return t if type(t) in (dict, list) else None
    try:
        return _info(json.loads(t))
    except ValueError:
        return None


# ---------------------------------------------------------------- stages

def _project(spec: Any, t: Any) -> Any:
    if not spec.include:
        return t                                  # exclusion keeps the order
    tree: dict = {}
    for p, e in spec.include:
        if e is None:
            node = tree
            keys = p.split(".")
            for k in keys[:-1]:
                nxt = node.get(k)
                node = node.setdefault(k, {}) if not isinstance(nxt, dict) else nxt
            node[keys[-1]] = True
    if spec.keep_id:
        tree.setdefault("_id", True)
    out = _copy(t, tree)
    for p, e in spec.include:
        if e is not None:
            out = set_path(out, p.split("."), expr_template(e, t))
    return out


def _copy(t: Any, tree: dict) -> Any:
    """Inclusion: the included fields in the document's order (unknown: where the document had them)."""
    if _is_array_t(t):
        return Each(_copy(elements(t), tree))
    if type(t) is not dict:
        return {REST: None}
    out: dict = {}
    for k, sub in t.items():
        if k is REST:
            out[REST] = None
        elif k in tree:
            out[k] = sub if tree[k] is True else _copy(sub, tree[k])
    return out


def _unwind(spec: Any, t: Any) -> Any:
    keys = spec.path.split(".")
    elem = get_path(t, spec.path)
    elem = elements(elem) if _is_array_t(elem) else elem
    out = set_path(t, keys, elem) if type(t) is dict else t
    if spec.include_array_index:
        out = set_path(out, spec.include_array_index.split("."), None)
    return out


_KEEPS = {"$match", "$validate", "$unset", "$sort", "$limit", "$merge", "$emit"}


def stage_template(st: Any, t: Any) -> Any:
    """The output template of stage ``st`` (a :class:`headrace.spec.model.Stage`) over input ``t``."""
    name, spec = st.name, st.spec
    if name in _KEEPS:
        return t
    if name in ("$addFields", "$set"):
        out = t
        for p, e in spec.fields:
            out = set_path(out, p.split("."), expr_template(e, t))
        return out
    if name == "$project":
        return _project(spec, t)
    if name in ("$replaceRoot", "$replaceWith"):
        return expr_template(spec.new_root, t)
    if name == "$unwind":
        return _unwind(spec, t)
    if name == "$group":
        return group_template(st.arg)
    if name == "$count":
        return {st.arg: None}
    return None


def group_template(arg: dict) -> dict:
    """``$group``'s output: ``_id``, then the accumulators in the specification's order."""
    out: dict = {"_id": expr_template(arg.get("_id"), None)}
    for k, acc in arg.items():
        if k == "_id":
            continue
        out[k] = _accumulator_template(acc)
    return out


def _accumulator_template(acc: Any) -> Any:
    """One accumulator's value: one value's template, or an array of them (``$push``, ``$topN``...)."""
    if not (isinstance(acc, dict) and len(acc) == 1):
        return None
    (op, a), = acc.items()
    if op in ("$first", "$last", "$max", "$min"):
        return expr_template(a, None)
    if op in ("$top", "$bottom") and isinstance(a, dict):
        return expr_template(a.get("output"), None)
    if op in ("$push", "$addToSet"):
        inner = expr_template(a, None)
    elif op in ("$topN", "$bottomN", "$firstN", "$lastN", "$maxN", "$minN") and isinstance(a, dict):
        inner = expr_template(a.get("output", a.get("input")), None)
    else:
        return None
    return None if inner is None else Each(inner)


# A record's text with its values taken out: what its template depends on, unless a stage reads
# values from the template (below). Key strings stay (with their colon), value strings and
# scalars go, brackets and commas stay (an array's length). The same pattern in Java's syntax
# (possessive quantifiers: no backtracking, no deep recursion on long strings) and Python's (3.11+):
# the sink has the JVM compute it (``regexp_replace(raw, SHAPE_PATTERN, "$1")``).
SHAPE_PATTERN = r'("[^"\\]*+(?:\\.[^"\\]*+)*+"\s*+:|[{}\[\],])|"[^"\\]*+(?:\\.[^"\\]*+)*+"|[^"{}\[\],]++'
_SHAPE = re.compile(SHAPE_PATTERN)
_READS_VALUES = {"$arrayToObject", "$toObject", "$toArray", "$convert"}   # see _object_of_pairs, _parsed
_CACHE_MAX = 1024


def shape(raw: str) -> str:
    """``raw`` (JSON text) without its values: ``{"a":1,"b":{"c":"x"}}`` -> ``{"a":,"b":{"c":}}``
    (what the JVM computes for the sink; this is the reference the tests compare it with)."""
    return "".join(_SHAPE.findall(raw))


def _reads_values(x: Any) -> bool:
    if isinstance(x, dict):
        return any(k in _READS_VALUES or _reads_values(v) for k, v in x.items())
    if isinstance(x, (list, tuple)):
        return any(_reads_values(v) for v in x)
    return False


@dataclass(frozen=True)
class OrderPlan:
    """What the sink needs to put fields in order: the stages before a window (over each source
    record's template) and the template of a window's outputs (after its inner pipeline and the
    stages after it)."""

    before: tuple = ()
    window: Any = None
    window_stages: tuple = ()     # the window's inner stages, then the stages after it
    ts_field: str = defaults.TS_FIELD_NAME   # ``$source.tsFieldName``: the source sets it, as ``$addFields``
    by_shape: bool = True         # no stage reads values from a template: it is a function of :func:`shape`
    _cache: dict = field(default_factory=dict, compare=False, repr=False)

    @staticmethod
    def of(pipeline: Any) -> "OrderPlan":
        """From a :class:`headrace.spec.model.Pipeline`."""
        w = pipeline.window
        stages = tuple(w.pipeline) + tuple(pipeline.after) if w is not None else ()
        wt = None
        for st in stages:
            wt = stage_template(st, wt)
        reads = _reads_values([st.arg for st in tuple(pipeline.before) + stages])
        return OrderPlan(tuple(pipeline.before), wt, stages, pipeline.source.ts_field_name, not reads)

    def __getstate__(self) -> dict:
        return {**self.__dict__, "_cache": {}}        # the cache stays where it was filled

    def source(self, raw: "str | bytes | None") -> Any:
        """The template of a source record with text ``raw`` as the stages see it (and the DLQ keeps it)."""
        t = source_template(raw)
        return None if t is None else set_path(t, self.ts_field.split("."), None)

    def window_output(self, raw: "str | bytes | None") -> Any:
        """The template of a window's output: from the raw text of the document it is, when the
        window emits its documents themselves (no ``$group``), else the window's (:attr:`window`)."""
        if raw is None:
            return self.window
        t = self.output(raw)
        for st in self.window_stages:
            t = stage_template(st, t)
        return t

    def output(self, raw: "str | bytes | None", key: "str | None" = None) -> Any:
        """The template of the output of a source record with text ``raw`` (outside windows).

        ``key``: ``raw``'s :func:`shape`. Records of one shape share the template (cached, when
        :attr:`by_shape`): a stream's records mostly have a few shapes, and a template costs
        parsing the text and following every stage."""
        if key is None or not self.by_shape:
            return self._output(raw)
        t = self._cache.get(key)
        if t is None:
            t = self._output(raw)
            if t is not None:
                if len(self._cache) >= _CACHE_MAX:
                    self._cache.clear()
                self._cache[key] = t
        return t

    def _output(self, raw: "str | bytes | None") -> Any:
        t = self.source(raw)
        for st in self.before:
            t = stage_template(st, t)
        return t
