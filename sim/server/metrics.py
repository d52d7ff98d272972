"""/metrics: the apiserver gauges and counters the simulator keeps."""

from __future__ import annotations

from dragoman.sim import resources


class MetricsMixin:
    """metrics_text() over the store's counts."""

    def metrics_text(self) -> str:
        counts = self.store.counts()
        sizes = self.store.size_bytes()
        lines = [
            (
                "# HELP apiserver_resource_objects [ALPHA] Number of stored objects at the time of last check "
                "split by kind."
            ),
            "# TYPE apiserver_resource_objects gauge",
        ]
        for key, n in sorted(counts.items()):
            rt = resources.BY_KEY[key]
            lines.append(f'apiserver_resource_objects{{group="{rt.group}",resource="{rt.plural}"}} {n}')
        lines += [
            (
                "# HELP apiserver_storage_objects [STABLE] Number of stored objects at the time of last check "
                "split by kind. In case of a fetching error, the value will be -1."
            ),
            "# TYPE apiserver_storage_objects gauge",
        ]
        for key, n in sorted(counts.items()):
            lines.append(f'apiserver_storage_objects{{resource="{key}"}} {n}')
        lines += [
            (
                "# HELP apiserver_storage_size_bytes [STABLE] Size of the storage database file physically "
                "allocated in bytes."
            ),
            "# TYPE apiserver_storage_size_bytes gauge",
            f'apiserver_storage_size_bytes{{storage_cluster_id="dragoman-sim"}} {sum(sizes.values())}',
            (
                "# HELP apiserver_registered_watchers [ALPHA] Number of currently registered watchers for a given "
                "resources"
            ),
            "# TYPE apiserver_registered_watchers gauge",
            f"apiserver_registered_watchers {self.store.watcher_count()}",
            "# HELP apiserver_request_total [STABLE] Counter of apiserver requests.",
            "# TYPE apiserver_request_total counter",
            f"apiserver_request_total {self.request_count}",
        ]
        return "\n".join(lines) + "\n"
