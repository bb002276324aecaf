"""A YARN application found, followed and killed through the ResourceManager's REST API, which needs no
Hadoop client and no JVM.

The Spark provider's own kill needs Hadoop's client (5.x: `yarn application -kill`, a command an Airflow
worker rarely has) or settings of its own (6.x); the ResourceManager's web address is in the
`yarn-site.xml` that spark-submit reads (`$HADOOP_CONF_DIR` or `$YARN_CONF_DIR`; with HA, each
ResourceManager's, tried in turn). A cluster
whose REST API asks for Kerberos (SPNEGO) needs the provider's way: Hadoop's client and a ticket, and
spark-submit waiting for the application (`spark.yarn.submit.waitAppCompletion=true`).
"""

from __future__ import annotations

import getpass
import json
import re
import urllib.error
import urllib.parse
import urllib.request
import xml.etree.ElementTree as ET
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

#: the ResourceManager's web port when yarn-site.xml names only its host (Hadoop's default)
DEFAULT_WEB_PORT = 8088
#: an application that may still run
LIVE_STATES = "NEW,NEW_SAVING,SUBMITTED,ACCEPTED,RUNNING"
_VARIABLE = re.compile(r"\$\{([^}]+)\}")
_T = TypeVar("_T")


@dataclass(frozen=True)
class YarnApplication:
    """One application as the ResourceManager reports it: its state (NEW ... RUNNING, then FINISHED, FAILED or
    KILLED) and, once it ended, how (finalStatus SUCCEEDED, FAILED or KILLED)."""

    id: str
    state: str
    final_status: str = "UNDEFINED"
    diagnostics: str = ""
    elapsed_ms: int = 0

    @classmethod
    def from_report(cls, app: Mapping[str, Any]) -> YarnApplication:
        return cls(id=str(app["id"]), state=str(app.get("state", "")),
                   final_status=str(app.get("finalStatus", "UNDEFINED")),
                   diagnostics=str(app.get("diagnostics") or ""), elapsed_ms=int(app.get("elapsedTime") or 0))

    @property
    def live(self) -> bool:
        return self.state in LIVE_STATES.split(",")

    @property
    def succeeded(self) -> bool:
        return self.state == "FINISHED" and self.final_status == "SUCCEEDED"

    def ended_as(self) -> str:
        """How it ended, for a task's log: its final status and YARN's diagnostics."""
        return f"{self.final_status}" + (f": {self.diagnostics.strip()[:2000]}" if self.diagnostics.strip() else "")

    @property
    def order(self) -> tuple[int, int]:
        """Submission order: an id is application_<the ResourceManager's start>_<its sequence number>."""
        _, started, sequence = self.id.rsplit("_", 2)
        return int(started), int(sequence)


def resource_managers(env: Mapping[str, str]) -> list[str]:
    """The ResourceManagers' web addresses in the yarn-site.xml of `env`'s configuration folder (one, or
    one per rm-id with HA); empty: there is none to read."""
    for var in ("YARN_CONF_DIR", "HADOOP_CONF_DIR"):
        site = Path(env.get(var) or "/nonexistent") / "yarn-site.xml"
        if site.is_file():
            break
    else:
        return []
    props = {p.findtext("name") or "": p.findtext("value") or "" for p in ET.parse(site).getroot().iter("property")}
    https = props.get("yarn.http.policy") == "HTTPS_ONLY"
    key = "yarn.resourcemanager.webapp.https.address" if https else "yarn.resourcemanager.webapp.address"
    ids = [i.strip() for i in props.get("yarn.resourcemanager.ha.rm-ids", "").split(",") if i.strip()]
    urls = []
    for suffix in [f".{i}" for i in ids] or [""]:
        address = _expand(props.get(key + suffix, ""), props, suffix)
        if not address:
            host = _expand(props.get("yarn.resourcemanager.hostname" + suffix, ""), props, suffix)
            address = f"{host}:{DEFAULT_WEB_PORT}" if host else ""
        if address:
            urls.append(f"{'https' if https else 'http'}://{address}")
    return urls


def _expand(value: str, props: Mapping[str, str], suffix: str) -> str:
    """Hadoop's `${name}` references (a web address is often `${yarn.resourcemanager.hostname}:8088`)."""
    return _VARIABLE.sub(lambda m: props.get(m[1] + suffix) or props.get(m[1], ""), value)


def applications_tagged(rm_url: str, tag: str, *, states: str = LIVE_STATES, timeout_s: float = 10.0,
                        ) -> list[dict[str, Any]]:
    """The applications tagged `tag` in `states` (empty: in any state)."""
    query = urllib.parse.urlencode({"applicationTags": tag, **({"states": states} if states else {})})
    answer = _call(rm_url, f"/ws/v1/cluster/apps?{query}", timeout_s=timeout_s)
    return list((answer.get("apps") or {}).get("app", []))


def tagged(rm_urls: Sequence[str], tag: str, *, timeout_s: float = 10.0) -> list[YarnApplication]:
    """Every application tagged `tag`, live or ended, in the order they were submitted."""
    apps = _first_answer(rm_urls, lambda rm: applications_tagged(rm, tag, states="", timeout_s=timeout_s))
    return sorted((YarnApplication.from_report(app) for app in apps), key=lambda app: app.order)


def application(rm_urls: Sequence[str], app_id: str, *, timeout_s: float = 10.0) -> YarnApplication | None:
    """One application's report; None when the ResourceManager knows no such application (it forgets the
    oldest ended ones: yarn.resourcemanager.max-completed-applications)."""
    def report(rm: str) -> YarnApplication | None:
        try:
            return YarnApplication.from_report(_call(rm, f"/ws/v1/cluster/apps/{app_id}", timeout_s=timeout_s)["app"])
        except urllib.error.HTTPError as e:
            if e.code == 404:
                return None
            raise
    return _first_answer(rm_urls, report)


def kill_tagged(rm_urls: Sequence[str], tag: str, *, timeout_s: float = 10.0) -> list[str]:
    """Ask the ResourceManager to kill every live application tagged `tag`: the applications' ids. Raises
    OSError when none answered."""
    def kill(rm: str) -> list[str]:
        killed = []
        for app in applications_tagged(rm, tag, timeout_s=timeout_s):
            _call(rm, f"/ws/v1/cluster/apps/{app['id']}/state", method="PUT", body={"state": "KILLED"},
                  timeout_s=timeout_s)
            killed.append(app["id"])
        return killed
    return _first_answer(rm_urls, kill)


def kill(rm_urls: Sequence[str], app_id: str, *, timeout_s: float = 10.0) -> None:
    """Ask the ResourceManager to kill one application (an ended one stays as it ended)."""
    _first_answer(rm_urls, lambda rm: _call(rm, f"/ws/v1/cluster/apps/{app_id}/state", method="PUT",
                                            body={"state": "KILLED"}, timeout_s=timeout_s))


def _first_answer(rm_urls: Sequence[str], ask: Callable[[str], _T]) -> _T:
    """`ask` of each ResourceManager in turn until one answers (a standby, or one that is down: the next)."""
    error: OSError = OSError("no ResourceManager is named")
    for rm in rm_urls:
        try:
            return ask(rm)
        except OSError as e:  # an HTTP error too: a standby answers a PUT with a redirect urllib does not follow
            error = e
    raise error


def _call(rm_url: str, path: str, *, method: str = "GET", body: Mapping[str, Any] | None = None,
          timeout_s: float) -> dict[str, Any]:
    # as the worker's user (YARN's simple auth): an anonymous caller may not kill an application
    sep = "&" if "?" in path else "?"
    url = f"{rm_url}{path}{sep}{urllib.parse.urlencode({'user.name': getpass.getuser()})}"
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(url, data=data, method=method, headers={
        "Accept": "application/json", "Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=timeout_s) as response:
        text = response.read()
    try:
        return json.loads(text) if text else {}
    except ValueError as e:  # a standby's "no active RM" page, a proxy's login page: not this API
        raise ConnectionError(f"{rm_url} answered {path} with no JSON: {text[:200]!r}") from e

