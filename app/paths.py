"""Where Engram keeps its data: `--data-dir`, else `ENGRAM_DATA_DIR`, else the
platform's user data folder."""

from __future__ import annotations

import os
from pathlib import Path


def resolve_data_dir(option: str | Path | None = None) -> Path:
    if option:
        return Path(option).expanduser()
    from_env = os.environ.get("ENGRAM_DATA_DIR")
    if from_env:
        return Path(from_env).expanduser()
    import platformdirs

    return Path(platformdirs.user_data_dir("engram", appauthor=False))
