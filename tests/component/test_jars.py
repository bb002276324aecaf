"""`python -m hudi_ops.jars`: every jar hudi-ops' jobs run with, listed (and fetched) in one place; `python -m
local_platform.jars` the same for the servers the development side starts."""

from __future__ import annotations

import pytest

from hudi_ops.jars import PARTS, main
from local_platform import jars as platform_jars


def test_it_lists_each_parts_jars_from_the_cache_make_filled(capsys):
    assert main(["hudi", "s3a"]) == 0
    listed = dict(line.split(": ", 1) for line in capsys.readouterr().out.splitlines())
    assert "hudi-spark3.5-bundle_2.12-" in listed["hudi"] and "hudi-ops-java-for-hudi-" in listed["hudi"]
    assert "hadoop-aws-3.3.4.jar" in listed["s3a"] and "aws-java-sdk-bundle-" in listed["s3a"]


def test_the_development_sides_servers_are_listed_by_its_own_command(capsys):
    assert main([], platform_jars.PARTS, "local_platform.jars") == 0
    listed = dict(line.split(": ", 1) for line in capsys.readouterr().out.splitlines())
    assert set(listed) == {"zookeeper", "kafka-broker", "hadoop"}
    assert all(jars.endswith("/*") for jars in listed.values())
    assert not {"zookeeper", "kafka-broker", "hadoop"} & set(PARTS)  # the product's command fetches none of them


def test_one_part_alone_is_printed_as_spark_submits_jars_flag_takes_it(capsys):
    assert main(["s3a"]) == 0
    (jars,) = capsys.readouterr().out.splitlines()
    assert jars.split(",")[0].endswith("hadoop-aws-3.3.4.jar") and ": " not in jars


def test_an_unknown_part_is_refused_naming_the_parts(capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["fetch", "hadoop-3"])
    assert exit_.value.code == 2
    assert f"unknown part(s) hadoop-3; use some of {', '.join(PARTS)}" in capsys.readouterr().err
