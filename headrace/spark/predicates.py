"""Tests of one value in a document (VARIANT) as native Spark boolean columns: the building
blocks that queries (:mod:`headrace.spark.query`) and ``$jsonSchema``
(:mod:`headrace.spark.jsonschema`) are compiled from.

- :class:`Pred`: a test of one value that never returns NULL, with its result on a missing value.
- :func:`path_test`: whether some value a dotted path offers satisfies a test (MongoDB's element
  iteration: arrays on the way are searched, an array at the end offers its elements and itself).
- Comparisons (:func:`cmp_pred`, :func:`eq_value`) are specialised on the constant's type at
  compile time (type bracketing, ``null`` matching missing, MinKey/MaxKey bounds, NaN rules);
  numbers compare as doubles with exact ties broken as integers / decimals; equality with an
  array or document constant is checked element by element; ``$gt``/``$lt`` on arrays and
  documents use ``values.compare``.
- :func:`regex_pred` runs a Java regex translated from PCRE
  (:func:`headrace.mql.regex.translate_regex`); :func:`in_pred`, :func:`type_pred`,
  :func:`mod_pred`, :func:`size_pred`, :func:`bits_pred` are ``$in``, ``$type``, ``$mod``,
  ``$size`` and the ``$bits*`` tests.

The building blocks are in :mod:`.predicates_base`, path iteration in :mod:`.predicates_paths`,
comparisons in :mod:`.predicates_compare` and the other operators in :mod:`.predicates_ops`;
this module re-exports them.
"""
from __future__ import annotations

from .predicates_base import Pred, all_of, any_of, false, field, nn, raw_double, true
from .predicates_compare import Test, cmp_pred, eq_value
from .predicates_ops import bits_pred, eq_or_regex, in_pred, mod_pred, regex_pred, size_pred, type_pred, type_test
from .predicates_paths import path_test

__all__ = [
    "true", "false", "Pred", "nn", "all_of", "any_of", "field", "raw_double", "path_test",
    "cmp_pred", "eq_value", "eq_or_regex", "regex_pred", "in_pred", "type_test", "type_pred",
    "mod_pred", "size_pred", "bits_pred", "Test",
]
