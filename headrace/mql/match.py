"""MongoDB query semantics in pure Python: the reference implementation and test oracle.

``matches(doc, query)`` answers whether a document (``headrace.ejson`` value model) matches a
query (``$match`` / ``$validate`` syntax) the way MongoDB's matcher does:

- ``{path: value}`` is ``{path: {$eq: value}}``; a regular expression literal
  (``{"$regularExpression": {"pattern": ..., "options": ...}}``) is ``$regex``.
- Paths are dotted. A path walks through embedded documents; at an array it looks into every
  element that is a document and, for a numeric component (``"a.0"``), at that array index too;
  at the end of the path an array offers each of its elements and then itself
  (``{tags: "red"}`` matches ``tags: ["red", "blank"]``). ``$size`` and ``$elemMatch`` see the
  array itself only. A missing field offers "missing" (and ``null`` / ``$exists: false`` match it).
- Comparisons (``$eq $gt $gte $lt $lte``) apply only within a type bracket (numbers with
  numbers, strings with strings, ...), except ``null`` which also matches missing and ``MinKey``
  / ``MaxKey`` which bound everything. NaN equals NaN and is neither above nor below anything.
- ``$ne $nin $not`` and ``$exists: false`` are negations of the whole path test.
- ``$regex`` uses PCRE syntax with options ``i m s x`` (``u`` accepted), translated to Python
  ``re`` (:func:`translate_regex`); ``\\d \\w \\s \\b`` are ASCII as in MongoDB.
- ``$expr`` needs an evaluator: ``matches(doc, query, expr=fn)`` with ``fn(doc, expression)``
  returning the expression's value; without one it raises ``NotImplementedError``.
- ``$jsonSchema``: see :mod:`headrace.mql.jsonschema`.

The query must be valid (:func:`headrace.mql.query.validate_query`); unknown operators raise
:class:`~headrace.errors.PipelineError`.

``compare_values(a, b)`` is BSON's total order (MinKey < null < numbers < strings < objects <
arrays < binData < ObjectId < bool < date < MaxKey), used for sorting and as the oracle of
``headrace.spark.values.compare``.

``explain_failure(query, doc)`` says why a document does not match, in the shape of MongoDB's
document-validation ``errInfo.details``.
"""
from __future__ import annotations

import datetime as _dt
import decimal
import functools
import math
import re
from typing import Any, Callable, Iterator

from .. import ejson
from ..ejson import MAXKEY, MINKEY, ObjectId

__all__ = [
    "MISSING", "matches", "compare_values", "values_equal", "type_name", "is_number", "is_nan",
    "iter_path", "translate_regex", "compile_regex", "regex_literal", "explain_failure",
    "failure_details", "TYPE_CODES", "TYPE_ALIASES", "NUMBER_TYPES", "TOP_LEVEL_OPERATORS",
    "RegexError", "compare_single", "true_value", "is_index", "is_operator_doc",
    "is_elem_match_value", "is_all_elem_match", "type_set", "regex_of", "mod_args", "c_mod",
]


class _Missing:
    """The value of a field that is not there (BSON EOO)."""

    _instance = None

    def __new__(cls):
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "MISSING"

    def __bool__(self) -> bool:
        return False

    def __reduce__(self):
        return (_Missing, ())


MISSING = _Missing()

#: ``$type`` numeric codes by alias.
TYPE_CODES: dict[str, int] = {
    "double": 1, "string": 2, "object": 3, "array": 4, "binData": 5, "undefined": 6,
    "objectId": 7, "bool": 8, "date": 9, "null": 10, "regex": 11, "dbPointer": 12,
    "javascript": 13, "symbol": 14, "javascriptWithScope": 15, "int": 16, "timestamp": 17,
    "long": 18, "decimal": 19, "minKey": -1, "maxKey": 127,
}
#: Every ``$type`` / ``bsonType`` alias (``"number"`` means any numeric type).
TYPE_ALIASES = frozenset(TYPE_CODES) | {"number"}
NUMBER_TYPES = frozenset({"int", "long", "double", "decimal"})

#: Operators that stand for a whole document rather than a field (MongoDB's pathless parsers).
TOP_LEVEL_OPERATORS = frozenset({
    "$and", "$or", "$nor", "$expr", "$jsonSchema", "$comment", "$where", "$text",
    "$alwaysTrue", "$alwaysFalse", "$sampleRate", "$ref", "$id", "$db", "$atomic", "$isolated",
})

# canonical type ranks (MongoDB's canonicalizeBSONType); missing is 0, like undefined
_R_MINKEY, _R_MISSING, _R_NULL, _R_NUMBER, _R_STRING = -1, 0, 5, 10, 15
_R_OBJECT, _R_ARRAY, _R_BINDATA, _R_OID, _R_BOOL, _R_DATE, _R_MAXKEY = 20, 25, 30, 35, 40, 45, 127

_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1


# ------------------------------------------------------------------------------------ types


def type_name(v: Any) -> str:
    """The MQL ``$type`` name of a value (``"missing"`` for :data:`MISSING`)."""
    if v is MISSING:
        return "missing"
    if v is None:
        return "null"
    t = type(v)
    if t is bool:
        return "bool"
    if isinstance(v, ejson.Int64):
        return "long"
    if isinstance(v, int):
        if ejson.INT32_MIN <= v <= ejson.INT32_MAX:
            return "int"
        return "long" if _INT64_MIN <= v <= _INT64_MAX else "double"
    if t is float:
        return "double"
    if t is decimal.Decimal:
        return "decimal"
    if isinstance(v, str):
        return "string"
    if isinstance(v, dict):
        return "object"
    if isinstance(v, (list, tuple)):
        return "array"
    if isinstance(v, (bytes, bytearray)):
        return "binData"
    if isinstance(v, ObjectId):
        return "objectId"
    if isinstance(v, _dt.datetime):
        return "date"
    if v is MINKEY:
        return "minKey"
    if v is MAXKEY:
        return "maxKey"
    raise TypeError(f"not a document value: {type(v).__name__}")


def is_number(v: Any) -> bool:
    return type(v) is not bool and isinstance(v, (int, float, decimal.Decimal))


def _rank(v: Any) -> int:
    if v is MISSING:
        return _R_MISSING
    if v is None:
        return _R_NULL
    if type(v) is bool:
        return _R_BOOL
    if isinstance(v, (int, float, decimal.Decimal)):
        return _R_NUMBER
    if isinstance(v, str):
        return _R_STRING
    if isinstance(v, dict):
        return _R_OBJECT
    if isinstance(v, (list, tuple)):
        return _R_ARRAY
    if isinstance(v, (bytes, bytearray)):
        return _R_BINDATA
    if isinstance(v, ObjectId):
        return _R_OID
    if isinstance(v, _dt.datetime):
        return _R_DATE
    if v is MINKEY:
        return _R_MINKEY
    if v is MAXKEY:
        return _R_MAXKEY
    raise TypeError(f"not a document value: {type(v).__name__}")


def is_nan(v: Any) -> bool:
    """A double or decimal NaN."""
    if type(v) is float:
        return math.isnan(v)
    if type(v) is decimal.Decimal:
        return v.is_nan()
    return False


def _sign(x: Any) -> int:
    return (x > 0) - (x < 0)


def _num_cmp(a: Any, b: Any) -> int:
    an, bn = is_nan(a), is_nan(b)
    if an or bn:  # NaN sorts below every other number and equals itself
        return 0 if an and bn else (-1 if an else 1)
    if a < b:
        return -1
    return 1 if a > b else 0


def _utc(d: _dt.datetime) -> _dt.datetime:
    return d if d.tzinfo else d.replace(tzinfo=ejson.UTC)


def compare_values(a: Any, b: Any, *, unordered_fields: bool = False) -> int:
    """-1, 0 or 1: BSON comparison order (missing sorts as null).

    Numbers compare by value across int/long/double/decimal (NaN lowest); strings by UTF-8
    bytes; documents field by field (type, then name, then value); arrays element by element;
    binData by length then bytes. ``unordered_fields`` compares documents as if their fields
    were sorted by name (MongoDB's rule for ``$jsonSchema`` ``enum`` and ``uniqueItems``).
    """
    if a is MISSING:
        a = None
    if b is MISSING:
        b = None
    ra, rb = _rank(a), _rank(b)
    if ra != rb:
        return -1 if ra < rb else 1
    if ra == _R_NUMBER:
        return _num_cmp(a, b)
    if ra == _R_STRING:
        return _sign((a > b) - (a < b))
    if ra == _R_OBJECT:
        ia, ib = list(a.items()), list(b.items())
        if unordered_fields:
            ia.sort(key=lambda kv: kv[0].encode("utf-8", "surrogatepass"))
            ib.sort(key=lambda kv: kv[0].encode("utf-8", "surrogatepass"))
        return _cmp_pairs(ia, ib, unordered_fields)
    if ra == _R_ARRAY:
        return _cmp_pairs([(str(i), x) for i, x in enumerate(a)],
                          [(str(i), x) for i, x in enumerate(b)], unordered_fields)
    if ra == _R_BINDATA:
        return _sign((len(a) > len(b)) - (len(a) < len(b))) or _sign((bytes(a) > bytes(b)) - (bytes(a) < bytes(b)))
    if ra == _R_OID:
        return (a.binary > b.binary) - (a.binary < b.binary)
    if ra == _R_BOOL:
        return (a > b) - (a < b)
    if ra == _R_DATE:
        x, y = _utc(a), _utc(b)
        return (x > y) - (x < y)
    return 0  # null, MinKey, MaxKey


def _cmp_pairs(ia: list, ib: list, unordered: bool) -> int:
    for (ka, va), (kb, vb) in zip(ia, ib):
        ra, rb = _rank(va), _rank(vb)
        if ra != rb:
            return -1 if ra < rb else 1
        if ka != kb:
            return -1 if ka < kb else 1
        c = compare_values(va, vb, unordered_fields=unordered)
        if c:
            return c
    return (len(ia) > len(ib)) - (len(ia) < len(ib))


def values_equal(a: Any, b: Any, *, unordered_fields: bool = False) -> bool:
    """MQL equality (``compare_values(a, b) == 0``; missing equals null)."""
    return compare_values(a, b, unordered_fields=unordered_fields) == 0


# ------------------------------------------------------------------------------------ regex


def regex_literal(v: Any) -> tuple[str, str] | None:
    """``(pattern, options)`` of an Extended JSON regular expression
    ``{"$regularExpression": {"pattern": p, "options": o}}``, else None."""
    if isinstance(v, dict) and len(v) == 1 and "$regularExpression" in v:
        body = v["$regularExpression"]
        if isinstance(body, dict) and isinstance(body.get("pattern"), str):
            opts = body.get("options", "")
            return body["pattern"], opts if isinstance(opts, str) else ""
    return None


_ASCII_WORD = "A-Za-z0-9_"
_PY_CLASS = {"d": "0-9", "w": _ASCII_WORD, "s": "\\t\\n\\x0b\\x0c\\r ",
             "h": "\\t \\xa0\\u1680\\u180e\\u2000-\\u200a\\u202f\\u205f\\u3000",
             "v": "\\n\\x0b\\x0c\\r\\x85\\u2028\\u2029"}
_WB = f"(?:(?<=[{_ASCII_WORD}])(?![{_ASCII_WORD}])|(?<![{_ASCII_WORD}])(?=[{_ASCII_WORD}]))"
_NWB = f"(?:(?<=[{_ASCII_WORD}])(?=[{_ASCII_WORD}])|(?<![{_ASCII_WORD}])(?![{_ASCII_WORD}]))"
_POSIX = {
    "alpha": "A-Za-z", "digit": "0-9", "alnum": "A-Za-z0-9", "upper": "A-Z", "lower": "a-z",
    "space": "\\t\\n\\x0b\\x0c\\r ", "blank": " \\t", "xdigit": "0-9A-Fa-f", "word": _ASCII_WORD,
    "cntrl": "\\x00-\\x1f\\x7f", "print": "\\x20-\\x7e", "graph": "\\x21-\\x7e",
    "punct": "!-\\/:-@\\[-`{-~", "ascii": "\\x00-\\x7f",
}
_VALID_OPTIONS = frozenset("imsxu")


class RegexError(ValueError):
    """A pattern that cannot be translated (or is not valid PCRE)."""


def translate_regex(pattern: str, options: str = "", target: str = "python") -> str:
    """A MongoDB (PCRE) pattern as a Python ``re`` or Java ``Pattern`` pattern.

    For ``target="java"`` the options are inlined (``(?d)`` so that only ``\\n`` ends a line,
    ``i`` becomes Unicode-aware ``iu``); for ``"python"`` the caller passes the options as flags
    (:func:`compile_regex`). ``\\b`` is made ASCII for both; for Python ``\\d \\w \\s \\h \\v``
    become ASCII classes, ``\\Z \\z \\Q..\\E \\x{..} \\k<n> (?<n>`` and mid-pattern ``(?i)`` are
    rewritten. Raises :class:`RegexError` for options outside ``imsxu``.
    """
    bad = [c for c in options if c not in _VALID_OPTIONS]
    if bad:
        raise RegexError(f"invalid flag in regex options: {bad[0]}")
    if "\x00" in pattern:
        raise RegexError("regular expression cannot contain an embedded null byte")
    body = _Translator(pattern, "x" in options, target).run()
    if target == "java":
        flags = "d" + "".join(f for f in "imsx" if f in options)
        if "i" in options:
            flags += "u"
        return f"(?{flags}){body}"
    return body


def python_flags(options: str) -> int:
    flags = 0
    for c, f in (("i", re.IGNORECASE), ("m", re.MULTILINE), ("s", re.DOTALL), ("x", re.VERBOSE)):
        if c in options:
            flags |= f
    return flags


@functools.lru_cache(maxsize=512)
def compile_regex(pattern: str, options: str = "") -> "re.Pattern[str]":
    """The compiled Python regex for a MongoDB pattern and options (cached).

    Raises :class:`RegexError` when the pattern is not valid."""
    text = translate_regex(pattern, options, "python")
    try:
        import warnings

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return re.compile(text, python_flags(options))
    except re.error as exc:
        raise RegexError(f"invalid regular expression: {exc}") from None


class _Translator:
    """One pass over a PCRE pattern: escapes, classes, groups and inline flags."""

    def __init__(self, pattern: str, extended: bool, target: str):
        self.p, self.i, self.out = pattern, 0, []
        self.py = target == "python"
        # one frame per open group: [extended flag, list of scoped flag groups opened (python)]
        self.frames: list[list] = [[extended, []]]

    def run(self) -> str:
        p = self.p
        while self.i < len(p):
            c = p[self.i]
            ext = self.frames[-1][0]
            if c == "\\":
                self.out.append(self.escape(in_class=False))
            elif c == "[":
                self.char_class()
            elif c == "(":
                self.group()
            elif c == ")":
                self.i += 1
                if len(self.frames) > 1:
                    frame = self.frames.pop()
                    self.out.append(")" * len(frame[1]))
                self.out.append(")")
            elif c == "|":
                self.i += 1
                scoped = self.frames[-1][1]
                self.out.append(")" * len(scoped) + "|" + "".join(scoped))
            elif ext and c == "#":
                end = p.find("\n", self.i)
                end = len(p) if end < 0 else end
                self.out.append(p[self.i:end])
                self.i = end
            else:
                self.out.append(c)
                self.i += 1
        for frame in reversed(self.frames):
            self.out.append(")" * len(frame[1]))
        return "".join(self.out)

    # escapes ---------------------------------------------------------------------------
    def escape(self, in_class: bool) -> str:
        p = self.p
        if self.i + 1 >= len(p):
            raise RegexError("\\ at end of pattern")
        c = p[self.i + 1]
        self.i += 2
        py = self.py
        if c == "Q":
            end = p.find("\\E", self.i)
            end = len(p) if end < 0 else end
            lit = p[self.i:end]
            self.i = end + 2 if end < len(p) else end
            if not py:
                return "\\Q" + lit + "\\E" if lit else ""
            return "".join("\\" + ch if not ch.isalnum() and ch != "_" else ch for ch in lit)
        if c == "E":
            return ""
        if c == "x" and self.i < len(p) and p[self.i] == "{":
            end = p.find("}", self.i)
            if end < 0:
                raise RegexError("unterminated \\x{")
            code = int(p[self.i + 1:end] or "0", 16)
            self.i = end + 1
            return f"\\U{code:08x}" if py else f"\\x{{{code:x}}}"
        if c == "k" and self.i < len(p) and p[self.i] in "<'{":
            close = {"<": ">", "'": "'", "{": "}"}[p[self.i]]
            end = p.find(close, self.i + 1)
            if end < 0:
                raise RegexError("unterminated \\k")
            name = p[self.i + 1:end]
            self.i = end + 1
            return f"(?P={name})" if py else f"\\k<{name}>"
        if in_class:
            if py and c in "dwshv":
                return _PY_CLASS[c]
            if py and c == "e":
                return "\\x1b"
            if c == "b":
                return "\\x08"
            return "\\" + c
        if c == "b":
            return _WB
        if c == "B":
            return _NWB
        if not py:
            return "\\" + c
        if c in "dwshv":
            return "[" + _PY_CLASS[c] + "]"
        if c in "DWSHV":
            return "[^" + _PY_CLASS[c.lower()] + "]"
        if c == "z":
            return "\\Z"
        if c == "Z":
            return "(?=\\n?\\Z)"
        if c == "e":
            return "\\x1b"
        if c == "R":
            return "(?:\\r\\n|[" + _PY_CLASS["v"] + "])"
        if c == "c" and self.i < len(p):
            ch = p[self.i]
            self.i += 1
            return re.escape(chr(ord(ch.upper()) ^ 0x40))
        return "\\" + c

    # character classes -----------------------------------------------------------------
    def char_class(self) -> None:
        p, out = self.p, ["["]
        self.i += 1
        if self.i < len(p) and p[self.i] == "^":
            out.append("^")
            self.i += 1
        first = True
        ext = self.frames[-1][0]
        while True:
            if self.i >= len(p):
                raise RegexError("missing terminating ] for character class")
            c = p[self.i]
            if c == "]" and not first:
                self.i += 1
                break
            if c == "\\":
                out.append(self.escape(in_class=True))
            elif c == "[" and p.startswith("[:", self.i):
                end = p.find(":]", self.i + 2)
                name = p[self.i + 2:end] if end > 0 else ""
                if name in _POSIX:
                    out.append(_POSIX[name])
                    self.i = end + 2
                else:
                    out.append("\\[")
                    self.i += 1
            elif c in "[]&~|":
                out.append("\\" + c)
                self.i += 1
            elif not self.py and ext and c in " \t\n\r\x0b\x0c#":
                out.append(f"\\x{ord(c):02x}" if c != "#" else "\\#")
                self.i += 1
            else:
                out.append(c)
                self.i += 1
            first = False
        out.append("]")
        self.out.append("".join(out))

    # groups ----------------------------------------------------------------------------
    def group(self) -> None:
        p, py = self.p, self.py
        rest = p[self.i + 1:]
        ext = self.frames[-1][0]
        if not rest.startswith("?"):
            if rest.startswith("*"):
                raise RegexError("backtracking control verbs are not supported")
            self.i += 1
            self.out.append("(")
            self.frames.append([ext, []])
            return
        if rest.startswith("?#"):  # comment group: dropped
            end = p.find(")", self.i)
            if end < 0:
                raise RegexError("missing ) after comment")
            self.i = end + 1
            return
        m = re.match(r"\?([imsxJUnu]*)(?:-([imsxJUnu]*))?([:)])", rest)
        if m and (m.group(1) or m.group(2) is not None):
            on, off, kind = m.group(1), m.group(2) or "", m.group(3)
            if set(on + off) - set("imsxu"):
                raise RegexError(f"unsupported inline flags (?{on}{'-' + off if off else ''})")
            on, off = on.replace("u", ""), off.replace("u", "")
            self.i += 1 + m.end()
            new_ext = (ext or "x" in on) and "x" not in off
            if not py:
                on_j = on + ("u" if "i" in on else "")
                spec = on_j + ("-" + off if off else "")
                if kind == ":":
                    self.out.append(f"(?{spec}:")
                    self.frames.append([new_ext, []])
                else:
                    if spec:
                        self.out.append(f"(?{spec})")
                    self.frames[-1][0] = new_ext
                return
            spec = on + ("-" + off if off else "")
            if kind == ":":
                self.out.append(f"(?{spec}:" if spec else "(?:")
                self.frames.append([new_ext, []])
            elif spec:
                opener = f"(?{spec}:"
                self.out.append(opener)
                self.frames[-1][1].append(opener)
                self.frames[-1][0] = new_ext
            return
        for prefix, py_out, java_out in (
            ("?P<", "(?P<", "(?<"), ("?<=", "(?<=", "(?<="), ("?<!", "(?<!", "(?<!"),
            ("?<", "(?P<", "(?<"), ("?'", None, None), ("?P=", None, None),
        ):
            if rest.startswith(prefix):
                if prefix == "?'":
                    end = p.find("'", self.i + 3)
                    name = p[self.i + 3:end]
                    self.i = end + 1
                    self.out.append(f"(?P<{name}>" if py else f"(?<{name}>")
                    self.frames.append([ext, []])
                elif prefix == "?P=":
                    end = p.find(")", self.i)
                    name = p[self.i + 4:end]
                    self.i = end + 1
                    self.out.append(f"(?P={name})" if py else f"\\k<{name}>")
                else:
                    self.i += 1 + len(prefix)
                    self.out.append(py_out if py else java_out)
                    self.frames.append([ext, []])
                return
        for prefix in ("?:", "?=", "?!", "?>"):
            if rest.startswith(prefix):
                self.i += 1 + len(prefix)
                self.out.append("(" + prefix)
                self.frames.append([ext, []])
                return
        raise RegexError(f"unsupported group syntax ({rest[:3]}")


# ------------------------------------------------------------------------------------ paths

_DIGITS = re.compile(r"[0-9]+\Z")


def is_index(name: str) -> bool:
    """A path component that can address an array element ("0", "12"; not "01")."""
    return bool(_DIGITS.match(name)) and str(int(name)) == name


def _field(obj: Any, name: str) -> Any:
    if isinstance(obj, dict):
        return obj.get(name, MISSING)
    if isinstance(obj, list) and _DIGITS.match(name) and str(int(name)) == name:
        i = int(name)
        return obj[i] if i < len(obj) else MISSING
    return MISSING


def iter_path(doc: Any, path: "str | list[str]", traverse_leaf: bool = True) -> Iterator[Any]:
    """The values a query path offers in a document, as MongoDB's matcher sees them.

    Yields :data:`MISSING` where the path ends nowhere. With ``traverse_leaf`` an array at the
    end of the path yields its elements, then itself."""
    parts = path.split(".") if isinstance(path, str) else list(path)
    return _iter_obj(doc, parts, traverse_leaf)


def _iter_obj(obj: Any, parts: list[str], tl: bool) -> Iterator[Any]:
    cur, i, n = obj, 0, len(parts)
    res: Any = obj
    while i < n:
        res = _field(cur, parts[i])
        if isinstance(res, dict):
            cur = res
            i += 1
            continue
        break
    else:
        yield res
        return
    if res is MISSING:
        yield MISSING
        return
    if not isinstance(res, list):
        yield res if i == n - 1 else MISSING
        return
    rest = parts[i + 1:]
    if not rest:
        if tl:
            yield from res
        yield res
        return
    yield from _iter_array(res, rest, tl)


def _iter_array(arr: list, rest: list[str], tl: bool) -> Iterator[Any]:
    nxt = rest[0]
    is_num = bool(_DIGITS.match(nxt))
    for idx, e in enumerate(arr):
        offset = is_num and str(idx) == nxt
        if isinstance(e, dict):
            yield from _iter_obj(e, rest, tl)
            if offset:
                if len(rest) == 1:
                    yield e
                else:
                    yield from _iter_obj(e, rest[1:], tl)
        elif offset:
            if len(rest) == 1:
                yield e
            elif isinstance(e, list):
                yield from _iter_array(e, rest[1:], tl)


# ------------------------------------------------------------------------------------ matching


def is_operator_doc(v: Any) -> bool:
    """True when ``v`` is an operator document (``{$gt: 1, ...}``) rather than a literal."""
    if not isinstance(v, dict) or not v:
        return False
    first = next(iter(v))
    if not first.startswith("$") or regex_literal(v) is not None:
        return False
    return not ("$ref" in v and "$id" in v)  # a DBRef is a literal


def is_elem_match_value(sub: dict) -> bool:
    """``$elemMatch`` on values (``{$gte: 80, $lt: 85}``) rather than on documents."""
    if not isinstance(sub, dict) or not sub:
        return False
    first = next(iter(sub))
    if not first.startswith("$") or any(k in sub for k in ("$ref", "$id", "$db")):
        return False
    return first not in TOP_LEVEL_OPERATORS


def is_all_elem_match(items: list) -> bool:
    return bool(items) and isinstance(items[0], dict) and bool(items[0]) and next(iter(items[0])) == "$elemMatch"


def true_value(v: Any) -> bool:
    """BSON ``trueValue``: false for false, 0, null, missing; true otherwise."""
    if v is None or v is MISSING or v is False:
        return False
    if is_number(v):
        return not (v == 0)
    return True


class _Env:
    __slots__ = ("expr",)

    def __init__(self, expr: Callable[[Any, Any], Any] | None):
        self.expr = expr


def matches(doc: dict, query: dict, *, expr: Callable[[Any, Any], Any] | None = None) -> bool:
    """True when ``doc`` matches ``query`` under MongoDB's query semantics.

    ``expr(doc, expression)`` evaluates ``$expr`` expressions; without it ``$expr`` raises
    ``NotImplementedError``."""
    return _match_query(doc, query, _Env(expr))


def _match_query(doc: Any, query: dict, env: _Env) -> bool:
    for key, arg in query.items():
        if key.startswith("$"):
            if not _match_top(doc, key, arg, env):
                return False
        elif not _match_field(doc, key, arg, env):
            return False
    return True


def _unknown(op: str, where: str) -> Exception:
    from .query import operator_error

    return operator_error(op, where)


def _match_top(doc: Any, op: str, arg: Any, env: _Env) -> bool:
    if op == "$and":
        return all(_match_query(doc, q, env) for q in arg)
    if op == "$or":
        return any(_match_query(doc, q, env) for q in arg)
    if op == "$nor":
        return not any(_match_query(doc, q, env) for q in arg)
    if op == "$comment":
        return True
    if op == "$jsonSchema":
        from .jsonschema import schema_matches

        return schema_matches(doc, arg)
    if op == "$expr":
        if env.expr is None:
            raise NotImplementedError("$expr needs an expression evaluator: matches(..., expr=fn)")
        return _expr_true(env.expr(doc, arg))
    raise _unknown(op, "top")


def _expr_true(v: Any) -> bool:
    """Aggregation truthiness: false for false, null, missing, 0; true otherwise (arrays too)."""
    return v is not _NOT_EVALUATED and true_value(v)


def _match_field(doc: Any, path: str, arg: Any, env: _Env) -> bool:
    if is_operator_doc(arg):
        return all(_path_op(doc, path, op, val, arg, env) for op, val in arg.items())
    rx = regex_literal(arg)
    if rx is not None:
        return any(_regex_single(v, rx) for v in iter_path(doc, path))
    return any(compare_single(v, "$eq", arg) for v in iter_path(doc, path))


def _path_op(doc: Any, path: str, op: str, val: Any, opdoc: dict, env: _Env) -> bool:
    """One operator applied to a field path (with its array traversal and negations)."""
    if op == "$not":
        rx = regex_literal(val)
        if rx is not None:
            return not any(_regex_single(v, rx) for v in iter_path(doc, path))
        return not all(_path_op(doc, path, o, a, val, env) for o, a in val.items())
    if op == "$ne":
        return not any(compare_single(v, "$eq", val) for v in iter_path(doc, path))
    if op == "$nin":
        return not any(_in_single(v, val) for v in iter_path(doc, path))
    if op == "$exists":
        found = any(v is not MISSING for v in iter_path(doc, path))
        return found if true_value(val) else not found
    if op == "$all":
        if not val:
            return False
        if is_all_elem_match(val):
            return all(_path_op(doc, path, "$elemMatch", item["$elemMatch"], item, env) for item in val)
        return all(any(_eq_or_regex(v, item) for v in iter_path(doc, path)) for item in val)
    if op == "$options":
        return True
    traverse = op not in ("$size", "$elemMatch")
    return any(_single(v, op, val, opdoc, env) for v in iter_path(doc, path, traverse))


def _eq_or_regex(v: Any, item: Any) -> bool:
    rx = regex_literal(item)
    return _regex_single(v, rx) if rx is not None else compare_single(v, "$eq", item)


def _single(v: Any, op: str, val: Any, opdoc: dict, env: _Env) -> bool:
    """One operator applied to one value (``matchesSingleElement``)."""
    if op in ("$eq", "$gt", "$gte", "$lt", "$lte"):
        if regex_literal(val) is not None:
            return False  # only a stored regex equals a regex; documents hold none
        return compare_single(v, op, val)
    if op == "$in":
        return _in_single(v, val)
    if op == "$ne":
        return not compare_single(v, "$eq", val)
    if op == "$nin":
        return not _in_single(v, val)
    if op == "$exists":
        return (v is not MISSING) == true_value(val)
    if op == "$type":
        return _type_single(v, val)
    if op == "$regex":
        return _regex_single(v, regex_of(opdoc))
    if op == "$options":
        return True
    if op == "$size":
        return isinstance(v, list) and len(v) == int(val)
    if op == "$mod":
        return _mod_single(v, val)
    if op == "$elemMatch":
        return _elem_match_single(v, val, env)
    if op == "$all":
        if not val:
            return False
        if is_all_elem_match(val):
            return all(_elem_match_single(v, item["$elemMatch"], env) for item in val)
        return all(_eq_or_regex(v, item) for item in val)
    if op == "$not":
        rx = regex_literal(val)
        if rx is not None:
            return not _regex_single(v, rx)
        return not all(_single(v, o, a, val, env) for o, a in val.items())
    raise _unknown(op, "field")


def compare_single(v: Any, op: str, c: Any) -> bool:
    """``{$eq|$gt|$gte|$lt|$lte: c}`` on one value (``MISSING`` allowed): MongoDB's
    ComparisonMatchExpression::matchesSingleElement."""
    rv, rc = _rank(v), _rank(c)
    if rv != rc:
        if rv + rc == _R_MISSING + _R_NULL:  # missing vs null
            return op in ("$eq", "$lte", "$gte")
        if c is MINKEY or c is MAXKEY:
            if op in ("$lt", "$lte"):
                return c is MAXKEY
            if op == "$eq":
                return False
            return c is MINKEY
        return False
    if op != "$eq" and (is_nan(v) or is_nan(c)):
        both = is_nan(v) and is_nan(c)
        return both if op in ("$lte", "$gte") else False
    x = compare_values(v, c)
    if op == "$eq":
        return x == 0
    if op == "$gt":
        return x > 0
    if op == "$gte":
        return x >= 0
    if op == "$lt":
        return x < 0
    return x <= 0


def _in_single(v: Any, items: list) -> bool:
    for item in items:
        rx = regex_literal(item)
        if rx is not None:
            if _regex_single(v, rx):
                return True
        elif compare_single(v, "$eq", item):
            return True
    return False


def type_set(spec: Any) -> frozenset[str]:
    """The type aliases named by a ``$type`` argument (alias, number, or array of them)."""
    items = spec if isinstance(spec, list) else [spec]
    names = set()
    codes = {c: n for n, c in TYPE_CODES.items()}
    for t in items:
        if isinstance(t, str):
            names.add(t)
        else:
            names.add(codes[int(t)])
    return frozenset(names)


def _type_single(v: Any, spec: Any) -> bool:
    if v is MISSING:
        return False
    names = type_set(spec)
    tn = type_name(v)
    return tn in names or ("number" in names and tn in NUMBER_TYPES)


def regex_of(opdoc: dict) -> tuple[str, str]:
    """``(pattern, options)`` of an operator document holding ``$regex`` (and ``$options``)."""
    r = opdoc["$regex"]
    lit = regex_literal(r)
    if lit is not None:
        pattern, options = lit
    else:
        pattern, options = r, ""
    extra = opdoc.get("$options", "")
    return pattern, options + (extra if isinstance(extra, str) else "")


def _regex_single(v: Any, rx: tuple[str, str]) -> bool:
    if not isinstance(v, str):
        return False
    return compile_regex(rx[0], rx[1]).search(v) is not None


def mod_args(arg: list) -> tuple[int, int]:
    """``$mod`` divisor and remainder as integers (doubles and decimals truncated)."""
    return _to_long(arg[0]), _to_long(arg[1])


def _to_long(x: Any) -> int:
    if isinstance(x, float) or isinstance(x, decimal.Decimal):
        return int(x)  # truncates toward zero
    return int(x)


def c_mod(a: int, b: int) -> int:
    """C++ ``%`` (the remainder has the dividend's sign); ``x % -1`` is 0."""
    if b == -1:
        return 0
    r = abs(a) % abs(b)
    return -r if a < 0 else r


def _mod_single(v: Any, arg: list) -> bool:
    if not is_number(v):
        return False
    d, r = mod_args(arg)
    if isinstance(v, float):
        if not math.isfinite(v):
            return False
        t = math.trunc(v)
    elif isinstance(v, decimal.Decimal):
        if not v.is_finite():
            return False
        t = int(v)
    else:
        t = int(v)
    if not _INT64_MIN <= t <= _INT64_MAX:
        return False
    return c_mod(t, d) == r


def _elem_match_single(v: Any, sub: dict, env: _Env) -> bool:
    if not isinstance(v, list):
        return False
    if is_elem_match_value(sub):
        return any(all(_single(e, op, a, sub, env) for op, a in sub.items()) for e in v)
    return any(isinstance(e, (dict, list)) and _match_query(e, sub, env) for e in v)


# ------------------------------------------------------------------------------------ explain


class _NotEvaluated:
    """The value of an ``$expr`` that could not be evaluated (no evaluator): counts as false."""

    def __repr__(self) -> str:
        return "NOT_EVALUATED"


_NOT_EVALUATED = _NotEvaluated()


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
    env = _Env(expr or (lambda d, e: _NOT_EVALUATED))
    if _match_query(doc, query, env):
        return None
    return _explain_query(doc, query, env)


def _explain_query(doc: Any, query: dict, env: _Env) -> dict:
    clauses = list(query.items())
    failing = []
    for i, (k, a) in enumerate(clauses):
        ok = _match_top(doc, k, a, env) if k.startswith("$") else _match_field(doc, k, a, env)
        if not ok:
            failing.append((i, _explain_clause(doc, k, a, env)))
    if len(clauses) == 1 and failing:
        return failing[0][1]
    return {"operatorName": "$and",
            "clausesNotSatisfied": [{"index": i, "details": d} for i, d in failing]}


def _explain_clause(doc: Any, key: str, arg: Any, env: _Env) -> dict:
    if key in ("$and", "$or", "$nor"):
        out: dict = {"operatorName": key}
        if key == "$nor":
            out["clausesSatisfied"] = [
                {"index": i, "details": {"operatorName": "$nor", "reason": "clause matched"}}
                for i, q in enumerate(arg) if _match_query(doc, q, env)]
        else:
            out["clausesNotSatisfied"] = [
                {"index": i, "details": _explain_query(doc, q, env)}
                for i, q in enumerate(arg) if not _match_query(doc, q, env)]
        return out
    if key == "$jsonSchema":
        from .jsonschema import schema_failure_details

        return schema_failure_details(doc, arg)
    if key == "$expr":
        res = env.expr(doc, arg)
        if res is _NOT_EVALUATED:
            return {"operatorName": "$expr", "specifiedAs": {"$expr": arg},
                    "reason": "expression was not evaluated"}
        return {"operatorName": "$expr", "specifiedAs": {"$expr": arg},
                "reason": "expression did not match", "expressionResult": res}
    if key.startswith("$"):
        return {"operatorName": key, "reason": "did not match"}
    if is_operator_doc(arg):
        for op, val in arg.items():
            if not _path_op(doc, key, op, val, arg, env):
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
