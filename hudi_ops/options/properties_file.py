"""The option files and flags a job's options come from: `k=v` flags (`--hoodie-conf`), a `--props` file as
Hudi's utilities read it, and the Java `Properties` text hoodie.properties is written in."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping

from hudi_ops.errors import ConfigError, InvalidTableError


def parse_key_values(items: Iterable[str]) -> dict[str, str]:
    """Parse `k=v` strings (the CLI's --hoodie-conf) into a dict, naming the malformed one."""
    out: dict[str, str] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise ConfigError(f"--hoodie-conf {item!r} is not key=value; write e.g. hoodie.table.name=trips")
        out[key.strip()] = value.strip()
    return out


def command_line_options(props_path: str | None, hoodie_conf: Mapping[str, str]) -> dict[str, str]:
    """A `--props` file, then the `--hoodie-conf k=v` options (they win), as Hudi's utilities read them."""
    out: dict[str, str] = {}
    if props_path:
        try:
            with open(props_path) as f:
                out.update(parse_props_file(f.read()))
        except OSError as e:
            raise ConfigError(f"cannot read --props {props_path!r}: {e.strerror or e}") from None
    out.update(hoodie_conf)
    return out


def props_file_text(options: Mapping[str, str]) -> str:
    """`options` as a `--props` file that `parse_props_file` (and Hudi's utilities) read back unchanged;
    a key or value that file cannot hold (a line break, blanks at its ends or in a row) is refused."""
    lines = []
    for key, value in sorted(options.items()):
        line = f"{key}={value}"
        if parse_props_file(line) != {key: value}:
            raise ConfigError(f"the value of option {key} cannot be written to a properties file (line breaks, or "
                              "blanks at its ends or in a row): change it, or give the setting another way")
        lines.append(f"{line}\n")
    return "".join(lines)


def parse_props_file(text: str) -> dict[str, str]:
    """A `--props` file as Hudi's utilities read it (DFSPropertiesConfiguration), which is not Java's
    `Properties`: no escapes or continuations; `#` comments; runs of blanks become one space; the key
    ends at the first `=`, or at the first blank in a line without one."""
    out: dict[str, str] = {}
    for raw in text.splitlines():
        line = " ".join(raw.split())
        if not line or line.startswith("#") or ("=" not in line and " " not in line):
            continue
        key, _, value = line.partition("=" if "=" in line else " ")
        out[key.strip()] = value.strip()
    return out


# -- Java Properties text ----------------------------------------------------------------------------

_WS = " \t\f"
_UNESCAPES = {"t": "\t", "n": "\n", "r": "\r", "f": "\f"}


def parse_properties(text: str) -> dict[str, str]:
    """Parse Java `Properties` text as `Properties.load` does; later duplicates win."""
    out: dict[str, str] = {}
    for line in _logical_lines(text):
        key, value = _split_key_value(line)
        out[key] = value
    return out


def _logical_lines(text: str) -> Iterator[str]:
    physical = re.split(r"\r\n|\r|\n", text)
    i = 0
    while i < len(physical):
        line = physical[i].lstrip(_WS)
        i += 1
        if not line or line[0] in "#!":  # comments never continue onto the next line
            continue
        if line == "\\":  # continues nothing: the next line starts afresh, comment or not (JDK 9+)
            continue
        while _continues(line):
            line = line[:-1]
            if i == len(physical):
                break
            line += physical[i].lstrip(_WS)
            i += 1
        yield line


def _continues(line: str) -> bool:
    """A line ending in an odd number of backslashes continues on the next one."""
    return (len(line) - len(line.rstrip("\\"))) % 2 == 1


def _split_key_value(line: str) -> tuple[str, str]:
    key_end, value_start, has_sep, backslash = len(line), len(line), False, False
    for i, c in enumerate(line):
        if not backslash and c in "=:":
            key_end, value_start, has_sep = i, i + 1, True
            break
        if not backslash and c in _WS:
            key_end, value_start = i, i + 1
            break
        backslash = c == "\\" and not backslash
    j = value_start
    while j < len(line):  # skip blanks and at most one separator after a blank-terminated key
        c = line[j]
        if c not in _WS:
            if has_sep or c not in "=:":
                break
            has_sep = True
        j += 1
    return _unescape(line[:key_end]), _unescape(line[j:])


def _unescape(s: str) -> str:
    if "\\" not in s:
        return s
    out: list[str] = []
    i = 0
    while i < len(s):
        c = s[i]
        i += 1
        if c != "\\":
            out.append(c)
            continue
        if i == len(s):  # a lone trailing backslash escapes nothing
            break
        c = s[i]
        i += 1
        if c == "u":
            code = s[i:i + 4]
            if len(code) < 4 or any(h not in "0123456789abcdefABCDEF" for h in code):
                raise InvalidTableError(f"malformed \\uXXXX escape in properties text {s!r}; fix the file")
            out.append(chr(int(code, 16)))
            i += 4
        else:
            out.append(_UNESCAPES.get(c, c))
    text = "".join(out)
    # \uXXXX escapes are UTF-16 code units: join surrogate pairs into one character
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "surrogatepass")
