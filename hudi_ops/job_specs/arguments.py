"""How a job spec's fields become the Spark application's command line and back.

Each field declares its flag once (`argument(...)`); `to_argv()`, the application's parser and the
spec's own checks all read that declaration, so Airflow, the Spark application, tests and benchmarks
cannot disagree about a job's arguments.
"""

from __future__ import annotations

import argparse
import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, NoReturn, TypeVar

from hudi_ops.errors import InvalidInputError
from hudi_ops.job_specs.results import JobFailure, JobResult, ServiceResult, parse_result_line
from hudi_ops.options.properties_file import command_line_options, parse_key_values

TEXT, SWITCH, SECONDS, COUNT, PAIRS = "text", "switch", "seconds", "count", "pairs"


@dataclass(frozen=True)
class Flag:
    name: str  # e.g. --target-base-path
    help: str
    kind: str = TEXT  # text | switch (present or not) | seconds (>= 0) | count (an integer >= 0) | pairs (K=V)
    choices: tuple[str, ...] = ()
    upper: bool = False  # compared and kept in upper case, as Hudi's enums are
    metavar: str | None = None


def argument(name: str, help: str, *, default: Any = dataclasses.MISSING, kind: str = TEXT,
             choices: Sequence[str] = (), upper: bool = False, metavar: str | None = None) -> Any:
    """A spec field and its flag; a field without a default is a required flag."""
    metadata = {"flag": Flag(name, help, kind, tuple(choices), upper, metavar)}
    if kind == PAIRS:
        return field(default_factory=dict, metadata=metadata)
    return field(default=default, metadata=metadata)


def _flags(spec: type[JobSpec] | JobSpec) -> list[tuple[dataclasses.Field[Any], Flag]]:
    """The fields with flags, the job's own first, then the options every job takes."""
    common = {f.name for f in dataclasses.fields(JobSpec)}
    flagged = [(f, f.metadata["flag"]) for f in dataclasses.fields(spec) if "flag" in f.metadata]
    return sorted(flagged, key=lambda pair: pair[0].name in common)


S = TypeVar("S", bound="JobSpec")


@dataclass(frozen=True, kw_only=True)
class JobSpec:
    """One run of a job: what the operators build, `to_argv()` hands to spark-submit, and the Spark
    application parses back with `from_argv()`. Bad values raise InvalidInputError naming the flag."""

    JOB: ClassVar[str] = ""
    RESULT: ClassVar[type[JobResult] | type[ServiceResult]] = ServiceResult

    props: str | None = argument("--props", "a properties file of hoodie.* options, as Hudi's utilities read it",
                                 default=None)
    hoodie_conf: Mapping[str, str] = argument("--hoodie-conf", "a hoodie.* option, repeatable", kind=PAIRS,
                                              metavar="K=V")

    def __post_init__(self) -> None:
        for f, flag in _flags(self):
            value = getattr(self, f.name)
            if value is None or flag.kind != TEXT:
                continue
            value = str(value).strip()
            if flag.upper:
                value = value.upper()
            object.__setattr__(self, f.name, value)
            if flag.choices and value not in flag.choices:
                raise InvalidInputError(f"{self.JOB}: {flag.name} {value!r} is not valid; use one of "
                                        f"{', '.join(flag.choices)}")
            if not value:
                raise InvalidInputError(f"{self.JOB}: {flag.name} is empty; {flag.help}")
        for f, flag in _flags(self):
            if flag.kind == SECONDS and getattr(self, f.name) < 0:
                raise InvalidInputError(f"{self.JOB}: {flag.name} must be 0 or more seconds")
            if flag.kind == COUNT and getattr(self, f.name) < 0:
                raise InvalidInputError(f"{self.JOB}: {flag.name} must be 0 or more")
        object.__setattr__(self, "hoodie_conf", {str(k): str(v) for k, v in self.hoodie_conf.items()})
        self.validate()

    def validate(self) -> None:
        """Checks across fields; raise InvalidInputError naming the flags and the fix."""

    def options(self) -> dict[str, str]:
        """The run's hoodie.* options: the --props file, then --hoodie-conf (later wins)."""
        return command_line_options(self.props, self.hoodie_conf)

    def to_argv(self) -> list[str]:
        """The application's arguments, beginning with the job's name."""
        out = [self.JOB]
        for f, flag in _flags(self):
            value = getattr(self, f.name)
            if flag.kind == SWITCH:
                out += [flag.name] if value else []
            elif flag.kind == PAIRS:
                out += [arg for key, v in sorted(value.items()) for arg in (flag.name, f"{key}={v}")]
            elif value is not None:
                out += [flag.name, str(value)]
        return out

    def parse_result(self, line: str) -> JobResult | ServiceResult | JobFailure | None:
        """What a line of the job's output reports, if it is the job's final JSON line."""
        return parse_result_line(line, self.JOB, self.RESULT)

    @classmethod
    def from_argv(cls: type[S], argv: Sequence[str]) -> S:
        """The spec of `argv` (the job's name, then its flags); bad or missing flags raise InvalidInputError."""
        if not argv or argv[0] != cls.JOB:
            raise InvalidInputError(f"the arguments of {cls.JOB} begin with {cls.JOB!r}, not {list(argv[:1])}")
        parser = _Parser(prog=f"hudi_ops.spark {cls.JOB}", description=(cls.__doc__ or "").split("\n")[0])
        add_flags(parser, cls)
        parsed = vars(parser.parse_args(list(argv[1:])))
        # repeated K=V flags arrive as pairs; a later key wins, as with Hudi's --hoodie-conf
        return cls(**{name: dict(v) if isinstance(v, list) else v for name, v in parsed.items()})


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:  # a usage error is bad input, reported like any other
        raise InvalidInputError(f"{self.prog}: {message}; see --help")


def add_flags(parser: argparse.ArgumentParser, spec: type[JobSpec]) -> None:
    for f, flag in _flags(spec):
        required = f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
        if flag.kind == SWITCH:
            parser.add_argument(flag.name, dest=f.name, action="store_true", help=flag.help)
        elif flag.kind == PAIRS:
            parser.add_argument(flag.name, dest=f.name, action="append", type=_pair, default=[],
                                metavar=flag.metavar, help=flag.help)
        else:
            parser.add_argument(flag.name, dest=f.name, required=required, metavar=flag.metavar,
                                default=None if required else f.default,
                                type={SECONDS: float, COUNT: int}.get(flag.kind, str),
                                help=flag.help + (f" ({', '.join(flag.choices)})" if flag.choices else ""))


def _pair(text: str) -> tuple[str, str]:
    (key, value), = parse_key_values([text]).items()
    return key, value


def parse_job_argv(argv: Sequence[str], specs: Mapping[str, type[JobSpec]]) -> JobSpec:
    """The spec of `argv` for whichever job it names."""
    if not argv or argv[0] not in specs:
        if argv and argv[0] in ("-h", "--help"):
            raise InvalidInputError(f"usage: hudi_ops.spark JOB --help, where JOB is one of {', '.join(specs)}")
        raise InvalidInputError(f"name the job first: one of {', '.join(specs)}")
    return specs[argv[0]].from_argv(argv)
