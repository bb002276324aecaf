"""A YARN application found and killed through the ResourceManager's REST API, which needs no Hadoop client.

The Spark provider's `on_kill` runs `yarn application -kill`, a command an Airflow worker rarely has;
the ResourceManager's web address is in the `yarn-site.xml` that spark-submit reads
(`$HADOOP_CONF_DIR` or `$YARN_CONF_DIR`). A cluster whose REST API asks for Kerberos (SPNEGO) needs the
provider's way: Hadoop's client and a ticket on the worker.
"""

from __future__ import annotations

import json
import urllib.parse
import urllib.request
import xml.etree.ElementTree as ET
from collections.abc import Mapping
from pathlib import Path
from typing import Any

#: the ResourceManager's web port when yarn-site.xml names only its host (Hadoop's default)
DEFAULT_WEB_PORT = 8088
#: an application that may still run
LIVE_STATES = "NEW,NEW_SAVING,SUBMITTED,ACCEPTED,RUNNING"


def resource_manager_url(env: Mapping[str, str]) -> str | None:
    """The ResourceManager's web address in the yarn-site.xml of `env`'s configuration folder; None:
    there is none to read."""
    for var in ("YARN_CONF_DIR", "HADOOP_CONF_DIR"):
        site = Path(env.get(var) or "/nonexistent") / "yarn-site.xml"
        if site.is_file():
            break
    else:
        return None
    props = {p.findtext("name"): p.findtext("value") for p in ET.parse(site).getroot().iter("property")}
    if props.get("yarn.http.policy") == "HTTPS_ONLY":
        address = props.get("yarn.resourcemanager.webapp.https.address")
        scheme = "https"
    else:
        address, scheme = props.get("yarn.resourcemanager.webapp.address"), "http"
    if not address:
        host = props.get("yarn.resourcemanager.hostname")
        if not host:
            return None
        address = f"{host}:{DEFAULT_WEB_PORT}"
    return f"{scheme}://{address}"


def applications_tagged(rm_url: str, tag: str, *, states: str = LIVE_STATES) -> list[dict[str, Any]]:
    query = urllib.parse.urlencode({"applicationTags": tag, "states": states})
    answer = _call(rm_url, f"/ws/v1/cluster/apps?{query}")
    return list((answer.get("apps") or {}).get("app", []))


def kill_tagged(rm_url: str, tag: str) -> list[str]:
    """Ask the ResourceManager to kill every live application tagged `tag`; their ids."""
    killed = []
    for app in applications_tagged(rm_url, tag):
        _call(rm_url, f"/ws/v1/cluster/apps/{app['id']}/state", method="PUT", body={"state": "KILLED"})
        killed.append(app["id"])
    return killed


def _call(rm_url: str, path: str, *, method: str = "GET", body: Mapping[str, Any] | None = None) -> dict[str, Any]:
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(rm_url + path, data=data, method=method, headers={
        "Accept": "application/json", "Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=30) as response:
        text = response.read()
    return json.loads(text) if text else {}
