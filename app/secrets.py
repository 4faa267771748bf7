"""API keys in the system keyring, never in files. Where no keyring backend works
(a headless machine), say so instead of falling back to plain text."""

from __future__ import annotations

from services.errors import EnvironmentProblem

SERVICE = "engram"


def get_api_key(name: str) -> str | None:
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
