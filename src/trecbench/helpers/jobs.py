"""Working through a list of jobs a few at a time, as model calls are made: until done or told to stop."""
from __future__ import annotations

import asyncio
from typing import Awaitable, Callable, Iterable, TypeVar

T = TypeVar("T")


async def work_through(items: Iterable[T], handle: Callable[[T], Awaitable[None]], *, workers: int,
                       stop: asyncio.Event) -> None:
    """Await `handle(item)` for each item in order, `workers` at a time; once `stop` is set, no new item starts."""
    queue: asyncio.Queue[T] = asyncio.Queue()
    for item in items:
        queue.put_nowait(item)

    async def worker() -> None:
        while not stop.is_set():
            try:
                item = queue.get_nowait()
            except asyncio.QueueEmpty:
                return
            await handle(item)

    await asyncio.gather(*(worker() for _ in range(max(1, workers))))
