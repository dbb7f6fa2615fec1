"""Where the data that ships with gpulint lives: rules/ and schemas/.

In a wheel they are packaged as gpulint/_data/{rules,schemas}; in a source checkout
(or an editable install) they are the top-level rules/ and schemas/ folders.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent.parent  # gpulint/ (this module is gpulint/lint/data.py)


@cache
def data_dir(name: str) -> Path:
    for candidate in (_PACKAGE / "_data" / name, _PACKAGE.parent / name):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError(f"gpulint is installed without its {name}/ data (looked in {_PACKAGE / '_data'})")
