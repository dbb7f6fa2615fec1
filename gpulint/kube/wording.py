"""One wording of a long list in a message: the first few names, then how many more ("a, b, c and 2 more")."""

from collections.abc import Sequence


def first_and_more(
    items: Sequence[str], shown: int = 3, *, sep: str = ", ", last: str = " and ", noun: str = ""
) -> str:
    """The first ``shown`` of ``items`` joined by ``sep``, then ``last`` and the count left out (with ``noun``
    after "more" when given); every item when they are no more than ``shown``."""
    listed = sep.join(items[:shown])
    if len(items) <= shown:
        return listed
    return f"{listed}{last}{len(items) - shown} more" + (f" {noun}" if noun else "")
