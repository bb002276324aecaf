"""A task's Spark driver pods, found by the label of its tag and deleted through the Kubernetes API.

The counterpart of hudi_ops.spark.yarn_applications for a `k8s://` master in cluster mode. There the driver
pod is the application: Spark 3.5 makes it the owner of everything else the application creates, so that
Kubernetes' garbage collector deletes those with it, and deleting the driver pod ends the application, as
`spark-submit --kill` does. (In cluster mode BasicDriverFeatureStep names the driver pod in
`spark.kubernetes.driver.pod.name`, BasicExecutorFeatureStep.configurePod gives every executor pod an
OwnerReference to it, and submit.Client gives it the config maps and service: read in Spark 3.5.9's
spark-kubernetes jar; apache/spark docs/running-on-kubernetes.md, "Client Mode Executor Pod Garbage
Collection": with that OwnerReference, "once the driver pod is deleted from the cluster, all of the
application's executor pods will also be deleted".) The API is reached the way spark-submit
reaches it (Spark's SparkKubernetesClientFactory): at the master's address, with the credentials of the
kubeconfig's context ($KUBECONFIG, else ~/.kube/config; `spark.kubernetes.context`, else its current context),
else of the pod's service account. The official client (`kubernetes`, which the Spark provider's `k8s://`
support already needs: the `kubernetes` extra's apache-airflow-providers-cncf-kubernetes requires it) reads
both, exec plugins and rotated service-account tokens included; its answers are read as the API's JSON.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hudi_ops.errors import ConfigError
from hudi_ops.spark.cluster_mode import TAG_LABEL

if TYPE_CHECKING:
    from kubernetes.client import Configuration, CoreV1Api

#: Spark's namespace when `spark.kubernetes.namespace` is not set
DEFAULT_NAMESPACE = "default"
#: why the worker cannot reach the API
NO_CREDENTIALS = "no kubeconfig ($KUBECONFIG, ~/.kube/config) or service account"
NAMESPACE = "spark.kubernetes.namespace"
CONTEXT = "spark.kubernetes.context"
#: where Kubernetes mounts a pod's service account (its token and the API's CA)
SERVICE_ACCOUNT = Path("/var/run/secrets/kubernetes.io/serviceaccount")
#: the phases of a pod that ran to its end (restartPolicy Never, as Spark's driver pod has)
ENDED_PHASES = ("Succeeded", "Failed")
#: Spark's own label on its driver pods, and the driver's container
_DRIVER_ROLE = "spark-role=driver"
_DRIVER_CONTAINER = "spark-kubernetes-driver"


@dataclass(frozen=True)
class KubernetesTarget:
    """Where spark-submit puts a job's driver pod, from the settings spark-submit reads: the master, the namespace
    and the kubeconfig's context."""

    master: str
    namespace: str = DEFAULT_NAMESPACE
    context: str | None = None

    @classmethod
    def of(cls, master: str, conf: Mapping[str, str], connection_namespace: str | None = None) -> KubernetesTarget:
        """The job's `conf` wins over the Spark connection's `namespace` extra, as in the Spark provider."""
        return cls(master, conf.get(NAMESPACE) or connection_namespace or DEFAULT_NAMESPACE, conf.get(CONTEXT) or None)

    @property
    def server(self) -> str:
        """The API server's URL: the master's, https when it names no scheme (as Spark reads it)."""
        address = re.sub(r"(?i)^k8s://", "", self.master.strip())
        return address if "://" in address else f"https://{address}"


@dataclass(frozen=True)
class DriverPod:
    """One driver pod as the API reports it: its phase (Pending, Running, then Succeeded or Failed) and whether its
    deletion is under way (its kubelet stops it within its grace period)."""

    name: str
    phase: str
    created: str = ""  # RFC 3339, UTC: sorts as time does
    deleting: bool = False
    diagnostics: str = ""

    @classmethod
    def from_api(cls, pod: Mapping[str, Any]) -> DriverPod:
        meta, status = pod.get("metadata") or {}, pod.get("status") or {}
        return cls(name=str(meta["name"]), phase=str(status.get("phase") or "Pending"),
                   created=str(meta.get("creationTimestamp") or ""), deleting=bool(meta.get("deletionTimestamp")),
                   diagnostics=_diagnostics(status))

    @property
    def id(self) -> str:
        return self.name

    @property
    def elapsed_ms(self) -> int:
        return 0  # not reported: the task counts its own time

    @property
    def live(self) -> bool:
        """Not ended: Pending, Running, or Unknown (its node stopped reporting; the driver may still run there)."""
        return self.phase not in ENDED_PHASES

    @property
    def succeeded(self) -> bool:
        return self.phase == "Succeeded"

    @property
    def failed(self) -> bool:
        return self.phase == "Failed"

    def ended_as(self) -> str:
        """How it ended, for a task's log: its phase and why."""
        return self.phase + (f": {self.diagnostics}" if self.diagnostics else "")


def _diagnostics(status: Mapping[str, Any]) -> str:
    """The pod's reason (an eviction, say) and how Spark's driver container ended (its exit code is the job's)."""
    said = [": ".join(filter(None, (status.get("reason"), status.get("message"))))]
    for container in status.get("containerStatuses") or []:
        ended = (container.get("state") or {}).get("terminated")
        if container.get("name") == _DRIVER_CONTAINER and ended:
            said.append(f"exit code {ended.get('exitCode')} ({ended.get('reason') or 'no reason given'})")
    return "; ".join(filter(None, said))


@contextlib.contextmanager
def kubernetes_api(env: Mapping[str, str], target: KubernetesTarget) -> Iterator[CoreV1Api | None]:
    """The API at the target's server with the credentials `env` names (None: no kubeconfig and no service
    account: nothing says how to reach it)."""
    from kubernetes.client import ApiClient, CoreV1Api

    configuration = _credentials(env, target)
    if configuration is None:
        yield None
        return
    configuration.retries = 0  # one attempt, as kill_tagged makes: the caller decides what a silence means
    with ApiClient(configuration) as client:
        yield CoreV1Api(client)


def _credentials(env: Mapping[str, str], target: KubernetesTarget) -> Configuration | None:
    """The kubeconfig's credentials, else the service account's; None: neither is there."""
    from kubernetes import config
    from kubernetes.config.incluster_config import InClusterConfigLoader

    configuration = _at(target.server)
    kubeconfig = _kubeconfig(env)
    token, ca = SERVICE_ACCOUNT / "token", SERVICE_ACCOUNT / "ca.crt"
    try:
        if kubeconfig:
            # persist_config: an auth provider's refreshed token is not written back into the user's files
            config.load_kube_config(config_file=kubeconfig, context=target.context, client_configuration=configuration,
                                    persist_config=False)
        elif env.get("KUBERNETES_SERVICE_HOST") and token.is_file():
            InClusterConfigLoader(token_filename=str(token), cert_filename=str(ca),
                                  environ=env).load_and_set(configuration)
        else:
            return None
    except config.ConfigException as e:
        raise ConfigError(f"cannot reach the Kubernetes API with {kubeconfig or SERVICE_ACCOUNT}: {e}") from e
    return configuration


def _at(server: str) -> Configuration:
    """A client configuration whose server stays `server`, whatever the loaders set: they put their own back
    at every token refresh."""
    from kubernetes.client import Configuration

    class AtTheMaster(Configuration):
        @property
        def host(self) -> str:
            return server

        @host.setter
        def host(self, value: str) -> None:
            pass

    return AtTheMaster()


def _kubeconfig(env: Mapping[str, str]) -> str | None:
    """The kubeconfig files kubectl and spark-submit read: $KUBECONFIG's list, else ~/.kube/config."""
    listed = [p for p in env.get("KUBECONFIG", "").split(os.pathsep) if p]
    home = Path(env["HOME"]) if env.get("HOME") else Path.home()
    present = [p for p in listed or [str(home / ".kube" / "config")] if Path(p).expanduser().is_file()]
    return os.pathsep.join(present) or None


def driver_pods(api: CoreV1Api, namespace: str, tag: str, *, timeout_s: float = 10.0) -> list[DriverPod]:
    """Every driver pod labelled with the task's tag, live or ended, oldest first."""
    answer = _request(api, "list_namespaced_pod", namespace, label_selector=f"{TAG_LABEL}={tag},{_DRIVER_ROLE}",
                      timeout_s=timeout_s) or {}
    pods = [DriverPod.from_api(pod) for pod in answer.get("items") or []]
    return sorted(pods, key=lambda pod: (pod.created, pod.name))


def driver_pod(api: CoreV1Api, namespace: str, name: str, *, timeout_s: float = 10.0) -> DriverPod | None:
    """One driver pod as the API reports it now; None when it is gone (deleted, or removed by the cluster's
    garbage collection of ended pods)."""
    answer = _request(api, "read_namespaced_pod", name, namespace, timeout_s=timeout_s)
    return DriverPod.from_api(answer) if answer is not None else None


def delete_labelled(env: Mapping[str, str], target: KubernetesTarget, tag: str, *, timeout_s: float = 10.0,
                    ) -> tuple[str | None, list[str]]:
    """Delete the task's live driver pods: which API answered (None: no kubeconfig or service account names
    one) and the pods' names. Ended pods stay, with their logs, as Spark leaves them. Raises OSError when the
    API did not answer or refused."""
    from kubernetes.client import V1DeleteOptions

    with kubernetes_api(env, target) as api:
        if api is None:
            return None, []
        deleted = []
        for pod in driver_pods(api, target.namespace, tag, timeout_s=timeout_s):
            if not pod.live or pod.deleting:  # ended, or on its way out already
                continue
            # Background: the executors go with the driver pod (Kubernetes' default for pods, said anyway)
            if _request(api, "delete_namespaced_pod", pod.name, target.namespace, timeout_s=timeout_s,
                        body=V1DeleteOptions(propagation_policy="Background")) is not None:
                deleted.append(pod.name)  # None: it went between the list and the delete
        return target.server, deleted


def _request(api: CoreV1Api, operation: str, *args: str, timeout_s: float, **kwargs: Any) -> dict[str, Any] | None:
    """The API's JSON answer to one operation of the client; None when the object is not there (404). Raises
    PermissionError when the API refuses the credentials (401, 403), ConnectionError when it fails or does
    not answer (both OSError, as kill_tagged raises)."""
    from kubernetes.client.exceptions import ApiException
    from urllib3.exceptions import HTTPError

    server = api.api_client.configuration.host
    try:
        response = getattr(api, operation)(*args, _preload_content=False, _request_timeout=timeout_s, **kwargs)
    except ApiException as e:
        if e.status == 404:
            return None
        refused = e.status in (401, 403)
        raise (PermissionError if refused else ConnectionError)(
            f"the Kubernetes API at {server} answered {e.status} to {operation}: {_status_message(e)}") from e
    except HTTPError as e:  # refused, timed out, TLS: the client's urllib3 says which
        raise ConnectionError(f"the Kubernetes API at {server} did not answer {operation}: {e}") from e
    return json.loads(response.data)


def _status_message(error: Any) -> str:
    """The message of the Status object the API answers an error with, else the HTTP reason."""
    try:
        return str(json.loads(error.body)["message"])
    except (TypeError, ValueError, KeyError):
        return str(error.reason)
