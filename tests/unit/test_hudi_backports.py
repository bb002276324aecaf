"""hudi-ops' fixes for a Hudi release are compiled with javac against a Hudi bundle, once, into a jar
named by their sources, and listed beside the bundle only for the release that needs them."""

from __future__ import annotations

import shutil
import zipfile

import pytest

from hudi_ops.errors import ConfigError
from hudi_ops.maven import CACHE_ENV, jars_dir
from hudi_ops.spark import hudi_backports
from hudi_ops.spark.hudi_bundle import JARS_ENV, RELEASES, VERSION_ENV, hudi_jars, hudi_spark_bundle

RELEASE = hudi_backports.BACKPORTED_RELEASES[0]


@pytest.fixture
def bundle(tmp_path):
    """An empty jar cache holding, under the name of RELEASE's bundle, the bundle `make` fetched (the
    chosen release's: the fixes compile against both releases hudi-ops runs)."""
    fetched = jars_dir() / hudi_spark_bundle().jar_name
    assert fetched.is_file(), "make jars fetches Hudi's bundle"
    linked = tmp_path / hudi_spark_bundle(RELEASE).jar_name
    linked.symlink_to(fetched)
    return linked


def test_the_fix_compiles_against_the_bundle_into_a_jar_of_its_classes_built_once(bundle, tmp_path):
    jar = hudi_backports.build(bundle, RELEASE)
    assert jar.parent == tmp_path and RELEASE in jar.name
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([bundle.name, jar.name])  # nothing half-built
    with zipfile.ZipFile(jar) as z:
        names = set(z.namelist())
    assert {c.replace(".", "/") + ".class" for c in hudi_backports.CLASSES.values()} <= names
    built = jar.stat().st_mtime_ns
    assert hudi_backports.build(bundle, RELEASE) == jar and jar.stat().st_mtime_ns == built


def test_changed_sources_name_another_jar(bundle, tmp_path, monkeypatch):
    before = hudi_backports.build(bundle, RELEASE)
    sources = tmp_path / "sources"
    shutil.copytree(hudi_backports.SOURCES, sources)
    for java in sources.glob("*.java"):
        java.write_text(java.read_text() + "\n// changed\n")
    monkeypatch.setattr(hudi_backports, "SOURCES", sources)
    after = hudi_backports.build(bundle, RELEASE)
    assert after != before and after.is_file() and before.is_file()  # another hudi-ops may need the older


def test_a_source_that_does_not_compile_fails_with_javacs_message_and_leaves_no_jar(bundle, tmp_path, monkeypatch):
    sources = tmp_path / "sources"
    sources.mkdir()
    (sources / "Broken.java").write_text("class Broken { int x = undefinedName; }\n")
    monkeypatch.setattr(hudi_backports, "SOURCES", sources)
    with pytest.raises(ConfigError, match="undefinedName"):
        hudi_backports.build(bundle, RELEASE)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([bundle.name, "sources"])


def test_the_jars_are_the_bundle_and_the_fix_only_for_the_release_that_lacks_it(bundle, tmp_path, monkeypatch):
    monkeypatch.setenv(CACHE_ENV, str(tmp_path))
    monkeypatch.delenv(JARS_ENV, raising=False)
    monkeypatch.setenv(VERSION_ENV, RELEASE)
    with pytest.raises(ConfigError, match="fixes for Hudi"):
        hudi_jars()
    jar = hudi_backports.build(bundle, RELEASE)
    assert hudi_jars() == (str(bundle.resolve()), str(jar.resolve()))
    other = next(r for r in RELEASES if r not in hudi_backports.BACKPORTED_RELEASES)
    (tmp_path / hudi_spark_bundle(other).jar_name).touch()
    monkeypatch.setenv(VERSION_ENV, other)
    assert hudi_jars() == (str((tmp_path / hudi_spark_bundle(other).jar_name).resolve()),)
