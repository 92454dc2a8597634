"""binData conversions of ``$convert`` (MongoDB 8.0/8.1, Atlas Stream Processing's ``$convert``):
string <-> binData with ``format``, int/long/double <-> binData with ``byteOrder``, binData of a
``to: {type: "binData", subtype: N}``.

MongoDB semantics (``ExpressionConvert``'s conversion table):
- string -> binData needs ``format``: ``base64``, ``base64url``, ``hex``, ``utf8`` or ``uuid``
  (``8-4-4-4-12`` hex digits); ``uuid`` goes with subtype 4 and subtype 4 only with ``uuid``.
- binData -> string: the same formats and ``auto`` (a 16-byte subtype-4 value as its UUID
  string, else base64); without ``format`` it is an error.
- Only ``$convert`` converts binData here: ``$toInt``/``$toLong``/``$toDouble`` of binData (which
  MongoDB 8.1 reads little-endian) are errors, to keep those common operators' expressions small.
- binData -> int (1, 2 or 4 bytes), long (1, 2, 4 or 8 bytes), double (4 bytes: IEEE single,
  8: double): two's complement / IEEE 754 in ``byteOrder`` (default ``little``); other
  lengths are an error.
- int -> 4 bytes, long -> 8 bytes, double -> 8 bytes of binData, in ``byteOrder``.
- binData -> binData keeps the value when the subtype is the target's, else an error.
Hex output is upper case; base64url output has no padding. A NumberLong that fits 32 bits reads
back as an int (VARIANT keeps the smallest width): one the source record wrote is told by its text
(:mod:`..source_text`, in ``$convert``) and converts to 8 bytes; known difference: one a stage
computed converts to 4.
Everything is Catalyst: a double's bits are read off Java's exact hexadecimal form (``%a``), and
bits go back to a double by sign, exponent and mantissa (powers of two scale without rounding).

Golden cases: ``project_convert_bindata``, ``project_touuid``.
"""
from __future__ import annotations

from pyspark.sql import Column
from pyspark.sql import functions as F

from .. import values as V
from ._common import CODE, dbl, lng, v_double, v_long

UUID_RX = r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$"
_B64_RX = r"^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$"
_B64URL_RX = r"^(?:[A-Za-z0-9_-]{4})*(?:[A-Za-z0-9_-]{2,3})?(?:==?)?$"
_HEX_RX = r"^(?:[0-9a-fA-F]{2})*$"
_LONG_MIN = -(2**63)


def _long(n: int) -> Column:
    return F.lit(n).cast("bigint")


def make_bindata(data: Column, subtype: int) -> Column:
    """A BINARY column as binData of ``subtype`` (plain BINARY for 0, else the ``$binary``
    wrapper of :mod:`headrace.spark.docs`)."""
    if subtype == 0:
        return data.cast("variant")
    return V.make_object([("$binary", V.make_object([("data", data.cast("variant")),
                                                      ("subType", v_long(F.lit(subtype)))]))])


def _uuid_text(b: Column) -> Column:
    h = F.lower(F.hex(b))
    return F.concat_ws("-", *[F.substring(h, start, n) for start, n in ((1, 8), (9, 4), (13, 4), (17, 4), (21, 12))])


def _reverse_bytes(hex_text: Column) -> Column:
    """Hex digits with the byte order reversed: reverse the digits, then swap each pair back."""
    return F.regexp_replace(F.reverse(hex_text), "(.)(.)", "$2$1")


def _be_hex(b: Column, order: str) -> Column:
    """Upper-case hex of the bytes, most significant first."""
    return F.hex(b) if order == "big" else _reverse_bytes(F.hex(b))


def _from_be_hex(h: Column, order: str) -> Column:
    return F.unhex(h if order == "big" else _reverse_bytes(h))


def string_to_bindata(s: Column, fmt: str | None, subtype: int) -> tuple[Column, Column | None]:
    """(BINARY or NULL, a constant reason when the options themselves refuse) of a string."""
    if fmt is None or fmt == "auto":
        return F.lit(None).cast("binary"), F.lit("Format must be specified when converting from 'string' to 'binData'")
    if (fmt == "uuid") != (subtype == 4):
        return F.lit(None).cast("binary"), F.lit("Only the 'uuid' format is allowed with the UUID subtype")
    if fmt == "base64":
        return F.when(s.rlike(_B64_RX), F.unbase64(s)), None
    if fmt == "base64url":
        std = F.translate(F.regexp_replace(s, "=+$", ""), "-_", "+/")
        padded = F.rpad(std, ((F.length(std) + 3) / 4).cast("int") * 4, "=")
        return F.when(s.rlike(_B64URL_RX) & (F.length(std) % 4 != 1), F.unbase64(padded)), None
    if fmt == "hex":
        return F.when(s.rlike(_HEX_RX), F.unhex(s)), None
    if fmt == "utf8":
        return F.encode(s, "UTF-8"), None
    return F.when(s.rlike(UUID_RX), F.unhex(F.replace(s, F.lit("-"), F.lit("")))), None


def bindata_to_string(x: Column, fmt: str | None) -> tuple[Column, Column | None]:
    """(STRING or NULL, constant reason) of a bound binData value."""
    if fmt is None:
        return F.lit(None).cast("string"), F.lit("Format must be specified when converting from 'binData' to 'string'")
    b = V.bin_bytes(x)
    is_uuid = (V.bin_subtype(x) == 4) & (F.octet_length(b) == 16)
    b64 = F.base64(b)
    if fmt == "auto":
        return F.when(is_uuid, _uuid_text(b)).otherwise(b64), None
    if fmt == "base64":
        return b64, None
    if fmt == "base64url":
        return F.translate(F.regexp_replace(b64, "=+$", ""), "+/", "-_"), None
    if fmt == "hex":
        return F.hex(b), None
    if fmt == "utf8":
        text = b.cast("string")                   # bytes as they are; invalid UTF-8 is an error
        return F.when(F.is_valid_utf8(text), text), None
    return F.when(is_uuid, _uuid_text(b)), None


def _signed(unsigned: Column, nbytes: Column) -> Column:
    """A two's complement value of ``nbytes`` (1, 2 or 4) bytes read as unsigned."""
    half = F.when(nbytes == 1, F.lit(1 << 7)).when(nbytes == 2, F.lit(1 << 15)).otherwise(F.lit(1 << 31)).cast("bigint")
    return F.when(unsigned >= half, unsigned - half * 2).otherwise(unsigned)


def _bits_to_float(bits: Column, exp_bits: int, man_bits: int) -> Column:
    """The IEEE 754 value of a bit pattern of ``1 + exp_bits + man_bits`` bits held in a BIGINT
    (a double's 64 bits as a signed BIGINT, a float's 32 in its low bits)."""
    total = 1 + exp_bits + man_bits
    sign = F.shiftright(bits, total - 1).bitwiseAND(_long(1)) if total < 64 else (bits < 0).cast("bigint")
    e = F.shiftright(bits, man_bits).bitwiseAND(_long((1 << exp_bits) - 1))
    m = bits.bitwiseAND(_long((1 << man_bits) - 1))
    bias = (1 << (exp_bits - 1)) - 1
    mag = (F.when(e == (1 << exp_bits) - 1, F.when(m == 0, F.lit(float("inf"))).otherwise(F.lit(float("nan"))))
           .when(e == 0, m.cast("double") * F.lit(2.0 ** (1 - bias - man_bits)))
           .otherwise((F.lit(1.0) + m.cast("double") * F.lit(2.0 ** -man_bits)) * F.pow(F.lit(2.0), e - bias)))
    return F.when(sign == 1, -mag).otherwise(mag)


def bindata_to_number(x: Column, to: str, order: str) -> Column:
    """The int / long / double (a VARIANT) a bound binData value holds, or NULL for a length the
    target does not take."""
    b = V.bin_bytes(x)

    def body(h: Column, n: Column) -> Column:
        unsigned = F.conv(h, 16, 10).cast("bigint")
        if to == "int":
            return F.when(n.isin(1, 2, 4), v_long(_signed(unsigned, n)))
        if to == "long":
            return (F.when(n == 8, v_long(F.conv(h, 16, -10).cast("bigint")))
                    .when(n.isin(1, 2, 4), v_long(_signed(unsigned, n))))
        bits = F.when(n == 8, F.conv(h, 16, -10).cast("bigint")).otherwise(unsigned)
        return V.let(bits, lambda w: F.when(n == 8, v_double(_bits_to_float(w, 11, 52)))
                     .when(n == 4, v_double(_bits_to_float(w, 8, 23))))
    return V.let_many([_be_hex(b, order), F.octet_length(b)], body)


def _double_bits(d: Column) -> Column:
    """Java's ``doubleToLongBits`` (NaN canonical) as 16 upper-case hex digits, read off Java's
    exact hexadecimal form of the double (``%a``: ``-0x1.8p1``, ``0x0.0000000000001p-1022``)."""
    a = F.format_string("%a", d)
    negative = a.startswith("-")
    frac = F.rpad(F.regexp_extract(a, r"0x[01]\.([0-9a-f]+)p", 1), 13, "0")
    exp = F.regexp_extract(a, r"p(-?[0-9]+)$", 1).cast("bigint")
    field = F.when(a.contains("0x1."), exp + 1023).otherwise(_long(0))          # subnormals and zero: 0
    bits = F.lpad(F.hex(F.shiftleft(field, 52).bitwiseOR(F.conv(frac, 16, 10).cast("bigint"))), 16, "0")
    top = F.conv(F.substring(bits, 1, 1), 16, 10).cast("int") + F.when(negative, F.lit(8)).otherwise(F.lit(0))
    signed = F.concat(F.upper(F.conv(top.cast("string"), 10, 16)), F.substring(bits, 2, 15))
    return (F.when(a == "NaN", F.lit("7FF8000000000000"))
            .when(a == "Infinity", F.lit("7FF0000000000000")).when(a == "-Infinity", F.lit("FFF0000000000000"))
            .otherwise(signed))


def number_to_bindata(x: Column, c: Column, order: str) -> Column:
    """BINARY of a bound int (4 bytes), long (8) or double (8), else NULL."""
    as_long = F.lpad(F.hex(lng(x)), 16, "0")        # two's complement, 16 digits
    as_int = F.substring(as_long, 9, 8)             # its low 32 bits
    as_double = _double_bits(dbl(x))
    h = (F.when(c == CODE["int"], F.when(lng(x).between(-(2**31), 2**31 - 1), as_int).otherwise(as_long))
         .when(c == CODE["long"], as_long).when(c == CODE["double"], as_double))
    return _from_be_hex(h, order)


_NUMBER_TARGETS = ("int", "long", "double")


def to_bindata(x: Column, c: Column, fmt: str | None, order: str, subtype: int) -> tuple[Column, Column]:
    """(binData value or NULL, reason or NULL) converting a bound value of type code ``c``."""
    s = F.try_variant_get(x, "$", "string")
    data_s, reason_s = string_to_bindata(s, fmt, subtype)
    value = (F.when(c == CODE["string"], F.when(data_s.isNotNull(), make_bindata(data_s, subtype)))
             .when(c.isin(CODE["int"], CODE["long"], CODE["double"]),
                   make_bindata(number_to_bindata(x, c, order), subtype))
             .when((c == CODE["binData"]) & (V.bin_subtype(x) == subtype), x))
    reason = (F.when(c == CODE["string"], reason_s if reason_s is not None else F.lit(None).cast("string"))
              .when(c == CODE["binData"], F.lit("Conversions between different BinData subtypes are not supported")))
    return value, reason


def from_bindata(x: Column, to: str, fmt: str | None, order: str) -> tuple[Column, Column] | None:
    """(value or NULL, reason or NULL) converting a bound binData value to ``to``, or None when
    binData does not convert to ``to`` here."""
    if to == "string":
        text, reason = bindata_to_string(x, fmt)
        if reason is None:
            reason = F.lit({"utf8": "BinData does not represent a valid UTF-8 string",
                            "uuid": "BinData does not represent a valid UUID"}.get(fmt)).cast("string")
        return F.when(text.isNotNull(), text.cast("variant")), reason
    if to in _NUMBER_TARGETS:
        widths = {"int": "1, 2 or 4", "long": "1, 2, 4 or 8", "double": "4 or 8"}[to]
        return bindata_to_number(x, to, order), F.concat(
            F.lit("invalid length "), F.octet_length(V.bin_bytes(x)).cast("string"), F.lit(f", expected {widths} bytes"))
    return None
