"""Password hashing (argon2id with argon2-cffi's defaults, RFC 9106 low
memory) and the password policy (ASVS 5 6.2: at least 10 characters, no
composition rules, long passphrases allowed, well-known passwords refused)."""

from __future__ import annotations

from functools import cache
from importlib.resources import files

import argon2
from argon2.exceptions import InvalidHashError, VerificationError, VerifyMismatchError
from pyramid.registry import Registry

MIN_LENGTH = 10
MAX_LENGTH = 1024


def make_hasher(profile: str) -> argon2.PasswordHasher:
    if profile == "test":
        # Cheapest parameters: tests hash thousands of times; never in production.
        return argon2.PasswordHasher.from_parameters(argon2.profiles.CHEAPEST)
    return argon2.PasswordHasher()


@cache
def _common_passwords() -> frozenset[str]:
    text = files("ehs_core.auth").joinpath("common_passwords.txt").read_text(encoding="utf-8")
    return frozenset(line.strip().lower() for line in text.splitlines() if line.strip())


def password_problem(password: str) -> str | None:
    """Why a new password is refused, or None if it is acceptable."""
    if len(password) < MIN_LENGTH:
        return f"Must be at least {MIN_LENGTH} characters"
    if len(password) > MAX_LENGTH:
        return f"Must be at most {MAX_LENGTH} characters"
    if password.lower() in _common_passwords() or len(set(password)) < 3:
        return "This password is too common; choose another"
    return None


class Passwords:
    """Hash and verify, with a dummy hash so an unknown email costs the same
    time as a wrong password (no timing oracle)."""

    def __init__(self, profile: str) -> None:
        self.hasher = make_hasher(profile)
        self._dummy = self.hasher.hash("dummy password for timing")

    def hash(self, password: str) -> str:
        return self.hasher.hash(password)

    def verify(self, stored: str | None, password: str) -> bool:
        try:
            return self.hasher.verify(stored or self._dummy, password) and stored is not None
        except (VerifyMismatchError, VerificationError, InvalidHashError):
            return False

    def needs_rehash(self, stored: str) -> bool:
        return self.hasher.check_needs_rehash(stored)

    def burn(self) -> None:
        """Spend one verification's time for a caller that has no hash."""
        self.verify(None, "x")


def passwords(registry: Registry) -> Passwords:
    """The application's password hasher (set up by `ehs_core.auth`, from
    `ehs.password_profile`)."""
    return registry[REGISTRY_KEY]


REGISTRY_KEY = "ehs.passwords"
