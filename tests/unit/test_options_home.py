"""Every `hoodie.*` key hudi-ops reads or sets has one home, hudi_ops.options: no module elsewhere in the package
writes a key's name out, and the home writes each name once."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest

import hudi_ops
from hudi_ops.options import keys
from hudi_ops.options.config_property import ConfigKey

pytestmark = pytest.mark.unit

PACKAGE = Path(hudi_ops.__file__).parent
HOME = PACKAGE / "options"
#: a string that begins with a key's name (`"hoodie.x"`, `f"hoodie.x..."`); hoodie.properties is a file's name
LITERAL = re.compile(r"""(?<![\w.])[fr]?["']hoodie\.(?!properties\b)[\w.*{]""")


def _literals(path: Path) -> list[str]:
    return [f"{n}: {line.strip()}" for n, line in enumerate(path.read_text().splitlines(), 1) if LITERAL.search(line)]


def test_no_module_outside_the_options_home_writes_a_hoodie_key_out():
    found = [f"{path.relative_to(PACKAGE)}:{hit}" for path in sorted(PACKAGE.rglob("*.py")) if HOME not in path.parents
             for hit in _literals(path)]
    assert found == []


def test_the_check_sees_a_key_written_out(tmp_path):
    module = tmp_path / "m.py"
    module.write_text('A = "hoodie.table.name"\nB = f"hoodie.metrics.{x}"\nC = "a hoodie.properties file"\n'
                      'D = "hoodie.properties"\n')
    assert _literals(module) == ['1: A = "hoodie.table.name"', '2: B = f"hoodie.metrics.{x}"']


def test_the_home_writes_each_name_once():
    names = Counter(re.findall(r"""["'](hoodie\.[\w.]+)["']""", "".join(p.read_text() for p in HOME.glob("*.py"))))
    assert [name for name, count in names.items() if count > 1] == []


def test_every_typed_key_is_a_hoodie_key_with_its_aliases_apart():
    typed = [v for group in vars(keys).values() if isinstance(group, type) for v in vars(group).values()
             if isinstance(v, ConfigKey)]
    typed += [v for v in vars(keys).values() if isinstance(v, ConfigKey)]
    assert len(typed) > 80 and all(k.name.startswith("hoodie.") for k in typed)
    assert all(k.name not in k.aliases for k in typed)
