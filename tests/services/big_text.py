"""A big developer text for the tests of linear cost: prose with names and values,
fenced code, stack traces and log lines, with new words as it grows (as real notes and
pasted logs have)."""

from __future__ import annotations


def big_text(size: int) -> str:
    """About `size` characters, the same every time."""
    parts: list[str] = []
    total = 0
    serial = 0
    while total < size:
        serial += 1
        part = (
            f"The retry limit of `worker_{serial}.run` is {serial % 9} now (it was 5) and the "
            f"timeout of fetchInvoice{serial} moved from 30s to 45s last Tuesday; we will "
            f"switch billing.refund_{serial} to the queue on Friday. It is not cached.\n\n"
            f"```python\nvalue_{serial} = compute(order_id={serial}, retries=3)\n```\n\n"
            f'Traceback (most recent call last):\n  File "/srv/app/jobs_{serial}.py", line '
            f"{serial % 900}, in handler_{serial}\nKeyError: 'order_{serial}'\n\n"
            f"2024-03-12T10:00:00Z ERROR request_id={serial:012x} path=src/api/v{serial}/x.py\n\n"
        )
        parts.append(part)
        total += len(part)
    return "".join(parts)[:size]
