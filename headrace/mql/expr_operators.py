"""The aggregation expression operator table: :data:`OPERATORS` maps each supported operator to
its :class:`~.expr_spec.Spec` (argument shape, family and constant-argument check),
:data:`NOT_SUPPORTED` names the real MongoDB operators headrace does not implement, and
``_NOT_EXPRESSIONS`` the accumulator- and window-only names. Part of
:mod:`headrace.mql.expressions`, which re-exports it (pure Python).
"""
from __future__ import annotations

from .expr_spec import Spec, _list, _obj
from .expr_checks import (_check_convert, _check_date_add, _check_date_common, _check_date_from_parts,
                          _check_date_trunc, _check_dfs, _check_get_field, _check_hash, _check_meta,
                          _check_method, _check_percentile, _check_range, _check_regex, _check_round,
                          _check_sort_by, _check_switch, _check_trunc_date_to_string)


A, N = "arithmetic", None
OPERATORS: dict[str, Spec] = {
    # arithmetic
    "$add": _list(0, N, A), "$subtract": _list(2, 2, A), "$multiply": _list(0, N, A),
    "$divide": _list(2, 2, A), "$mod": _list(2, 2, A), "$abs": _list(1, 1, A),
    "$ceil": _list(1, 1, A), "$floor": _list(1, 1, A), "$round": _list(1, 2, A, _check_round),
    "$trunc": _list(1, 2, A, _check_round), "$sqrt": _list(1, 1, A), "$pow": _list(2, 2, A),
    "$exp": _list(1, 1, A), "$ln": _list(1, 1, A), "$log": _list(2, 2, A), "$log10": _list(1, 1, A),
    "$sigmoid": _list(1, 1, A),
    # comparison
    **{op: _list(2, 2, "comparison") for op in ("$eq", "$ne", "$gt", "$gte", "$lt", "$lte", "$cmp")},
    # boolean
    "$and": _list(0, N, "boolean"), "$or": _list(0, N, "boolean"), "$not": _list(1, 1, "boolean"),
    # conditional
    "$cond": Spec("list_or_object", (3, 3), frozenset({"if", "then", "else"}), family="conditional"),
    "$ifNull": _list(2, N, "conditional"),
    "$switch": _obj({"branches"}, {"default"}, "conditional", _check_switch),
    # strings
    "$concat": _list(0, N, "strings"), "$substrCP": _list(3, 3, "strings"),
    "$substrBytes": _list(3, 3, "strings"), "$substr": _list(3, 3, "strings"),
    "$toLower": _list(1, 1, "strings"), "$toUpper": _list(1, 1, "strings"),
    "$split": _list(2, 2, "strings"), "$strLenCP": _list(1, 1, "strings"),
    "$strLenBytes": _list(1, 1, "strings"),
    "$trim": _obj({"input"}, {"chars"}, "strings"), "$ltrim": _obj({"input"}, {"chars"}, "strings"),
    "$rtrim": _obj({"input"}, {"chars"}, "strings"), "$indexOfCP": _list(2, 4, "strings"),
    "$indexOfBytes": _list(2, 4, "strings"),
    "$regexMatch": _obj({"input", "regex"}, {"options"}, "strings", _check_regex),
    "$regexFind": _obj({"input", "regex"}, {"options"}, "strings", _check_regex),
    "$regexFindAll": _obj({"input", "regex"}, {"options"}, "strings", _check_regex),
    "$replaceOne": _obj({"input", "find", "replacement"}, (), "strings"),
    "$replaceAll": _obj({"input", "find", "replacement"}, (), "strings"),
    "$strcasecmp": _list(2, 2, "strings"),
    # dates
    "$toDate": _list(1, 1, "dates"),
    "$dateFromString": _obj({"dateString"}, {"format", "timezone", "onError", "onNull"}, "dates", _check_dfs),
    "$dateToString": _obj({"date"}, {"format", "timezone", "onNull"}, "dates", _check_trunc_date_to_string),
    "$dateTrunc": _obj({"date", "unit"}, {"binSize", "timezone", "startOfWeek"}, "dates", _check_date_trunc),
    "$dateAdd": _obj({"startDate", "unit", "amount"}, {"timezone"}, "dates", _check_date_add),
    "$dateSubtract": _obj({"startDate", "unit", "amount"}, {"timezone"}, "dates", _check_date_add),
    "$dateDiff": _obj({"startDate", "endDate", "unit"}, {"timezone", "startOfWeek"}, "dates", _check_date_common),
    **{op: Spec("date_part", family="dates") for op in (
        "$year", "$month", "$dayOfMonth", "$dayOfWeek", "$dayOfYear", "$hour", "$minute", "$second",
        "$millisecond", "$week", "$isoWeek", "$isoWeekYear", "$isoDayOfWeek")},
    "$dateToParts": _obj({"date"}, {"timezone", "iso8601"}, "dates", _check_date_common),
    "$dateFromParts": _obj((), {"year", "month", "day", "hour", "minute", "second", "millisecond",
                                "isoWeekYear", "isoWeek", "isoDayOfWeek", "timezone"}, "dates",
                           _check_date_from_parts),
    # types
    "$convert": _obj({"input", "to"}, {"onError", "onNull", "format", "byteOrder"}, "types", _check_convert),
    **{op: _list(1, 1, "types") for op in ("$toInt", "$toLong", "$toDouble", "$toDecimal", "$toString",
                                           "$toBool", "$toObjectId", "$type", "$isNumber", "$binarySize",
                                           "$tsSecond", "$tsIncrement", "$toUUID",
                                           "$toObject", "$toArray",
                                           "$toHashedIndexKey", "$bsonSize")},
    # arrays
    "$size": _list(1, 1, "arrays"), "$arrayElemAt": _list(2, 2, "arrays"),
    "$first": _list(1, 1, "arrays"), "$last": _list(1, 1, "arrays"), "$in": _list(2, 2, "arrays"),
    "$filter": _obj({"input", "cond"}, {"as", "limit"}, "arrays"),
    "$map": _obj({"input", "in"}, {"as"}, "arrays"),
    "$reduce": _obj({"input", "initialValue", "in"}, (), "arrays"),
    "$concatArrays": _list(0, N, "arrays"), "$slice": _list(2, 3, "arrays"),
    "$reverseArray": _list(1, 1, "arrays"), "$isArray": _list(1, 1, "arrays"),
    "$range": _list(2, 3, "arrays", _check_range), "$indexOfArray": _list(2, 4, "arrays"),
    "$arrayToObject": _list(1, 1, "arrays"), "$objectToArray": _list(1, 1, "arrays"),
    "$zip": _obj({"inputs"}, {"useLongestLength", "defaults"}, "arrays"),
    "$sum": _list(0, N, "arrays"), "$avg": _list(0, N, "arrays"), "$min": _list(0, N, "arrays"),
    "$max": _list(0, N, "arrays"),
    # sets
    "$setUnion": _list(0, N, "sets"), "$setIntersection": _list(0, N, "sets"),
    "$setDifference": _list(2, 2, "sets"), "$setEquals": _list(2, N, "sets"),
    "$setIsSubset": _list(2, 2, "sets"), "$allElementsTrue": _list(1, 1, "sets"),
    "$anyElementTrue": _list(1, 1, "sets"),
    # ranking and statistics over arrays
    "$sortArray": _obj({"input", "sortBy"}, (), "array_stats", _check_sort_by),
    **{op: _obj({"input", "n"}, (), "array_stats") for op in ("$firstN", "$lastN", "$maxN", "$minN")},
    "$median": _obj({"input", "method"}, (), "array_stats", _check_method),
    "$percentile": _obj({"input", "p", "method"}, (), "array_stats", _check_percentile),
    "$stdDevPop": _list(0, N, "array_stats"), "$stdDevSamp": _list(0, N, "array_stats"),
    # trigonometry
    **{op: _list(1, 1, "trig") for op in (
        "$sin", "$cos", "$tan", "$asin", "$acos", "$atan", "$sinh", "$cosh", "$tanh", "$asinh", "$acosh",
        "$atanh", "$degreesToRadians", "$radiansToDegrees")},
    "$atan2": _list(2, 2, "trig"),
    # bits
    **{op: _list(0, N, "bits") for op in ("$bitAnd", "$bitOr", "$bitXor")},
    "$bitNot": _list(1, 1, "bits"),
    # objects
    "$mergeObjects": _list(0, N, "objects"),
    "$getField": Spec("get_field", family="objects", check=_check_get_field),
    "$setField": _obj({"field", "input", "value"}, (), "objects", _check_get_field),
    "$unsetField": _obj({"field", "input"}, (), "objects", _check_get_field),
    # variables, literals, metadata
    "$let": _obj({"vars", "in"}, (), "variables"),
    "$literal": Spec("any", family="literal"),
    "$meta": Spec("string", family="meta", check=_check_meta),
    # replay-stable random values
    "$rand": _obj((), (), "rand"), "$createObjectId": _obj((), (), "rand"),
    # digests
    "$hash": _obj({"input", "algorithm"}, (), "hashing", _check_hash),
    "$hexHash": _obj({"input", "algorithm"}, (), "hashing", _check_hash),
}

#: real MongoDB expression operators headrace does not implement (yet)
NOT_SUPPORTED = frozenset({
    # trigonometry and angles
    "$sin", "$cos", "$tan", "$asin", "$acos", "$atan", "$atan2", "$sinh", "$cosh", "$tanh",
    "$asinh", "$acosh", "$atanh", "$degreesToRadians", "$radiansToDegrees",
    # sets
    "$setUnion", "$setIntersection", "$setDifference", "$setEquals", "$setIsSubset",
    "$allElementsTrue", "$anyElementTrue",
    # arrays and n-ary accumulators as expressions
    "$sortArray", "$maxN", "$minN", "$firstN", "$lastN", "$topN", "$bottomN", "$top", "$bottom",
    "$median", "$percentile", "$stdDevPop", "$stdDevSamp",
    # strings and bytes
    "$indexOfBytes", "$toUUID",
    # bits, sizes, misc
    "$bitAnd", "$bitOr", "$bitXor", "$bitNot", "$binarySize", "$bsonSize", "$rand", "$function",
    "$accumulator", "$unsetField", "$tsIncrement", "$tsSecond", "$toHashedIndexKey",
    "$createObjectId", "$sigmoid", "$hash", "$toArray", "$toObject",
    # queryable encryption
    "$encStrStartsWith", "$encStrEndsWith", "$encStrContains", "$encStrNormalizedEq",
}) - frozenset(OPERATORS)

#: accumulator- or window-only names: real, but not expressions
_NOT_EXPRESSIONS = frozenset({
    "$push", "$addToSet", "$count", "$covariancePop", "$covarianceSamp", "$derivative",
    "$integral", "$expMovingAvg", "$shift", "$rank", "$denseRank", "$documentNumber", "$locf",
    "$linearFill",
})
