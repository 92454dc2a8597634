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
  compare(a, b)                         -- -1/0/1 in MongoDB's total order (type rank, then value;
                                           missing sorts as null)
  equal(a, b)                           -- MQL equality (numbers by value across int/long/double)
  sort_key(v)                           -- an orderable Spark column (struct) realising compare()
"""
