"""hudi-ops' Java classes are compiled with javac against a Hudi bundle, once, into a jar named by their
sources, and listed beside every release's bundle: the batch fence's lock provider for every release,
the backported fix only for the release that lacks it."""

from __future__ import annotations

import shutil
import zipfile

import pytest

from hudi_ops.errors import ConfigError
from hudi_ops.maven import CACHE_ENV, jars_dir
from hudi_ops.spark import hudi_java
from hudi_ops.spark.hudi_bundle import JARS_ENV, RELEASES, VERSION_ENV, hudi_jars, hudi_spark_bundle

RELEASE = hudi_java.BACKPORTED_RELEASES[0]
OTHER = next(r for r in RELEASES if r not in hudi_java.BACKPORTED_RELEASES)


@pytest.fixture(scope="module")
def cache(tmp_path_factory):
    """A jar cache holding, under the name of each release's bundle, the bundle `make` fetched (the chosen
    release's: the classes compile against both releases hudi-ops runs); `cache.jar(release)` is built
    once for the module, as `make jars` builds it once per checkout."""
    return _Cache(tmp_path_factory.mktemp("jars"))


class _Cache:
    def __init__(self, folder):
        self.folder, self.jars = folder, {}
        fetched = jars_dir() / hudi_spark_bundle().jar_name
        assert fetched.is_file(), "make jars fetches Hudi's bundle"
        for release in (RELEASE, OTHER):
            (folder / hudi_spark_bundle(release).jar_name).symlink_to(fetched)

    def bundle(self, release: str):
        return self.folder / hudi_spark_bundle(release).jar_name

    def jar(self, release: str):
        if release not in self.jars:
            self.jars[release] = hudi_java.build(self.bundle(release), release)
        return self.jars[release]


def classes_in(jar) -> set[str]:
    with zipfile.ZipFile(jar) as z:
        return {n.removesuffix(".class").replace("/", ".") for n in z.namelist() if n.endswith(".class")}


def test_the_classes_compile_against_the_bundle_into_a_jar_built_once(cache):
    jar = cache.jar(RELEASE)
    assert jar.parent == cache.folder and RELEASE in jar.name
    # nothing half-built beside the bundles and the jars
    assert {p.name for p in cache.folder.iterdir()} == {cache.bundle(r).name for r in (RELEASE, OTHER)} | {
        j.name for j in cache.jars.values()}
    assert {c.name for c in hudi_java.CLASSES.values()} <= classes_in(jar)
    built = jar.stat().st_mtime_ns
    assert hudi_java.build(cache.bundle(RELEASE), RELEASE) == jar and jar.stat().st_mtime_ns == built


def test_a_release_with_the_fix_gets_the_fence_and_not_the_backport(cache):
    built = classes_in(cache.jar(OTHER))
    assert hudi_java.CLASSES[hudi_java.ZOOKEEPER_LOCK_PROVIDER].name in built
    assert hudi_java.CLASSES[hudi_java.PREFER_WRITER].name not in built


def test_changed_sources_name_another_jar(cache, tmp_path, monkeypatch):
    before = cache.jar(RELEASE)
    sources = tmp_path / "sources"
    shutil.copytree(hudi_java.SOURCES, sources)
    for java in sources.rglob("*.java"):
        java.write_text(java.read_text() + "\n// changed\n")
    monkeypatch.setattr(hudi_java, "SOURCES", sources)
    after = hudi_java.build(cache.bundle(RELEASE), RELEASE)
    try:
        assert after != before and after.is_file() and before.is_file()  # another hudi-ops may need the older
    finally:
        after.unlink()


def test_a_source_that_does_not_compile_fails_with_javacs_message_and_leaves_no_jar(tmp_path, monkeypatch):
    fetched = jars_dir() / hudi_spark_bundle().jar_name
    linked = tmp_path / hudi_spark_bundle(RELEASE).jar_name
    linked.symlink_to(fetched)
    sources = tmp_path / "sources"
    (sources / "fence").mkdir(parents=True)
    (sources / "fence" / "Broken.java").write_text("class Broken { int x = undefinedName; }\n")
    monkeypatch.setattr(hudi_java, "SOURCES", sources)
    with pytest.raises(ConfigError, match="undefinedName"):
        hudi_java.build(linked, RELEASE)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([linked.name, "sources"])


def test_the_jars_are_the_bundle_and_hudi_ops_classes_for_each_release(cache, monkeypatch):
    monkeypatch.setenv(CACHE_ENV, str(cache.folder))
    monkeypatch.delenv(JARS_ENV, raising=False)
    for release in (RELEASE, OTHER):
        monkeypatch.setenv(VERSION_ENV, release)
        jar = cache.jars.pop(release, None) or hudi_java.build(cache.bundle(release), release)
        jar.rename(moved := jar.with_suffix(".away"))  # not built yet
        with pytest.raises(ConfigError, match=f"Java classes for Hudi {release}"):
            hudi_jars()
        moved.rename(jar)
        cache.jars[release] = jar
        assert hudi_jars() == (str(cache.bundle(release).resolve()), str(jar.resolve()))
