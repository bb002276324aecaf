"""A cluster-mode job's driver as its cluster reports it: one interface over YARN's ResourceManager
(hudi_ops.spark.yarn_applications) and the Kubernetes API (hudi_ops.spark.kubernetes_pods).

A task finds the drivers its tag names (every try of a task has the same tag), asks how one is, follows it
to its end, and ends the live ones: what its `on_kill`, a retry that takes up an earlier try's driver
(hudi_ops.airflow.operators.resumable) and a retry that submits anew need, whatever the cluster.
"""

from __future__ import annotations

import time
import urllib.error
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Protocol

from hudi_ops.spark import kubernetes_pods
from hudi_ops.spark import yarn_applications as yarn
from hudi_ops.spark.kubernetes_pods import KubernetesTarget


class Driver(Protocol):
    """A YARN application (its id) or a Kubernetes driver pod (its name)."""

    @property
    def id(self) -> str: ...

    @property
    def live(self) -> bool: ...

    @property
    def succeeded(self) -> bool: ...

    @property
    def elapsed_ms(self) -> int: ...

    def ended_as(self) -> str: ...


@dataclass(frozen=True)
class Gone:
    """A driver the cluster no longer reports (YARN forgets the oldest ended applications; Kubernetes removes
    ended pods): how it ended is for its result to say."""

    id: str
    live: bool = False
    succeeded: bool = False
    elapsed_ms: int = 0

    def ended_as(self) -> str:
        return "unknown: the cluster no longer reports it"


class ClusterDrivers(Protocol):
    @property
    def where(self) -> str:
        """The cluster's address, for a task's log."""

    def tagged(self, tag: str) -> list[Driver]:
        """Every driver tagged `tag`, live or ended, in the order they were submitted. OSError: no answer."""

    def get(self, driver_id: str) -> Driver | None:
        """One driver as the cluster reports it now; None: it no longer does. OSError: no answer."""

    def end_live(self, tag: str, *, timeout_s: float) -> list[str] | None:
        """End the live drivers tagged `tag`: their ids; None: nothing says how to reach the cluster."""


@dataclass(frozen=True)
class YarnApplications:
    rm_urls: tuple[str, ...]

    @property
    def where(self) -> str:
        return f"the ResourceManager at {self.rm_urls[0]}"

    def tagged(self, tag: str) -> list[Driver]:
        return list(yarn.tagged(self.rm_urls, tag))

    def get(self, driver_id: str) -> Driver | None:
        return yarn.application(self.rm_urls, driver_id)

    def end_live(self, tag: str, *, timeout_s: float) -> list[str] | None:
        return yarn.kill_tagged(self.rm_urls, tag, timeout_s=timeout_s)


@dataclass(frozen=True)
class KubernetesDrivers:
    target: KubernetesTarget
    env: Mapping[str, str] = field(repr=False, default_factory=dict)  # where the kubeconfig is

    @property
    def where(self) -> str:
        return f"the Kubernetes API at {self.target.server}, namespace {self.target.namespace}"

    def tagged(self, tag: str) -> list[Driver]:
        with kubernetes_pods.kubernetes_api(self.env, self.target) as api:
            if api is None:
                raise ConnectionRefusedError(kubernetes_pods.NO_CREDENTIALS)
            return list(kubernetes_pods.driver_pods(api, self.target.namespace, tag))

    def get(self, driver_id: str) -> Driver | None:
        with kubernetes_pods.kubernetes_api(self.env, self.target) as api:
            if api is None:
                raise ConnectionRefusedError(kubernetes_pods.NO_CREDENTIALS)
            return kubernetes_pods.driver_pod(api, self.target.namespace, driver_id)

    def end_live(self, tag: str, *, timeout_s: float) -> list[str] | None:
        server, deleted = kubernetes_pods.delete_labelled(self.env, self.target, tag, timeout_s=timeout_s)
        return deleted if server is not None else None


def refused(error: OSError) -> bool:
    """Whether the cluster refused the caller (asking again would not help), rather than not answering."""
    return isinstance(error, PermissionError) or (
        isinstance(error, urllib.error.HTTPError) and error.code in (401, 403))


def followed_to_its_end(cluster: ClusterDrivers, driver: Driver, *, poll_s: float, stopped: Callable[[], bool],
                        warn: Callable[[str], None]) -> Driver:
    """`driver` asked after every `poll_s` seconds until it has ended or is gone (a cluster that does not
    answer: asked again; one that refuses, PermissionError or HTTP 401/403: raised); `stopped` ends the wait
    early with InterruptedError (the task was killed)."""
    while driver.live:
        if stopped():
            raise InterruptedError(f"stopped while {driver.id} ran")
        time.sleep(poll_s)
        try:
            driver = cluster.get(driver.id) or Gone(driver.id)
        except OSError as e:
            if refused(e):
                raise
            warn(f"{cluster.where} did not answer about {driver.id} (asked again): {e}")
    return driver
