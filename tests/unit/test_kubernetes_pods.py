"""A task's driver pods found, read and deleted through the Kubernetes API, against a loopback HTTPS server that
answers as the API does (no cluster here). Its answers follow recordings of the real API:

- the PodList of a labelSelector query: rancher/docs, content/rancher/v2.x/en/k8s-in-rancher/
  horitzontal-pod-autoscaler/manage-hpa-with-kubectl/_index.md (a client-go log of `GET
  /api/v1/namespaces/default/pods?labelSelector=app%3Dhello-world` and the PodList it got), with the labels,
  container and restartPolicy Spark 3.5 gives its driver pods (its Constants and BasicDriverFeatureStep);
- the Pod a DELETE answers, its deletion under way (`deletionTimestamp`, `deletionGracePeriodSeconds`, still
  Running): kubernetes/website, content/en/docs/reference/kubernetes-api/workload-resources/pod-v1.md
  ("delete": 200 or 202 with the Pod), and kubernetes/kubernetes#5085 (graceful deletion: the pod stays while it stops);
- the 404 Status of a pod that is not there: kubernetes/community, contributors/devel/sig-architecture/
  api-conventions.md, "Response Status Kind" (a curl of GET .../pods/grafana);
- the 401 Status an API server answers a request without valid credentials (pod-v1.md above lists 401 for every
  pod operation), as a published nmap scan recorded a kube-apiserver's answer on port 6443;
- the 403 Status of a list the user may not make, as jetstack/kube-oidc-proxy's RBAC end-to-end test (its
  earlier test/e2e Test_Rbac, since rewritten as test/e2e/suite/cases/rbac/rbac.go) expected it byte for byte
  from a real API server.
"""

from __future__ import annotations

import base64
import datetime as dt
import json
import socket
import ssl
import threading
import urllib.parse
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from hudi_ops.errors import ConfigError
from hudi_ops.spark import kubernetes_pods
from hudi_ops.spark.cluster_mode import TAG_LABEL, application_tag
from hudi_ops.spark.kubernetes_pods import (
    DriverPod,
    KubernetesTarget,
    delete_labelled,
    driver_pod,
    driver_pods,
    kubernetes_api,
)

TAG = application_tag("hudi_ingest__trips", "ingest", "scheduled__2026-01-01", -1)
TOKEN = "worker-token"
NAMESPACE = "lake"
PODS = f"/api/v1/namespaces/{NAMESPACE}/pods"


def _pod(name: str, phase: str, created: str, *, exit_code: int | None = None, deleting: bool = False,
         ) -> dict[str, Any]:
    """A driver pod as the API lists it (the recorded PodList's item, with Spark's labels and container)."""
    state = {"terminated": {"exitCode": exit_code, "reason": "Error" if exit_code else "Completed"}} \
        if exit_code is not None else {"running": {"startedAt": created}}
    meta = {"name": name, "namespace": NAMESPACE, "uid": f"uid-{name}", "resourceVersion": "4066",
            "creationTimestamp": created, "labels": {TAG_LABEL: TAG, "spark-role": "driver",
                                                     "spark-app-selector": f"spark-{name[:8]}"}}
    if deleting:
        meta |= {"deletionTimestamp": "2026-01-01T00:10:30Z", "deletionGracePeriodSeconds": 30}
    return {"metadata": meta,
            "spec": {"containers": [{"name": "spark-kubernetes-driver", "image": "hudi-ops:0.1"}],
                     "restartPolicy": "Never", "terminationGracePeriodSeconds": 30},
            "status": {"phase": phase, "startTime": created,
                       "containerStatuses": [{"name": "spark-kubernetes-driver", "state": state, "ready": False,
                                              "restartCount": 0, "image": "hudi-ops:0.1"}]}}


def _pod_list(*pods: dict[str, Any]) -> dict[str, Any]:
    return {"kind": "PodList", "apiVersion": "v1", "metadata": {"resourceVersion": "6237"}, "items": list(pods)}


def _status(code: int, reason: str, message: str, **details: str) -> dict[str, Any]:
    return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure", "message": message,
            "reason": reason, **({"details": details} if details else {}), "code": code}


def _not_found(name: str) -> dict[str, Any]:
    return _status(404, "NotFound", f'pods "{name}" not found', name=name, kind="pods")


UNAUTHORIZED = _status(401, "Unauthorized", "Unauthorized")
FORBIDDEN = _status(403, "Forbidden", 'pods is forbidden: User "system:serviceaccount:lake:airflow-worker" cannot '
                    f'list resource "pods" in API group "" in the namespace "{NAMESPACE}"', kind="pods")
RUNNING = _pod("trips-ingest-1a2b-driver", "Running", "2026-01-01T00:05:00Z")
PENDING = _pod("trips-ingest-3c4d-driver", "Pending", "2026-01-01T00:07:00Z")
SUCCEEDED = _pod("trips-ingest-0f0f-driver", "Succeeded", "2026-01-01T00:01:00Z", exit_code=0)
FAILED = _pod("trips-ingest-0e0e-driver", "Failed", "2026-01-01T00:03:00Z", exit_code=3)


@dataclass
class FakeApi:
    """What the loopback API answers ((method, path) -> (status, JSON)) and what it was asked."""

    port: int
    answers: dict[tuple[str, str], tuple[int, dict[str, Any]]] = field(default_factory=dict)
    requests: list[dict[str, Any]] = field(default_factory=list)
    token: str | None = TOKEN  # None: client certificates only (the server requires one)

    @property
    def master(self) -> str:
        return f"k8s://https://127.0.0.1:{self.port}"


def _handler(api: FakeApi) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def _answer(self) -> None:
            url = urllib.parse.urlsplit(self.path)
            length = int(self.headers.get("Content-Length") or 0)
            peer = self.connection.getpeercert() or {}
            api.requests.append({
                "method": self.command, "path": url.path, "query": urllib.parse.parse_qs(url.query),
                "authorization": self.headers.get("Authorization"),
                "body": json.loads(self.rfile.read(length)) if length else None,
                "client": dict(item[0] for item in peer.get("subject", ())).get("commonName")})
            scheme, _, token = (self.headers.get("Authorization") or "").partition(" ")
            if api.token is not None and (scheme.lower() != "bearer" or token != api.token):
                status, body = 401, UNAUTHORIZED
            else:  # the API server's default for what it has not been told: not there
                status, body = api.answers.get((self.command, url.path), (404, _not_found(url.path.rsplit("/")[-1])))
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        do_GET = do_DELETE = _answer

        def log_message(self, *args: Any) -> None:  # quiet
            pass
    return Handler


@dataclass(frozen=True)
class Pki:
    """A CA, the API server's certificate for 127.0.0.1 and a client's certificate, as PEM files and data."""

    folder: Path

    def pem(self, name: str) -> bytes:
        return (self.folder / name).read_bytes()

    def b64(self, name: str) -> str:
        return base64.b64encode(self.pem(name)).decode()


def _issue(folder: Path, name: str, subject: str, issuer: tuple[x509.Name, ec.EllipticCurvePrivateKey] | None,
           **extensions: Any) -> tuple[x509.Name, ec.EllipticCurvePrivateKey]:
    key = ec.generate_private_key(ec.SECP256R1())
    subject_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, subject)])
    issuer_name, issuer_key = issuer or (subject_name, key)
    now = dt.datetime.now(dt.UTC)
    builder = x509.CertificateBuilder().subject_name(subject_name).issuer_name(issuer_name).public_key(
        key.public_key()).serial_number(x509.random_serial_number()).not_valid_before(
        now - dt.timedelta(minutes=5)).not_valid_after(now + dt.timedelta(days=1)).add_extension(
        x509.BasicConstraints(ca=issuer is None, path_length=None), critical=True)
    for extension in extensions.values():
        builder = builder.add_extension(extension, critical=False)
    (folder / f"{name}.crt").write_bytes(builder.sign(issuer_key, hashes.SHA256()).public_bytes(
        serialization.Encoding.PEM))
    (folder / f"{name}.key").write_bytes(key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()))
    return subject_name, key


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Pki:
    return issued_pki(tmp_path_factory.mktemp("pki"))


def issued_pki(folder: Path) -> Pki:
    import ipaddress

    ca = _issue(folder, "ca", "kubernetes-ca", None)
    _issue(folder, "other-ca", "someone-elses-ca", None)
    _issue(folder, "server", "kube-apiserver", ca,
           san=x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]))
    _issue(folder, "client", "airflow-worker", ca, usage=x509.ExtendedKeyUsage([ExtendedKeyUsageOID.CLIENT_AUTH]))
    return Pki(folder)


def _serve(pki: Pki, *, token: str | None) -> Iterator[FakeApi]:
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(pki.folder / "server.crt", pki.folder / "server.key")
    if token is None:  # a client certificate of the cluster's CA, or no TLS session
        context.verify_mode = ssl.CERT_REQUIRED
        context.load_verify_locations(cadata=pki.pem("ca.crt").decode())
    server = ThreadingHTTPServer(("127.0.0.1", 0), BaseHTTPRequestHandler)
    api = FakeApi(port=server.server_address[1], token=token)
    server.RequestHandlerClass = _handler(api)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield api
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


@pytest.fixture
def fake_api(pki: Pki) -> Iterator[FakeApi]:
    yield from _serve(pki, token=TOKEN)


def _kubeconfig(tmp_path: Path, pki: Pki, *, ca: str = "ca.crt", user: dict[str, str] | None = None) -> dict[str, str]:
    """An environment whose $KUBECONFIG names the cluster by another address than the master's: the master's wins,
    as in spark-submit. Two contexts: the current one's token is the API's, the other's is not."""
    config = {
        "apiVersion": "v1", "kind": "Config", "current-context": "lake",
        "clusters": [{"name": "lake", "cluster": {"server": "https://kubeconfig-only.invalid:6443",
                                                  "certificate-authority-data": pki.b64(ca)}}],
        "users": [{"name": "worker", "user": user or {"token": TOKEN}}, {"name": "other", "user": {"token": "stale"}}],
        "contexts": [{"name": "lake", "context": {"cluster": "lake", "user": "worker"}},
                     {"name": "other", "context": {"cluster": "lake", "user": "other"}}]}
    path = tmp_path / "kubeconfig"
    path.write_text(json.dumps(config))  # YAML's superset
    return {"KUBECONFIG": str(path), "HOME": str(tmp_path)}


def _target(api: FakeApi, **kwargs: Any) -> KubernetesTarget:
    return KubernetesTarget(api.master, NAMESPACE, **kwargs)


def test_the_target_is_read_as_spark_submit_and_the_spark_provider_read_it():
    assert KubernetesTarget("k8s://https://10.0.0.1:6443").server == "https://10.0.0.1:6443"
    assert KubernetesTarget("K8S://10.0.0.1:443").server == "https://10.0.0.1:443"  # no scheme: https
    assert KubernetesTarget("k8s://http://127.0.0.1:8001").server == "http://127.0.0.1:8001"  # kubectl proxy
    master = "k8s://https://10.0.0.1:6443"
    assert KubernetesTarget.of(master, {}) == KubernetesTarget(master, "default")
    assert KubernetesTarget.of(master, {}, "lake").namespace == "lake"  # the Spark connection's extra
    chosen = {"spark.kubernetes.namespace": "jobs", "spark.kubernetes.context": "prod"}
    assert KubernetesTarget.of(master, chosen, "lake") == KubernetesTarget(master, "jobs", "prod")


def test_the_tasks_driver_pods_are_listed_by_its_label_with_their_phases(fake_api, pki, tmp_path):
    fake_api.answers[("GET", PODS)] = (200, _pod_list(PENDING, RUNNING, SUCCEEDED, FAILED))
    with kubernetes_api(_kubeconfig(tmp_path, pki), _target(fake_api)) as api:
        pods = driver_pods(api, NAMESPACE, TAG, timeout_s=5)
    (asked,) = fake_api.requests
    assert asked["query"]["labelSelector"] == [f"{TAG_LABEL}={TAG},spark-role=driver"]
    assert asked["authorization"] == f"Bearer {TOKEN}"  # the kubeconfig's current context, at the master's address
    assert [(p.name, p.phase, p.live, p.succeeded, p.failed) for p in pods] == [  # oldest first
        ("trips-ingest-0f0f-driver", "Succeeded", False, True, False),
        ("trips-ingest-0e0e-driver", "Failed", False, False, True),
        ("trips-ingest-1a2b-driver", "Running", True, False, False),
        ("trips-ingest-3c4d-driver", "Pending", True, False, False)]
    assert pods[1].ended_as() == "Failed: exit code 3 (Error)"  # the job's own exit code, from Spark's container


def test_delete_labelled_deletes_the_live_driver_pods_and_keeps_the_ended_ones(fake_api, pki, tmp_path):
    fake_api.answers[("GET", PODS)] = (200, _pod_list(SUCCEEDED, RUNNING, PENDING))
    for pod in (RUNNING, PENDING):  # the Pod, its graceful deletion under way
        name = pod["metadata"]["name"]
        fake_api.answers[("DELETE", f"{PODS}/{name}")] = (200, _pod(name, "Running", "2026-01-01T00:05:00Z",
                                                                    deleting=True))
    assert delete_labelled(_kubeconfig(tmp_path, pki), _target(fake_api), TAG, timeout_s=5) == (
        f"https://127.0.0.1:{fake_api.port}", ["trips-ingest-1a2b-driver", "trips-ingest-3c4d-driver"])
    deletes = [r for r in fake_api.requests if r["method"] == "DELETE"]
    assert [r["path"].rsplit("/", 1)[1] for r in deletes] == ["trips-ingest-1a2b-driver", "trips-ingest-3c4d-driver"]
    assert all(r["body"]["propagationPolicy"] == "Background" for r in deletes)  # the executors go with it


def test_a_pod_gone_between_the_list_and_the_delete_is_not_reported_deleted(fake_api, pki, tmp_path):
    fake_api.answers[("GET", PODS)] = (200, _pod_list(RUNNING))  # its DELETE: the 404 Status
    assert delete_labelled(_kubeconfig(tmp_path, pki), _target(fake_api), TAG, timeout_s=5)[1] == []


def test_one_driver_pods_status_by_name_and_none_once_it_is_gone(fake_api, pki, tmp_path):
    name = "trips-ingest-1a2b-driver"
    fake_api.answers[("GET", f"{PODS}/{name}")] = (200, _pod(name, "Running", "2026-01-01T00:05:00Z", deleting=True))
    with kubernetes_api(_kubeconfig(tmp_path, pki), _target(fake_api)) as api:
        pod = driver_pod(api, NAMESPACE, name, timeout_s=5)
        assert pod == DriverPod(name, "Running", "2026-01-01T00:05:00Z", deleting=True) and pod.live
        assert driver_pod(api, NAMESPACE, "trips-ingest-gone-driver", timeout_s=5) is None


def test_refused_credentials_and_a_silent_api_are_oserrors_that_say_so(fake_api, pki, tmp_path):
    env = _kubeconfig(tmp_path, pki)
    with pytest.raises(PermissionError, match=r"answered 401 to list_namespaced_pod: Unauthorized"):
        delete_labelled(env, _target(fake_api, context="other"), TAG, timeout_s=5)  # that context's token is stale
    fake_api.answers[("GET", PODS)] = (403, FORBIDDEN)
    with pytest.raises(PermissionError, match=r'answered 403 .*cannot list resource "pods" .* namespace "lake"'):
        delete_labelled(env, _target(fake_api), TAG, timeout_s=5)
    with socket.socket() as unused:  # a port nothing listens on
        unused.bind(("127.0.0.1", 0))
        closed = unused.getsockname()[1]
    with pytest.raises(ConnectionError, match=r"did not answer list_namespaced_pod"):
        delete_labelled(env, KubernetesTarget(f"k8s://https://127.0.0.1:{closed}", NAMESPACE), TAG, timeout_s=5)


def test_the_kubeconfigs_ca_is_checked(fake_api, pki, tmp_path):
    fake_api.answers[("GET", PODS)] = (200, _pod_list())
    with pytest.raises(ConnectionError, match=r"did not answer .*CERTIFICATE_VERIFY_FAILED"):
        delete_labelled(_kubeconfig(tmp_path, pki, ca="other-ca.crt"), _target(fake_api), TAG, timeout_s=5)
    assert fake_api.requests == []


def test_a_kubeconfigs_client_certificate_is_presented(pki, tmp_path):
    for api in _serve(pki, token=None):
        api.answers[("GET", PODS)] = (200, _pod_list(SUCCEEDED))
        env = _kubeconfig(tmp_path, pki, user={"client-certificate-data": pki.b64("client.crt"),
                                               "client-key-data": pki.b64("client.key")})
        assert delete_labelled(env, _target(api), TAG, timeout_s=5) == (f"https://127.0.0.1:{api.port}", [])
        assert [(r["client"], r["authorization"]) for r in api.requests] == [("airflow-worker", None)]


def test_in_a_pod_the_service_accounts_token_and_ca_are_used(fake_api, pki, tmp_path, monkeypatch):
    account = tmp_path / "serviceaccount"
    account.mkdir()
    (account / "token").write_text(TOKEN)
    (account / "ca.crt").write_bytes(pki.pem("ca.crt"))
    monkeypatch.setattr(kubernetes_pods, "SERVICE_ACCOUNT", account)
    fake_api.answers[("GET", PODS)] = (200, _pod_list(SUCCEEDED))
    env = {"HOME": str(tmp_path), "KUBERNETES_SERVICE_HOST": "127.0.0.1", "KUBERNETES_SERVICE_PORT": str(fake_api.port)}
    master = f"k8s://127.0.0.1:{fake_api.port}"  # no scheme: https
    assert delete_labelled(env, KubernetesTarget(master, NAMESPACE), TAG, timeout_s=5)[1] == []
    assert [r["authorization"].lower() for r in fake_api.requests] == [f"bearer {TOKEN}"]


def test_without_a_kubeconfig_or_a_service_account_no_api_is_named(tmp_path, monkeypatch):
    monkeypatch.setattr(kubernetes_pods, "SERVICE_ACCOUNT", tmp_path / "none")
    env = {"HOME": str(tmp_path), "KUBECONFIG": str(tmp_path / "missing"), "KUBERNETES_SERVICE_HOST": "10.0.0.1"}
    assert delete_labelled(env, KubernetesTarget("k8s://https://10.0.0.1:6443"), TAG) == (None, [])
    with kubernetes_api(env, KubernetesTarget("k8s://https://10.0.0.1:6443")) as api:
        assert api is None


def test_a_context_the_kubeconfig_lacks_is_a_config_error(fake_api, pki, tmp_path):
    with pytest.raises(ConfigError, match=r"cannot reach the Kubernetes API with .*kubeconfig"):
        delete_labelled(_kubeconfig(tmp_path, pki), _target(fake_api, context="nowhere"), TAG, timeout_s=5)
