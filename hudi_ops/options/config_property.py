"""A `hoodie.*` key as hudi-ops reads it (Hudi's `ConfigProperty`): its exact name, Hudi's default, its parser,
its older names; and `HoodieConfig`, an immutable set of raw values read through typed keys."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Generic, TypeVar

from hudi_ops.errors import ConfigError

T = TypeVar("T")


def parse_list(text: str) -> tuple[str, ...]:
    return tuple(p.strip() for p in text.split(",") if p.strip())


@dataclass(frozen=True, slots=True)
class ConfigKey(Generic[T]):
    """One `hoodie.*` key: its exact name, Hudi's default, a parser and accepted older names."""

    name: str
    default: T | None
    parse: Callable[[str], T]
    doc: str = ""
    aliases: tuple[str, ...] = ()
    choices: tuple[str, ...] = ()
    minimum: float | None = None  # for numbers: the smallest accepted value
    below: float | None = None  # for numbers: values must stay under this bound

    def from_text(self, text: str) -> T:
        if self.choices and text.upper() not in self.choices:
            raise ConfigError(f"{self.name}={text!r} is not valid; use one of {', '.join(self.choices)}")
        try:
            value = self.parse(text.upper() if self.choices else text)
        except ValueError as e:
            raise ConfigError(f"{self.name}={text!r} is not valid: {e}") from None
        if self.minimum is not None and value < self.minimum:  # type: ignore[operator]
            raise ConfigError(f"{self.name}={text!r} is too small; use a value of at least {self.minimum:g}")
        if self.below is not None and value >= self.below:  # type: ignore[operator]
            raise ConfigError(f"{self.name}={text!r} is too large; use a value below {self.below:g}")
        return value


def str_key(name: str, default: str | None = None, doc: str = "", **kw: object) -> ConfigKey[str]:
    return ConfigKey(name, default, str, doc, **kw)  # type: ignore[arg-type]


def int_key(name: str, default: int | None, doc: str = "", **kw: object) -> ConfigKey[int]:
    return ConfigKey(name, default, int, doc, **kw)  # type: ignore[arg-type]


def list_key(name: str, doc: str = "", **kw: object) -> ConfigKey[tuple[str, ...]]:
    return ConfigKey(name, (), parse_list, doc, **kw)  # type: ignore[arg-type]


@dataclass(frozen=True)
class HoodieConfig:
    """An immutable set of raw `hoodie.*` values; typed access through `get(key)`."""

    values: Mapping[str, str] = field(default_factory=dict)

    def get(self, key: ConfigKey[T]) -> T | None:
        for name in (key.name, *key.aliases):
            text = self.values.get(name)
            if text is not None and text != "":
                return key.from_text(text)
        return key.default

    def require(self, key: ConfigKey[T]) -> T:
        value = self.get(key)
        if value is None or value == ():
            raise ConfigError(f"{key.name} is required: set it with --hoodie-conf {key.name}=...")
        return value

    def with_values(self, **pairs: str) -> HoodieConfig:
        """A new config where the given values win over this one's."""
        return HoodieConfig({**self.values, **{k: str(v) for k, v in pairs.items()}})
