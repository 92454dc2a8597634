"""MQL values over Spark VARIANT columns: the shared vocabulary of every compiler module.

Conventions (all functions take and return ``pyspark.sql.Column``):
- A value is a VARIANT column. SQL NULL means *missing*; a VARIANT null (``is_variant_null``)
  means BSON ``null``. Encoding of BSON types in VARIANT: see ``headrace.spark.docs``.
- Integers: a VARIANT integer is MQL ``int`` when it fits in 32 bits, else ``long``.
- Nothing here raises per record: functions return SQL NULL where MQL has no value.

API (stable; other modules import these names):
  MISSING, NULL                         -- literal columns
  lit_value(python_value) -> Column     -- a constant (headrace.ejson model) as VARIANT
  to_variant(col, spark_type=None)      -- a typed Spark column as VARIANT (null stays missing)
  type_name(v)                          -- MQL $type name: "missing","null","int","long","double",
                                           "decimal","string","object","array","binData",
                                           "objectId","bool","date","minKey","maxKey"
  type_rank(v)                          -- BSON comparison-order rank (int) of v's type
  is_missing(v), is_null_or_missing(v), is_number(v), is_string(v), is_date(v),
  is_array(v), is_object(v), is_bool(v)
  as_double(v), as_long(v), as_string(v), as_bool_raw(v), as_timestamp(v)
                                        -- typed value when v has that MQL type, else NULL
  truthy(v)                             -- MQL truthiness as a Spark boolean (false for
                                           missing, null, false, 0; true otherwise)
  get_path(v, "a.b.c")                  -- aggregation field-path semantics (arrays traversed:
                                           "$a.b" over an array of documents gives the array of
                                           their b values, missing ones skipped)
  array_elems(v)                        -- ARRAY<VARIANT> of an array value, else NULL
  make_array(cols) / make_object(pairs) -- build VARIANT arrays / objects
  set_fields(doc, {path: value_col})    -- doc with fields set (dotted paths create sub-docs;
                                           a missing value removes the field)
  unset_fields(doc, [paths])
  project_value(v, [paths])             -- ``$project`` inclusion of dotted paths (documents keep
                                           what they have, arrays are projected per element)
  compare(a, b)                         -- -1/0/1 in MongoDB's total order (type rank, then value;
                                           missing sorts as null)
  equal(a, b)                           -- MQL equality (numbers by value across int/long/double)
  sort_key(v)                           -- an orderable Spark column (struct) realising compare()

The typed fast path: ``facts`` (:mod:`.facts`) reads a path of the batch's source documents whose
type the batch's facts know as a column marked ``known(col, code, read)``; ``type_code`` of it is a
cheap ``CASE``, typed reads go straight to the document, ``same_type(dst, src)`` carries the mark
to a column holding the same value, ``known_type(col)`` reads it.

Modules: ``base`` (constants, VARIANT paths, marks, ``let``, type-code tables), ``types``
(type codes and tests, typed accessors, truthiness), ``build`` (constants, typed columns,
arrays and objects as VARIANT), ``paths`` (field paths), ``order`` (comparison); import the
names from this package.

Extras used by the expression compiler:
  let(col, fn), let_many(cols, fn)      -- evaluate a column once and use it many times (a
                                           one-element ``transform``; skipped for cheap columns)
  type_code(v), TYPE_NAMES, CODE        -- the MQL type as an INT code (integers: CODE["int"])
  rank_of_code(code)                    -- BSON order rank of a type code
  sort_key_coded(x, c), compare_coded(a, b, ca, cb) -- sort_key / compare with known codes
  as_decimal(v)                         -- DECIMAL(38,18) of a number (NULL when out of range)
  as_integral(v)                        -- BIGINT of a number with an integral value, else NULL
  is_integer(v)                         -- MQL int or long
  is_object_raw(v)                      -- any VARIANT object (incl. $oid / $minKey wrappers)
  object_entries(v)                     -- MAP<STRING,VARIANT> of a document, else NULL
  oid_hex(v)                            -- the hex string of an ObjectId value, else NULL
  bin_bytes(x), bin_subtype(x), bin_key(x) -- a bound binData value's BINARY, subtype, order key
  ts_parts(x)                           -- (seconds, ordinal) of a bound Timestamp value
  variant_path(*keys)                   -- a ``variant_get`` path for literal keys
  from_double(c), from_long(c)          -- a DOUBLE / BIGINT column as VARIANT
  const_of(col)                         -- the Python value of a ``lit_value`` column, if any

Cost model: Spark's analyzer makes about one pass over the whole plan per level of lambda
nesting, so helpers avoid nesting lambdas and repeat small expressions instead of binding them.
Type tests never cast strings to numbers (a failing cast is slow); they read the VARIANT type.

Deviations (accepted): ``Int64`` values that fit in 32 bits read back as ``int``; object fields
are stored sorted by name, so object comparison follows sorted field order; ``compare`` and
``sort_key`` compare the elements of arrays and documents by value and containers nested deeper
by their JSON text; field paths (``get_path``, ``set_fields``, ``unset_fields``) traverse
arrays and arrays nested one level deeper, not deeper.

Field order. VARIANT sorts only an object's field-id and offset lists by name; the value bytes may
lie in any order, and both builders (pyspark's ``VariantBuilder`` and the JVM's
``finishWritingObject``: ``parse_json``, ``to_variant_object``) append values in the order given,
but the JVM's ``VariantBuilder.appendVariant``, used whenever an object is copied into another
(``variant_get``/``variant_set`` of a sub-object, an array cast to VARIANT, ...), writes the
fields in id-list (sorted) order: offsets are not a sound carrier. So outputs get their order
beside the data: the sink reorders each decoded document by a template computed from the
record's raw text and the pipeline's stages (:mod:`headrace.mql.field_order`). Comparisons inside
the engine (``compare``/``equal``, so ``$eq`` between embedded documents) still follow sorted
field order; making them order-sensitive would take an order carried inside every object (a
reserved field listing its names in insertion order, kept by ``make_object``, ``set_fields``,
``unset_fields``, ``$project``, ``$group`` and the object operators, skipped by every reader of
object entries).
"""
from __future__ import annotations

from typing import Any

from . import base as _base
from .base import (CODE, NUMBER_CODES, RANKS, TYPE_NAMES, const_of, from_double, from_long, is_simple, let,
                   let_many, variant_path)
# for the hoister and the typed-value helpers of the expression compiler
from .base import (_tvg, derived, hoisted_ref, is_known, known, known_type, same_type, typed_read,  # noqa: F401
                   variant_reader)
from .build import array_elems, lit_value, make_array, make_object, object_entries, to_variant
from .order import (compare, compare_coded, equal, group_key_coded, id_of_group_key, sort_key, sort_key_coded,
                    sort_key_scalar)
from .paths import get_path, project_value, set_fields, unset_fields
from .types import _code_of, _num_double  # noqa: F401
from .types import _num_decimal as num_decimal  # noqa: F401
from .types import bin_bytes, bin_key, bin_subtype, ts_parts
from .types import (as_bool_raw, as_decimal, as_double, as_integral, as_long,
                    as_string, as_timestamp, is_array, is_bool, is_date, is_integer, is_missing, is_null_or_missing,
                    is_number, is_object, is_object_raw, is_string, oid_hex, rank_of_code, truthy, type_code,
                    type_name, type_rank)

__all__ = [
    "MISSING", "NULL", "lit_value", "to_variant", "type_name", "type_rank", "is_missing",
    "is_null_or_missing", "is_number", "is_string", "is_date", "is_array", "is_object",
    "is_bool", "as_double", "as_long", "as_string", "as_bool_raw", "as_timestamp", "truthy",
    "get_path", "array_elems", "make_array", "make_object", "set_fields", "unset_fields",
    "compare", "equal", "sort_key", "group_key_coded", "id_of_group_key", "project_value", "as_decimal", "as_integral", "is_integer", "is_object_raw",
    "object_entries", "oid_hex", "variant_path", "from_double", "from_long", "RANKS",
    "let", "let_many", "is_simple", "type_code", "TYPE_NAMES", "CODE", "NUMBER_CODES", "rank_of_code",
    "sort_key_coded", "sort_key_scalar", "compare_coded", "const_of", "bin_bytes", "bin_subtype", "bin_key", "ts_parts",
]


def __getattr__(name: str) -> Any:
    # MISSING / NULL: built on first use (a Column needs a running SparkContext)
    if name in _base._CONSTANTS:
        col = _base._const(name)
        globals()[name] = col
        return col
    raise AttributeError(name)
