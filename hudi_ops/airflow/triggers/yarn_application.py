"""What a deferred hudi-ops task waits on in Airflow's triggerer: its YARN application's end.

The trigger asks the ResourceManager's REST API (hudi_ops.spark.yarn_applications) every `poll_s`
seconds, from a thread so the triggerer's event loop never blocks, and fires once the application has
ended (or is no longer reported), with its report. A ResourceManager that does not answer is asked again at the
next poll (a failover, a restart).
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import AsyncIterator
from typing import Any

from airflow.triggers.base import BaseTrigger, TriggerEvent

from hudi_ops.spark.cluster_drivers import refused
from hudi_ops.spark.yarn_applications import application, kill


class YarnApplicationTrigger(BaseTrigger):
    def __init__(self, *, resource_managers: list[str], application_id: str, result_uri: str,
                 poll_s: float = 5.0) -> None:
        super().__init__()
        self.resource_managers, self.application_id = list(resource_managers), application_id
        self.result_uri, self.poll_s = result_uri, poll_s

    async def on_kill(self) -> None:
        """A user marked the deferred task failed or succeeded, or cleared it (Airflow 3.3 calls this then, never
        on a triggerer's restart): its application is killed, as the operator's on_kill does."""
        await asyncio.to_thread(kill, self.resource_managers, self.application_id)

    def serialize(self) -> tuple[str, dict[str, Any]]:
        return (f"{type(self).__module__}.{type(self).__qualname__}",
                {"resource_managers": self.resource_managers, "application_id": self.application_id,
                 "result_uri": self.result_uri, "poll_s": self.poll_s})

    async def run(self) -> AsyncIterator[TriggerEvent]:
        while True:
            try:
                app = await asyncio.to_thread(application, self.resource_managers, self.application_id)
            except OSError as e:
                if refused(e):  # asking again would not help: the task fails, and its retry decides
                    yield TriggerEvent({"application_id": self.application_id, "result_uri": self.result_uri,
                                        "error": f"the ResourceManager refused: {e}"})
                    return
                self.log.warning("the ResourceManager did not answer about %s (asked again): %s",
                                 self.application_id, e)
            else:
                if app is None or not app.live:  # the operator's resume makes the report an application again
                    yield TriggerEvent({"application_id": self.application_id, "result_uri": self.result_uri,
                                        "application": dataclasses.asdict(app) if app else None})
                    return
            await asyncio.sleep(self.poll_s)
