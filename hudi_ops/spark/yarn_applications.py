"""A YARN application found and killed through the ResourceManager's REST API, which needs no Hadoop client.

The Spark provider's `on_kill` runs `yarn application -kill`, a command an Airflow worker rarely has;
the ResourceManager's web address is in the `yarn-site.xml` that spark-submit reads
(`$HADOOP_CONF_DIR` or `$YARN_CONF_DIR`; with HA, each ResourceManager's, tried in turn). A cluster
whose REST API asks for Kerberos (SPNEGO) needs the provider's way: Hadoop's client and a ticket.
"""

from __future__ import annotations

import getpass
import json
import re
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
_VARIABLE = re.compile(r"\$\{([^}]+)\}")


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
    query = urllib.parse.urlencode({"applicationTags": tag, "states": states})
    answer = _call(rm_url, f"/ws/v1/cluster/apps?{query}", timeout_s=timeout_s)
    return list((answer.get("apps") or {}).get("app", []))


def kill_tagged(env: Mapping[str, str], tag: str, *, timeout_s: float = 10.0) -> tuple[str | None, list[str]]:
    """Ask the ResourceManager to kill every live application tagged `tag`: which one answered (None: no
    yarn-site.xml names one) and the applications' ids. Raises OSError when none answered."""
    urls = resource_managers(env)
    error: OSError | None = None
    for rm in urls:
        try:
            killed = []
            for app in applications_tagged(rm, tag, timeout_s=timeout_s):
                _call(rm, f"/ws/v1/cluster/apps/{app['id']}/state", method="PUT", body={"state": "KILLED"},
                      timeout_s=timeout_s)
                killed.append(app["id"])
            return rm, killed
        except OSError as e:  # a standby ResourceManager, or one that is down: the next
            error = e
    if error is not None:
        raise error
    return None, []


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
    return json.loads(text) if text else {}
