"""A progress bar that shows nothing, for library calls made without one (tqdm's interface)."""
from __future__ import annotations


class SilentProgress:
    """Stands in for a tqdm bar: the calls a long job makes on its bar, doing nothing."""

    total = None

    def update(self, n: int = 1) -> None:
        pass

    def set_description_str(self, text: str) -> None:
        pass

    def refresh(self) -> None:
        pass
