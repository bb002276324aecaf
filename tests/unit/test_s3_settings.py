"""An S3 store's settings: from an Airflow `aws` connection, to each process that reaches the store, never
shown."""

from __future__ import annotations

import json

import pytest

from hudi_ops.errors import ConfigError
from hudi_ops.s3_settings import S3Settings

SECRET = "not-a-real-secret-0123456789"


def connection(monkeypatch: pytest.MonkeyPatch, conn_id: str, **fields: object) -> None:
    monkeypatch.setenv(f"AIRFLOW_CONN_{conn_id.upper()}", json.dumps(fields))


def test_an_aws_connection_becomes_the_settings_of_its_store(monkeypatch):
    from hudi_ops.airflow.hooks.aws import aws_connection, s3_settings, table_s3

    connection(monkeypatch, "lake", conn_type="aws", login="AKIDEXAMPLE", password=SECRET,
               extra={"endpoint_url": "http://127.0.0.1:9000", "region_name": "eu-west-1",
                      "config_kwargs": {"s3": {"addressing_style": "path"}}})
    s3 = s3_settings("lake")
    assert s3 == S3Settings(endpoint="http://127.0.0.1:9000", region="eu-west-1", path_style=True,
                            access_key_id="AKIDEXAMPLE", secret_access_key=SECRET)
    assert SECRET not in repr(s3) and "AKIDEXAMPLE" not in repr(s3)  # a log of the value shows no key
    assert table_s3(None) is None  # no connection: each process's own AWS chain
    connection(monkeypatch, "again", **aws_connection(s3))  # what the demo gives Airflow
    assert s3_settings("again") == s3
    # the provider's per-service endpoint wins over the connection-wide one, as in the provider
    connection(monkeypatch, "lake", conn_type="aws",
               extra={"endpoint_url": "https://s3.example.com", "service_config": {"s3": {"endpoint_url":
                                                                                           "https://other.example"}}})
    assert s3_settings("lake") == S3Settings(endpoint="https://other.example")


@pytest.mark.parametrize(("fields", "named"), [
    ({"conn_type": "http", "host": "s3.example.com"}, "of type 'http'; a table on S3 needs one of type 'aws'"),
    ({"conn_type": "aws", "extra": {"endpoint_url": "127.0.0.1:9000"}}, "give it with its scheme, e.g. https://"),
    ({"conn_type": "aws", "extra": {"role_arn": "arn:aws:iam::1:role/r"}}, "sets role_arn: hudi-ops' jobs reach"),
    ({"conn_type": "aws", "login": "AKIDEXAMPLE"}, "an access key id without its secret"),
])
def test_a_connection_that_cannot_serve_s3_is_refused_naming_the_fix(monkeypatch, fields, named):
    from hudi_ops.airflow.hooks.aws import s3_settings

    connection(monkeypatch, "lake", **fields)
    with pytest.raises(ConfigError, match=named):
        s3_settings("lake")


def test_a_missing_connection_is_named_with_the_fix():
    from hudi_ops.airflow.hooks.aws import s3_settings

    with pytest.raises(ConfigError, match=r"no Airflow connection 'nowhere': add one of type 'aws'"):
        s3_settings("nowhere")


def test_each_reader_gets_the_settings_in_its_own_terms():
    from hudi_ops.spark.s3a import s3a_conf

    local = S3Settings(endpoint="http://127.0.0.1:9000", region="us-east-1", path_style=True,
                       access_key_id="AKIDEXAMPLE", secret_access_key=SECRET)
    assert local.env() == {"AWS_ACCESS_KEY_ID": "AKIDEXAMPLE", "AWS_SECRET_ACCESS_KEY": SECRET,
                           "AWS_REGION": "us-east-1", "AWS_DEFAULT_REGION": "us-east-1",
                           "AWS_ENDPOINT_URL": "http://127.0.0.1:9000", "AWS_ALLOW_HTTP": "true"}
    conf = s3a_conf(local)
    assert conf == {"spark.hadoop.fs.s3a.endpoint": "http://127.0.0.1:9000",
                    "spark.hadoop.fs.s3a.connection.ssl.enabled": "false",
                    "spark.hadoop.fs.s3a.endpoint.region": "us-east-1", "spark.hadoop.fs.s3a.path.style.access": "true"}
    assert not any(SECRET in v or "AKIDEXAMPLE" in v for v in conf.values())  # Spark settings are on argv
    assert local.hudi_rs_options()["aws_allow_http"] == "true"
    fs = local.filesystem()
    assert (fs.region, fs.type_name) == ("us-east-1", "s3")
    aws = S3Settings()  # AWS itself, keys from the chain
    assert aws.env() == {} and s3a_conf(aws) == {}
