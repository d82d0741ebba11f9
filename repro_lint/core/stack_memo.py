"""Memoised recursion on an explicit stack, for questions about the project whose answers depend on
the answers to the same question about other things (what a re-exported name denotes, what an alias
of an alias names): chains as long as the input make no Python recursion, and each answer is worked
out once however many ways lead to it.

A computation is a generator: it yields the keys whose answers it needs, is sent each answer back,
and returns its own. A key asked for again while its answer is still being worked out (a cycle)
gets the `cycle` answer. Such answers depend on where the walk began, so an answer is kept for later
walks only when it read no key still in progress below it on the stack (Tarjan's low link); the
others are reused within the walk while the key they read is in progress, then dropped.
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Hashable
from dataclasses import dataclass
from typing import Generic, TypeVar

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")

Steps = Generator[K, V, V]


@dataclass
class _Frame(Generic[K, V]):
    key: K | None  # None for the walk's root
    steps: Steps[K, V]
    index: int
    # The lowest stack index of a key in progress whose `cycle` answer this frame's answer read.
    low: int


class StackMemo(Generic[K, V]):
    def __init__(self, compute: Callable[[K], Steps[K, V]], cycle: V) -> None:
        self._compute = compute
        self._cycle = cycle
        self._answers: dict[K, V] = {}

    def get(self, key: K) -> V:
        """The answer for `key`."""
        if key in self._answers:
            return self._answers[key]
        return self.run(self._ask(key))

    @staticmethod
    def _ask(key: K) -> Steps[K, V]:
        return (yield key)

    def run(self, root: Steps[K, V]) -> V:
        """Run `root`, working out each key it asks for, and the keys those ask for, on a stack."""
        reply: V | None = None
        # Most walks ask only keys already answered: those need no stack.
        while True:
            try:
                asked = root.send(reply)  # type: ignore[arg-type]
            except StopIteration as done:
                return done.value  # type: ignore[no-any-return]
            if asked not in self._answers:
                return self._walk(root, asked)
            reply = self._answers[asked]

    def _walk(self, root: Steps[K, V], asked: K) -> V:
        """`run`, from where `root` asks `asked`, the first key not answered yet."""
        stack: list[_Frame[K, V]] = [_Frame(None, root, 0, 0), _Frame(asked, self._compute(asked), 1, 1)]
        in_progress: dict[K, int] = {asked: 1}
        # Answers that read a key in progress: by key, with the lowest such key's stack index; and
        # the keys waiting on each stack index.
        provisional: dict[K, tuple[V, int]] = {}
        waiting: dict[int, list[K]] = {}
        reply: V | None = None
        while True:
            frame = stack[-1]
            try:
                asked = frame.steps.send(reply)  # type: ignore[arg-type]
            except StopIteration as done:
                stack.pop()
                answer: V = done.value
                if frame.key is None:
                    return answer
                del in_progress[frame.key]
                depending = waiting.pop(frame.index, [])
                if frame.low >= frame.index:
                    self._answers[frame.key] = answer
                    for key in depending:
                        del provisional[key]
                else:
                    provisional[frame.key] = (answer, frame.low)
                    for key in depending:
                        provisional[key] = (provisional[key][0], frame.low)
                    waiting.setdefault(frame.low, []).extend([*depending, frame.key])
                stack[-1].low = min(stack[-1].low, frame.low)
                reply = answer
                continue
            if asked in self._answers:
                reply = self._answers[asked]
            elif asked in in_progress:
                frame.low = min(frame.low, in_progress[asked])
                reply = self._cycle
            elif asked in provisional:
                reply, low = provisional[asked]
                frame.low = min(frame.low, low)
            else:
                index = len(stack)
                in_progress[asked] = index
                stack.append(_Frame(asked, self._compute(asked), index, index))
                reply = None
