"""The reports page's numbers, recomputed by a worker after their data changed."""

from __future__ import annotations

import time

from django.core.cache import cache

from annotator.queue import BrokerUnavailable, task_send_after_commit

# A refresh no worker has finished after this long (no worker running, or it died) is done by the page
# itself on the next full view: an older report is never shown for longer than that.
REFRESH_PATIENCE_SECONDS = 120


def report_refresh_request(project, version: str) -> bool:
    """Ask a worker, once per data version, to compute the project's report; ``False`` if it is overdue."""
    key = f"reports-refresh:{project.pk}:{version}"
    now = time.time()
    if cache.add(key, now, timeout=3600):
        try:
            task_send_after_commit("annotator.reports_refresh", project.pk)
        except BrokerUnavailable:  # no worker will compute it: the page does, and asks again next time
            cache.delete(key)
            return False
        return True
    asked = cache.get(key)
    return asked is not None and now - asked < REFRESH_PATIENCE_SECONDS
