"""API keys in the system keyring, never in files. Where no keyring backend works
(a headless machine), say so instead of falling back to plain text; the desktop app
then keeps the key in memory for the session only and asks again next time."""

from __future__ import annotations

from services.errors import EnvironmentProblem

SERVICE = "engram"
_SESSION_KEYS: dict[str, str] = {}


def remember_for_session(name: str, value: str) -> None:
    """Keep a key in this process's memory only (no keyring available)."""
    _SESSION_KEYS[name] = value


def get_api_key(name: str) -> str | None:
    if name in _SESSION_KEYS:
        return _SESSION_KEYS[name]
    try:
        import keyring
        from keyring.errors import KeyringError

        try:
            return keyring.get_password(SERVICE, name)
        except KeyringError:
            return None
    except ImportError:
        return None


def set_api_key(name: str, value: str) -> None:
    import keyring
    from keyring.errors import KeyringError

    try:
        keyring.set_password(SERVICE, name, value)
    except KeyringError as error:
        raise EnvironmentProblem(
            f"no usable system keyring to store the key ({error}); Engram never writes "
            "API keys to files"
        ) from None
