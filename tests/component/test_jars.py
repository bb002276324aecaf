"""`python -m hudi_ops.jars`: every jar hudi-ops runs with, listed (and fetched) in one place."""

from __future__ import annotations

import pytest

from hudi_ops.jars import PARTS, main


def test_it_lists_each_parts_jars_from_the_cache_make_filled(capsys):
    assert main(["hudi", "s3a", "zookeeper"]) == 0
    listed = dict(line.split(": ", 1) for line in capsys.readouterr().out.splitlines())
    assert "hudi-spark3.5-bundle_2.12-" in listed["hudi"] and "hudi-ops-java-for-hudi-" in listed["hudi"]
    assert "hadoop-aws-3.3.4.jar" in listed["s3a"] and "aws-java-sdk-bundle-" in listed["s3a"]
    assert listed["zookeeper"].endswith("/*")


def test_one_part_alone_is_printed_as_spark_submits_jars_flag_takes_it(capsys):
    assert main(["s3a"]) == 0
    (jars,) = capsys.readouterr().out.splitlines()
    assert jars.split(",")[0].endswith("hadoop-aws-3.3.4.jar") and ": " not in jars


def test_an_unknown_part_is_refused_naming_the_parts(capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["fetch", "hadoop-3"])
    assert exit_.value.code == 2
    assert f"unknown part(s) hadoop-3; use some of {', '.join(PARTS)}" in capsys.readouterr().err
