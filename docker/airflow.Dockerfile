# One image for every hudi-ops container: the Airflow components and the Spark master and worker.
# The PySpark driver runs in the Airflow scheduler (LocalExecutor, client mode), and Spark executors
# must run the same Python minor version with the same packages, so the Spark services use this
# image too (apache/spark ships Python 3.10; hudi-ops needs 3.11+).
# Within the apache-airflow range of pyproject.toml (pip fails loudly if it is not).
ARG AIRFLOW_VERSION=3.3.2
FROM apache/airflow:${AIRFLOW_VERSION}-python3.11

USER root
# Java 17 for Spark and Hudi (a JDK: its javac builds hudi-ops' fix for Hudi 1.1.1 beside the bundle);
# procps because Spark's launch scripts call `ps`; Maven fetches Hudi's Spark bundle below. The
# symlink gives one JAVA_HOME on amd64 and arm64 (Debian's directory name ends in the architecture).
RUN apt-get update \
    && apt-get install -y --no-install-recommends openjdk-17-jdk-headless procps maven \
    && ln -s "/usr/lib/jvm/java-17-openjdk-$(dpkg --print-architecture)" /usr/lib/jvm/java-17 \
    && apt-get clean \
    && rm -rf /var/lib/apt/lists/*
ENV JAVA_HOME=/usr/lib/jvm/java-17
# Mount points of the compose file's named volumes. A new volume takes the ownership of the image's
# directory, so the airflow user (uid 50000, gid 0) can write to it.
RUN mkdir -p /opt/hudi-ops/data/hudi /opt/hudi-ops/data/landing /opt/hudi-ops/data/history /opt/airflow/auth \
        /opt/hudi-ops/jars \
    && chown -R airflow:0 /opt/hudi-ops /opt/airflow/auth \
    && chmod -R g+rwX /opt/hudi-ops /opt/airflow/auth
USER airflow

# Dependencies first, from the ranges in pyproject.toml at the versions the suite runs (constraints.txt,
# whose apache-airflow the image's AIRFLOW_VERSION must be), so that a code change does not reinstall
# PySpark. apache-airflow is named with the image's version (the base image sets AIRFLOW_VERSION), as
# Airflow's docs advise, so pip cannot move it; [postgres] keeps the driver of `postgresql+psycopg2://`.
COPY --chown=airflow:0 pyproject.toml constraints.txt /opt/hudi-ops/build/
RUN python -c "import tomllib; print('\n'.join(tomllib.load(open('/opt/hudi-ops/build/pyproject.toml', 'rb'))['project']['dependencies']))" \
        > /opt/hudi-ops/build/requirements.txt \
    && pip install --no-cache-dir "apache-airflow[postgres]==${AIRFLOW_VERSION}" -r /opt/hudi-ops/build/requirements.txt \
        -c /opt/hudi-ops/build/constraints.txt

# The package itself: the Airflow provider (entry point), operators and the Spark application.
# Owned by airflow because pip builds in the source tree. Hudi's Spark bundle is fetched with Maven
# into the image (the jobs' --jars); Maven's own cache is dropped. The jobs' class-data-sharing archive
# (hudi_ops/spark/class_sharing.py) is built last, by the image's own java and Spark.
ENV HUDI_OPS_JARS_DIR=/opt/hudi-ops/jars
COPY --chown=airflow:0 . /opt/hudi-ops/src
RUN pip install --no-cache-dir "apache-airflow[postgres]==${AIRFLOW_VERSION}" "/opt/hudi-ops/src[s3-server]" \
    && python -c "import psycopg2, pyspark, kazoo, hudi, hudi_ops" \
    && HOME=/opt/hudi-ops/build/maven-home python -m hudi_ops.jars fetch hudi s3a \
    && rm -rf /opt/hudi-ops/build/maven-home \
    && spark-submit --version \
    && python -m hudi_ops.jars fetch class-sharing
