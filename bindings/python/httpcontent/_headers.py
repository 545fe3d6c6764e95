"""`Headers`: a response's header fields. Pure Python: it imports nothing from the package, so
`errors` can build one for a rejected response without importing the client or models."""

from __future__ import annotations

from typing import Iterable, Iterator, Mapping


class Headers(Mapping[str, str]):
    """Response headers: ordered, multi-valued, looked up case-insensitively.
    `headers["content-type"]` is the first value; `headers.get_all(name)` every value."""

    def __init__(self, fields: Iterable[tuple[str, str]]) -> None:
        self._fields = list(fields)

    @classmethod
    def parse(cls, raw: bytes) -> Headers:
        fields: list[tuple[str, str]] = []
        for line in raw.decode("latin-1").split("\r\n"):
            name, sep, value = line.partition(":")
            if sep:
                fields.append((name, value.strip()))
        return cls(fields)

    def __getitem__(self, name: str) -> str:
        lowered = name.lower()
        for key, value in self._fields:
            if key.lower() == lowered:
                return value
        raise KeyError(name)

    def get_all(self, name: str) -> list[str]:
        lowered = name.lower()
        return [value for key, value in self._fields if key.lower() == lowered]

    def items(self) -> list[tuple[str, str]]:  # type: ignore[override]
        return list(self._fields)

    def __iter__(self) -> Iterator[str]:
        seen: set[str] = set()
        for key, _ in self._fields:
            if key.lower() not in seen:
                seen.add(key.lower())
                yield key

    def __len__(self) -> int:
        return len({key.lower() for key, _ in self._fields})

    def __repr__(self) -> str:
        return f"Headers({self._fields!r})"


__all__ = ["Headers"]
