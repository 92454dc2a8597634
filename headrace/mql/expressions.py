"""Aggregation expressions: the supported operators and their validation (pure Python).

``validate_expression(expr, path, variables=())`` checks an expression completely before
anything runs and raises :class:`~headrace.errors.PipelineError`:

- ``EXPR_UNKNOWN_OPERATOR``: ``{$foo: ...}``, which MongoDB does not have either.
- ``EXPR_NOT_SUPPORTED_YET``: a real MongoDB expression operator (or system variable) headrace
  does not implement (``NOT_SUPPORTED``), e.g. ``$sin``, ``$setUnion``, ``$function``.
- ``EXPR_BAD_ARGS``: a supported operator with the wrong number or shape of arguments, an
  unknown or missing option, or a constant argument MongoDB would refuse (a bad ``unit``,
  ``timezone``, ``to`` type, regex, ``$meta`` name ...); says what was expected and what was found.
- ``EXPR_INVALID_FIELD_PATH``: ``"$"``, ``"$a..b"``, ``"$a.$b"``.
- ``EXPR_UNDEFINED_VARIABLE``: ``"$$x"`` where no ``$let`` / ``$map`` / ``$filter`` / ``$reduce``
  defines ``x`` (``$$this`` and ``$$value`` exist only inside the array operators). An invalid
  variable name in ``$let`` / ``as`` is ``EXPR_BAD_ARGS``.
- ``EXPR_INVALID_OBJECT``: an object mixing an operator with other fields, or a field name
  containing ``.`` or starting with ``$``.

``path`` is the expression's field path in the stage (e.g. ``"$addFields.total"``); errors
extend it with operator names and argument positions (``"$addFields.total.$add.1"``).

``OPERATORS`` maps each supported operator to its :class:`Spec` (argument shape);
:func:`operands` gives the argument list of a list-form operator as MongoDB reads it (a single
non-array argument is a one-element list). The shapes, constants and shared predicates are in
:mod:`.expr_spec`, the checks of constant arguments in :mod:`.expr_checks`, the operator table in
:mod:`.expr_operators` and the validation walk in :mod:`.expr_validate`; this module re-exports
them.
"""
from __future__ import annotations

from .expr_spec import (CONVERT_TYPES, DATE_UNITS, META_NAMES, SYSTEM_VARIABLES, Spec, is_constant, is_field_path,
                        is_variable, operands, valid_timezone)
from .expr_operators import NOT_SUPPORTED, OPERATORS
from .expr_validate import PYTHON_OPERATOR_PLACES, PYTHON_OPERATOR_STAGES, python_operator_path, validate_expression


__all__ = [
    "validate_expression", "operands", "OPERATORS", "NOT_SUPPORTED", "SYSTEM_VARIABLES",
    "Spec", "is_field_path", "is_variable", "valid_timezone", "DATE_UNITS", "CONVERT_TYPES",
    "META_NAMES", "is_constant", "PYTHON_OPERATOR_STAGES", "PYTHON_OPERATOR_PLACES", "python_operator_path",
]
