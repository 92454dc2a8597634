"""MongoDB regular expressions: PCRE patterns translated to Python ``re`` and Java ``Pattern``.

``$regex`` (queries), ``$regexMatch``/``$regexFind``/``$regexFindAll`` (expressions) and
``pattern`` (``$jsonSchema``) use PCRE syntax with options ``i m s x`` (``u`` accepted).
:func:`translate_regex` rewrites a pattern for the target engine; ``\\d \\w \\s \\b`` are
ASCII as in MongoDB. :func:`regex_literal` reads the Extended JSON literal
``{"$regularExpression": {"pattern": p, "options": o}}``.
"""
from __future__ import annotations

import functools
import re
from typing import Any

__all__ = ["RegexError", "regex_literal", "translate_regex", "python_flags", "compile_regex"]


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


