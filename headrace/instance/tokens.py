"""The instance's security context: two roles, bearer tokens (pure Python).

``admin`` manages processors and reads everything; ``reader`` reads lists, stats, samples and
the page. Tokens come from ``HEADRACE_ADMIN_TOKEN`` / ``HEADRACE_READER_TOKEN``, else they are
generated on first start and only their salted PBKDF2 hashes are stored in
``<home>/instance/tokens.json`` (mode 0600); the plain tokens are returned once to be printed.
"""
from __future__ import annotations

import hashlib
import hmac
import json
import os
import secrets
from pathlib import Path

ROLES = ("admin", "reader")
ENV = {"admin": "HEADRACE_ADMIN_TOKEN", "reader": "HEADRACE_READER_TOKEN"}
_ITER = 100_000


def _hash(token: str, salt: bytes) -> str:
    return hashlib.pbkdf2_hmac("sha256", token.encode(), salt, _ITER).hex()


class Tokens:
    """Checks bearer tokens; :meth:`role` answers ``"admin"``, ``"reader"`` or None."""

    def __init__(self, hashes: dict[str, tuple[bytes, str]]):
        self._hashes = hashes
        self._cache: dict[str, str | None] = {}

    @classmethod
    def load(cls, home: "str | Path", env: "dict[str, str] | None" = None) -> tuple["Tokens", dict[str, str]]:
        """The tokens for ``home``; the second value holds newly generated plain tokens (print once)."""
        env = dict(os.environ if env is None else env)
        path = Path(home) / "instance" / "tokens.json"
        stored: dict = json.loads(path.read_text()) if path.exists() else {}
        hashes: dict[str, tuple[bytes, str]] = {}
        new: dict[str, str] = {}
        for role in ROLES:
            plain = env.get(ENV[role])
            if plain:
                salt = os.urandom(16)
                hashes[role] = (salt, _hash(plain, salt))
            elif role in stored:
                hashes[role] = (bytes.fromhex(stored[role]["salt"]), stored[role]["hash"])
            else:
                plain = secrets.token_urlsafe(24)
                salt = os.urandom(16)
                hashes[role] = (salt, _hash(plain, salt))
                stored[role] = {"salt": salt.hex(), "hash": hashes[role][1]}
                new[role] = plain
        if new:
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_suffix(".tmp")
            tmp.write_text(json.dumps(stored, indent=2))
            os.chmod(tmp, 0o600)
            tmp.replace(path)
        return cls(hashes), new

    def role(self, token: str | None) -> str | None:
        if not token:
            return None
        key = hashlib.sha256(token.encode()).hexdigest()   # memo key: never the plain token
        if key in self._cache:
            return self._cache[key]
        found = None
        for role in ROLES:
            salt, h = self._hashes[role]
            if hmac.compare_digest(_hash(token, salt), h):
                found = role
                break
        if len(self._cache) < 1024:
            self._cache[key] = found
        return found
