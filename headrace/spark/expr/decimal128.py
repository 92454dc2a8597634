"""Decimal128 arithmetic on Catalyst columns: MongoDB's decimal results, to 34 significant digits.

MongoDB computes decimals in IEEE 754-2008 Decimal128: a result is the exact result rounded to
34 significant digits, ties to even; an int, long or double operand is first converted to a
decimal (a double to 15 significant digits, as ``Decimal128(double)`` does). Spark's DECIMAL holds
38 digits at one fixed scale per column, so a product of two fractions or a quotient lost digits
there (``0.0005 * 0.0003`` gave 0, ``1 / 3`` ten digits). Here a decimal is a struct ``{n, d, e}``:
negative or not, its digits without leading zeros (``"0"`` for zero) and its exponent, the value
``(-1)**n * int(d) * 10**e``. Each operation computes the exact digits of its result with integer
DECIMALs of at most 38 digits (products from 17-digit halves, sums from 35-digit halves, quotients
by long division four digits at a time), then rounds them (:func:`rounded`).

Each operation keeps the exponent IEEE 754 gives its result (a sum at the smaller exponent of
its operands, a product at their sum, an exact quotient at their difference where 34 digits
allow, a quantize at its place), so ``1.50 + 1`` is ``2.50`` as in MongoDB; a result becomes a
VARIANT value in :mod:`.decimal_variant`. NaN and the infinities are not represented: an
operation with a NaN or infinite double operand gives NULL (the operators report "result out of
range").

Golden cases: ``project_decimal_arithmetic`` (the sums, products and quotients above),
``addfields_degreestoradians``.
"""
from __future__ import annotations

import decimal

from pyspark.sql import Column
from pyspark.sql import functions as F

from .. import values as V

DIGITS = 34
_CODE = V.CODE
_PAT = r"^([+-]?)([0-9]*)(?:\.([0-9]*))?(?:[eE]([+-]?[0-9]+))?$"
_HALF = 35                                   # digits per half of an aligned sum


def _base() -> Column:
    """10**35 as DECIMAL(36,0)."""
    return F.lit(decimal.Decimal(10 ** _HALF))


def _bind(cols: list[Column], fn) -> Column:
    """``fn(*xs)`` with each of ``cols`` evaluated once, even a small one (:func:`V.let_many`
    repeats expressions under 300 characters; these are read many times over)."""
    s = F.struct(*[c.alias(f"_{i}") for i, c in enumerate(cols)])
    return F.transform(F.array(s), lambda x: fn(*[x[f"_{i}"] for i in range(len(cols))])).getItem(0)


def make(n: Column, d: Column, e: Column) -> Column:
    return F.struct(n.alias("n"), d.alias("d"), e.cast("int").alias("e"))


def _strip(d: Column) -> Column:
    """Digits without leading zeros (``"0"`` for none)."""
    return F.regexp_replace(d, "^0+(?=[0-9])", "")


def _sub(s: Column, pos: int, length: int | Column) -> Column:
    return F.substr(s, F.lit(pos), length if isinstance(length, Column) else F.lit(length))


def possible(xs) -> bool:
    """Whether any of the bound values ``xs`` may be a decimal: not when each is a constant of
    another type or of a type the batch's facts know (:mod:`headrace.spark.values.facts`), so a
    typed pipeline's arithmetic carries no decimal branch."""
    for x in xs:
        is_const, value = V.const_of(x)
        if is_const:
            if isinstance(value, decimal.Decimal):
                return True
            continue
        code = V.known_type(x)
        if code is None or code == V.CODE["decimal"]:
            return True
    return False


def parse(t: Column) -> Column:
    """The exact decimal of a number's text (``-1.50``, ``2E+5``, ``1.5e-7``); NULL for other text."""
    def body(t: Column) -> Column:
        def groups(sign: Column, ip: Column, fp: Column, ex: Column) -> Column:
            exp = F.when(ex == "", F.lit(0)).otherwise(ex.try_cast("int"))
            ok = t.rlike(_PAT) & ((F.length(ip) + F.length(fp)) > 0) & exp.isNotNull()
            return F.when(ok, make(sign == "-", _strip(F.concat(ip, fp)), exp - F.length(fp)))
        return _bind([F.regexp_extract(t, _PAT, i) for i in (1, 2, 3, 4)], groups)
    return V.let(t, body)


def _decimal_text(x: Column) -> Column:
    if V.is_known(x):       # the typed fast path: never a {$numberDecimal} wrapper
        return V._tvg(x, "string")
    return F.coalesce(F.try_variant_get(x, "$['$numberDecimal']", "string"), F.try_variant_get(x, "$", "string"))


def _finite(d: Column) -> Column:
    return ~F.isnan(d) & (F.abs(d) != F.lit(float("inf")))


def read(x: Column, c: Column) -> Column:
    """The decimal of a bound number ``x`` of type code ``c`` (:data:`values.CODE`): a
    decimal rounded to 34 digits, an int or a long exactly, a double to 15 digits ties to even (as
    ``Decimal128(double)``: :func:`_double_text` rounded); NULL for a NaN or infinite double."""
    dbl = V._num_double(x)
    text = (F.when(c == _CODE["decimal"], _decimal_text(x))
            .when(c == _CODE["double"], _double_text(dbl))
            .when(c.isin(_CODE["int"], _CODE["long"]), V._tvg(x, "bigint").cast("string")))
    return rounded(parse(text), F.when(c == _CODE["double"], F.lit(15)).otherwise(F.lit(DIGITS)))


def whole_or_shortest(d: Column) -> Column:
    """The text of a finite DOUBLE ``d``: its integer when it is one within a long (exact), else
    its shortest text (MongoDB would take its exact binary value)."""
    def body(d: Column) -> Column:
        whole = (d == F.rint(d)) & (F.abs(d) < F.lit(2.0 ** 63))
        return F.when(whole, d.cast("bigint").cast("string")).otherwise(d.cast("string"))
    return V.let(d, body)


def read_exact(x: Column, c: Column) -> Column:
    """The decimal of a bound decimal, int, long or double ``x`` of type code ``c``, unrounded: a
    decimal's or an integer's exact value, a double's too when it is an integer within a long,
    else its shortest text (MongoDB compares a double's exact binary value); NULL for NaN and
    the infinities."""
    return parse(F.when(c == _CODE["decimal"], _decimal_text(x))
                 .when(c == _CODE["double"], whole_or_shortest(V._num_double(x)))
                 .otherwise(V._tvg(x, "bigint").cast("string")))


def compare(a: Column, b: Column) -> Column:
    """-1, 0 or 1 as decimal ``a`` is below, equal to or above ``b``, exactly: by sign, then the
    exponent of the leading digit, then the digits (trailing zeros dropped); NULL when either is."""
    def body(a: Column, b: Column) -> Column:
        def norm(s: Column) -> tuple[Column, Column, Column]:
            d = F.regexp_replace(s["d"], "0+$", "")
            zero = s["d"] == "0"
            sign = F.when(zero, F.lit(0)).when(s["n"], F.lit(-1)).otherwise(F.lit(1))
            return sign, F.length(s["d"]) + s["e"], d         # leading digit's place, digits
        (sa, pa, da), (sb, pb, db) = norm(a), norm(b)
        mag = (F.when(pa != pb, F.when(pa < pb, F.lit(-1)).otherwise(F.lit(1)))
               .when(da != db, F.when(da < db, F.lit(-1)).otherwise(F.lit(1))).otherwise(F.lit(0)))
        return (F.when(a.isNull() | b.isNull(), F.lit(None).cast("int"))
                .when(sa != sb, F.when(sa < sb, F.lit(-1)).otherwise(F.lit(1)))
                .when(sa == 0, F.lit(0)).otherwise(mag * sa))
    return V.let_many([a, b], body)


def read_decimal(x: Column) -> Column:
    """:func:`read` of a bound number known to be a decimal (no branch for the other types)."""
    return rounded(parse(_decimal_text(x)))


def _product_side(x: Column, y: Column, z: Column) -> Column:
    """The sign of ``x * y - z``, exactly, for ``z`` near ``x * y`` (Dekker's product ``p + err``
    with no fused multiply-add; ``p - z`` is exact there)."""
    def body(x: Column, y: Column, z: Column) -> Column:
        def split(v: Column) -> tuple[Column, Column]:
            c = F.lit(134217729.0) * v
            hi = c - (c - v)
            return hi, v - hi
        xh, xl = split(x)
        yh, yl = split(y)
        p = x * y
        err = ((xh * yh - p) + xh * yl + xl * yh) + xl * yl
        return F.signum((p - z) + err)
    return _bind([x, y, z], body)


def _double_text(d: Column) -> Column:
    """17 significant digits of finite DOUBLE ``d`` (``%.16e``), their last two corrected when
    they read ``50``: Java prints the shortest text that reads back as ``d``, then zeros, so a
    ``5`` in 16th place may stand for a value above or below that tie. The tie ``T = (10 M + 5) *
    10**q`` is ``K * 10**(q + 1) / 2`` with ``K = 2 M + 1`` exact in a double, so comparing ``2 |d|``
    with ``K * 10**(q+1)`` exactly (:func:`_product_side`, powers of ten up to 10**22, i.e. ``|d|``
    from about 1e-8 to 1e37) decides ``51`` or ``49``, and rounding to 15 digits sees the side
    of the tie the binary value is on; outside that range a tie rounds to even. NULL for NaN and
    the infinities."""
    def body(t: Column, d: Column) -> Column:
        mant = F.regexp_replace(F.substring_index(t, "e", 1), "[-.]", "")       # 17 digits

        def tied(mant: Column, q1: Column) -> Column:                        # q1: q + 1
            k = F.substr(mant, F.lit(1), F.lit(15)).cast("double") * F.lit(2.0) + F.lit(1.0)
            twice = F.abs(d) * F.lit(2.0)
            ten = F.pow(F.lit(10.0), F.abs(q1))
            up = q1 >= 0        # K * 10**q1 against 2|d|, or 2|d| * 10**-q1 against K
            side = F.when(F.abs(q1) <= 22, _product_side(F.when(up, k).otherwise(twice), ten,
                                                          F.when(up, twice).otherwise(k))
                          * F.when(up, F.lit(-1.0)).otherwise(F.lit(1.0)))
            last = F.when(side > 0, F.lit("51")).when(side < 0, F.lit("49")).otherwise(F.lit("50"))
            return F.concat(F.when(d < 0, F.lit("-")).otherwise(F.lit("")), F.substr(mant, F.lit(1), F.lit(15)),
                            last, F.lit("E"), (q1 - 2).cast("string"))
        tie = F.substr(mant, F.lit(16), F.lit(2)) == "50"
        return F.when(tie, _bind([mant, F.substring_index(t, "e", -1).cast("int") - 14], tied)).otherwise(t)
    # a zero is 0 at exponent 0, not 15 zero digits (MongoDB's Decimal128(double) does not round it)
    return _bind([F.when(d == 0, F.lit("0")).when(_finite(d), F.format_string("%.16e", d)), d], body)


def from_double(d: Column) -> Column:
    """The decimal of a DOUBLE column as MongoDB's ``Decimal128(double)``: 15 significant digits,
    ties to even (NULL for NaN and the infinities)."""
    return rounded(parse(_double_text(d)), 15)


def unreadable(x: Column, c: Column) -> Column:
    """Whether :func:`read` gives NULL for a number: a NaN or infinite double or decimal."""
    return (((c == _CODE["double"]) & ~_finite(V._num_double(x)))
            | ((c == _CODE["decimal"]) & ~_decimal_text(x).rlike(_PAT)))


def text_is_zero(x: Column) -> Column:
    """Whether a bound number of decimal type is zero (from its text: no parse)."""
    return _decimal_text(x).rlike(r"^[+-]?0*\.?0*([eE][+-]?[0-9]+)?$")


def rounded(s: Column, digits: int | Column = DIGITS, sticky: Column | None = None) -> Column:
    """``s`` rounded to ``digits`` (at most 34) significant digits, ties to even (``sticky``:
    whether nonzero digits follow ``d``, for a quotient that is not exact)."""
    n = digits if isinstance(digits, Column) else F.lit(digits)

    def body(s: Column) -> Column:
        d, e = s["d"], s["e"]
        k = F.length(d) - n
        q, r = F.substr(d, F.lit(1), n), F.substr(d, n + 1, k)
        half = F.rpad(F.lit("5"), k, "0")
        odd = F.substr(q, n, F.lit(1)).isin("1", "3", "5", "7", "9")
        up = (r > half) | ((r == half) & (odd if sticky is None else (odd | sticky)))

        def done(up: Column) -> Column:
            q1 = (q.cast(f"decimal({DIGITS},0)") + F.lit(1)).cast("string")
            carry = up & (F.length(q1) > n)          # 99...9 + 1: one digit more
            kept = F.when(carry, F.substr(q1, F.lit(1), n)).when(up, q1).otherwise(q)
            return make(s["n"], kept, e + k + F.when(carry, F.lit(1)).otherwise(F.lit(0)))
        return F.when(k <= 0, s).otherwise(V.let(up, done))
    return V.let(s, body)


def absolute(s: Column) -> Column:
    return V.let(s, lambda s: F.when(s.isNotNull(), make(F.lit(False), s["d"], s["e"])))


def constant(text: str) -> Column:
    """A decimal constant, rounded to 34 digits as MongoDB's ``Decimal128(text)``."""
    v = decimal.Context(prec=DIGITS, rounding=decimal.ROUND_HALF_EVEN).plus(decimal.Decimal(text))
    sign, digits, exp = v.as_tuple()
    return make(F.lit(bool(sign)), F.lit("".join(map(str, digits)).lstrip("0") or "0"), F.lit(exp))


def is_zero(s: Column) -> Column:
    return s["d"] == "0"


def negate(s: Column) -> Column:
    return V.let(s, lambda s: F.when(s.isNotNull(), make(~s["n"], s["d"], s["e"])))


def mul(a: Column, b: Column) -> Column:
    """``a * b`` rounded: the exact product of two 34-digit numbers from 17-digit halves."""
    def halves(d: Column) -> tuple[Column, Column]:
        p = F.lpad(d, 2 * 17, "0")
        return _sub(p, 1, 17).cast("decimal(17,0)"), _sub(p, 18, 17).cast("decimal(17,0)")

    def body(a: Column, b: Column) -> Column:
        h1, l1 = halves(a["d"])
        h2, l2 = halves(b["d"])

        def with_low(cs: Column) -> Column:            # l1*l2, 34 digits
            def with_mid(bs: Column) -> Column:         # h1*l2 + l1*h2 + carry, 35 digits
                hi = (h1 * h2 + _sub(bs, 1, 18).cast("decimal(18,0)")).cast("string")
                digits = _strip(F.concat(hi, _sub(bs, 19, 17), _sub(cs, 18, 17)))
                return make(a["n"] != b["n"], digits, a["e"] + b["e"])
            mid = h1 * l2 + l1 * h2 + _sub(cs, 1, 17).cast("decimal(17,0)")
            return V.let(F.lpad(mid.cast("string"), 35, "0"), with_mid)
        return V.let(F.lpad((l1 * l2).cast("string"), 34, "0"), with_low)
    return rounded(V.let_many([a, b], body))


def add(a: Column, b: Column) -> Column:
    """``a + b`` rounded. Operands whose leading digits lie more than 36 places apart give the
    larger one (the smaller is below half a unit of the result's last digit); else both are
    aligned to at most 70 digits and added in 35-digit halves."""
    def body(a: Column, b: Column) -> Column:
        ta, tb = a["e"] + F.length(a["d"]), b["e"] + F.length(b["d"])
        e = F.least(a["e"], b["e"])

        def aligned(s: Column) -> Column:
            return F.lpad(F.concat(s["d"], F.repeat(F.lit("0"), s["e"] - e)), 2 * _HALF, "0")

        def exact(x: Column, y: Column) -> Column:
            xh, xl = (F.substr(x, F.lit(p), F.lit(_HALF)).cast("decimal(35,0)") for p in (1, _HALF + 1))
            yh, yl = (F.substr(y, F.lit(p), F.lit(_HALF)).cast("decimal(35,0)") for p in (1, _HALF + 1))
            same = a["n"] == b["n"]
            x_ge = x >= y                       # same length: text order is numeric order
            # same signs: add the magnitudes; else the smaller from the larger
            lo = F.when(same, xl + yl).when(x_ge, xl - yl).otherwise(yl - xl)
            hi = F.when(same, xh + yh).when(x_ge, xh - yh).otherwise(yh - xh)
            neg = F.when(same | x_ge, a["n"]).otherwise(b["n"])

            def carried(lo: Column, hi: Column) -> Column:
                fix = F.when(lo >= _base(), F.lit(1)).when(lo < 0, F.lit(-1)).otherwise(F.lit(0))
                digits = _strip(F.concat((hi + fix).cast("string"),
                                         F.lpad((lo - fix * _base()).cast("string"), _HALF, "0")))
                return V.let(digits, lambda dg: make(neg & (dg != "0"), dg, e))
            return V.let_many([lo, hi], carried)

        return (F.when(is_zero(a) & is_zero(b), make(a["n"] & b["n"], F.lit("0"), e))
                .when(is_zero(a), _widened(b, e)).when(is_zero(b), _widened(a, e))
                .when(ta - tb > 36, _widened(a, e)).when(tb - ta > 36, _widened(b, e))
                .otherwise(V.let_many([aligned(a), aligned(b)], exact)))
    return rounded(V.let_many([a, b], body))


def _widened(s: Column, e: Column) -> Column:
    """``s`` at the exponent nearest ``e`` (not above its own) with at most 34 digits: the sum
    of ``s`` and a zero, or a number too small to reach its last digit, at exponent ``e``."""
    z = F.least(s["e"] - e, F.greatest(F.lit(0), DIGITS - F.length(s["d"])))
    return F.when(s["d"] == "0", make(s["n"], s["d"], e)).otherwise(
        make(s["n"], F.concat(s["d"], F.repeat(F.lit("0"), z)), s["e"] - z))


def sub(a: Column, b: Column) -> Column:
    return add(a, negate(b))


def div(a: Column, b: Column) -> Column:
    """``a / b`` rounded (``b`` not zero): long division of ``a``'s digits, with zeros appended
    so that the quotient has at least 36, by ``b``'s, four digits at a time; the remainder
    decides ties."""
    def body(a: Column, b: Column) -> Column:
        la, lb = F.length(a["d"]), F.length(b["d"])
        z = F.greatest(F.lit(0), lb - la + 36)
        num = F.concat(a["d"], F.repeat(F.lit("0"), z))
        steps = F.ceil(F.length(num) / 4).cast("int")

        def divided(num: Column) -> Column:
            divisor = b["d"].cast(f"decimal({DIGITS},0)")
            init = F.struct(F.lit("").alias("q"), F.lit(0).cast(f"decimal({DIGITS},0)").alias("r"))

            def step(acc: Column, i: Column) -> Column:
                x = (acc["r"] * F.lit(decimal.Decimal(10000)) + F.substr(num, i * 4 + 1, F.lit(4)).cast("decimal(4,0)"))
                x = x.cast("decimal(38,0)")
                q = F.floor(x / divisor).cast("decimal(5,0)")     # may be one too many (rounded quotient)
                r = x - q * divisor
                q2 = F.when(r < 0, q - 1).otherwise(q)
                r2 = F.when(r < 0, r + divisor).otherwise(r)
                return F.struct(F.concat(acc["q"], F.lpad(q2.cast("string"), 4, "0")).alias("q"),
                                r2.cast(f"decimal({DIGITS},0)").alias("r"))

            out = F.aggregate(F.sequence(F.lit(0), steps - 1), init, step)
            return V.let(out, lambda o: V.let(make(a["n"] != b["n"], _strip(o["q"]), a["e"] - z - b["e"]),
                                              lambda q: ideal(q, o["r"] != 0)))

        def ideal(q: Column, inexact: Column) -> Column:
            # an exact quotient of at most 34 digits: its trailing zeros dropped toward the ideal
            # exponent a.e - b.e (IEEE 754), and as many more as 34 digits need; else rounded
            d = q["d"]
            zeros = F.length(d) - F.length(F.regexp_replace(d, "0+$", ""))
            drop = F.greatest(F.least(zeros, a["e"] - b["e"] - q["e"]), F.length(d) - DIGITS)
            exact = ~inexact & (F.length(d) - zeros <= DIGITS)
            return F.when(exact, make(q["n"], F.substr(d, F.lit(1), F.length(d) - drop), q["e"] + drop)).otherwise(
                rounded(q, sticky=inexact))

        padded = F.lpad(num, steps * 4, "0")
        zero = make(a["n"] != b["n"], F.lit("0"), a["e"] - b["e"])      # 0 / b at the ideal exponent
        return F.when(is_zero(a), zero).otherwise(V.let(padded, divided))
    return V.let_many([a, b], body)
