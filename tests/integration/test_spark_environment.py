"""The installed Spark runs Python UDFs over Arrow, and Hudi's bundle is built for that Spark.

A pyspark release of another Spark line than the bundle's (pyproject.toml against
hudi_ops/spark/hudi_bundle.py) would fail inside Hudi with linkage errors; this fails first.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc

from hudi_ops.job_specs import IngestSpec
from hudi_ops.options.keys import LockConfig
from hudi_ops.options.occ import PREFER_WRITER
from hudi_ops.spark import driver_jvm, hudi_java
from hudi_ops.spark.hudi_bundle import JARS_ENV, SPARK_LINE, hudi_jars, hudi_release, hudi_spark_bundle
from hudi_ops.spark.session import session_options
from tests.integration.processes import Job
from tests.tables import trips, write_source


def test_arrow_udf_runs_on_executors(spark):
    df = spark.createDataFrame([(i, f"k{i}") for i in range(100)], "id long, key string")

    def double_ids(batches):
        for b in batches:
            yield pa.RecordBatch.from_arrays([pc.multiply(b.column(0), 2), b.column(1)], names=["id", "key"])

    out = df.mapInArrow(double_ids, "id long, key string").orderBy("id").collect()
    assert [r.id for r in out] == [2 * i for i in range(100)]
    assert out[5].key == "k5"


def test_the_hudi_bundle_is_built_for_the_installed_spark(spark):
    from importlib.metadata import version

    assert spark.version.startswith(SPARK_LINE + ".") and version("pyspark") == spark.version
    assert f"spark{SPARK_LINE}-bundle" in hudi_spark_bundle().artifact
    package = spark._jvm.org.apache.hudi.DefaultSource._java_lang_class.getPackage()
    if os.environ.get(JARS_ENV):  # a Hudi of the user's own: those jars, whatever release they are
        assert list(hudi_jars()) == [str(Path(j).resolve()) for j in os.environ[JARS_ENV].split(",") if j.strip()]
        assert package.getImplementationVersion()
    else:  # the release chosen (the default unless $HUDI_OPS_HUDI_VERSION names another)
        assert hudi_jars()[0].endswith(hudi_spark_bundle().jar_name)
        assert package.getImplementationVersion() == hudi_release()


def test_hudis_prefer_writer_check_runs_as_hudi_ops_fix_where_the_release_lacks_it(spark):
    """Hudi 1.1.1's prefer-writer conflict resolution cannot order writes in flight; a job naming it runs
    hudi-ops' backport, a subclass of Hudi's, shipped beside 1.1.1's bundle and nothing else."""
    options = session_options(spark, {LockConfig.CONFLICT_RESOLUTION_STRATEGY.name: PREFER_WRITER})
    shipped = not os.environ.get(JARS_ENV) and hudi_release() in hudi_java.BACKPORTED_RELEASES
    backport = hudi_java.CLASSES[PREFER_WRITER].name
    assert options[LockConfig.CONFLICT_RESOLUTION_STRATEGY.name] == (backport if shipped else PREFER_WRITER)
    if shipped:
        # loaded the way Hudi loads the options' classes
        loaded = spark._jvm.org.apache.hudi.common.util.ReflectionUtils.getClass(backport)
        assert loaded.getSuperclass().getName() == PREFER_WRITER
    assert LockConfig.CONFLICT_RESOLUTION_STRATEGY.name not in session_options(spark, {})


def test_the_session_runs_hudis_sql_procedures(spark):
    # the procedures need Hudi's session extension, which hudi_ops.spark.session sets
    (help_text,) = spark.sql("CALL help(cmd => 'show_commits')").first()
    assert "commit_time" in help_text and "total_records_written" in help_text


def test_a_jobs_driver_maps_spark_and_hudi_classes_from_the_class_sharing_archive(tmp_path):
    """`make jars` built the archive; a spark-submit of a job maps most of Spark's and Hudi's classes from it
    (Hudi's: those its training jobs loaded)."""
    archive = driver_jvm.archive_path()
    assert archive.is_file(), "make jars builds it: python -m hudi_ops.jars fetch class-sharing"
    assert f"-XX:SharedArchiveFile={archive}" in driver_jvm.driver_java_options().split()
    log = tmp_path / "classes.log"
    write_source(tmp_path / "landing" / "a.parquet", trips("2026-11-20", range(5), ts=1))
    # the job's own driver options (Spark's extraJavaOptions) leave hudi-ops' in place
    options = f"-Xlog:class+load=info:file={log}"
    ingest = IngestSpec(base_path=str(tmp_path / "trips"), source_path=str(tmp_path / "landing"), table_name="trips",
                        record_key_field="trip_id", partition_path_field="dt", ordering_field="ts")
    code, result = Job.start(ingest.to_argv(), tmp_path / "job.log",
                             conf={"spark.driver.extraJavaOptions": options}).finish()
    assert code == 0 and result["inserts"] == 5
    # the job's log says where its time went
    assert re.search(r"hudi_ops.spark: ingest took [\d.]+ s for the JVM and Python to start, [\d.]+ s for the Spark "
                     r"session, [\d.]+ s for the job", (tmp_path / "job.log").read_text())
    # classes a JVM generates as it runs (lambdas, proxies, reflection accessors) are not in any archive
    loads = [line for line in log.read_text().splitlines() if "$$" not in line and "source: __" not in line]

    def shared(prefix):
        mine = [line for line in loads if f" {prefix}" in line]
        return sum("shared objects file" in line for line in mine), len(mine)

    for prefix in ("org.apache.spark.", "scala.", "org.apache.hudi."):
        from_archive, loaded = shared(prefix)
        assert loaded and from_archive / loaded > 0.5, (prefix, from_archive, loaded)  # most of them
