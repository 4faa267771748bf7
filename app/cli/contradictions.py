"""`engram contradictions`: memories that disagree, how they were resolved, and resolving them."""

from __future__ import annotations
