"""batch/v1: defaulting of Jobs and CronJobs (their validation is the workload check of apps.py)."""

from __future__ import annotations

from dragoman.sim.api.validation.core import _default_template


def _default_job(obj: dict) -> None:
    spec = obj.setdefault("spec", {})
    if spec.get("completions") is None and spec.get("parallelism") is None:
        spec["completions"] = 1
        spec["parallelism"] = 1
    spec.setdefault("parallelism", 1)
    spec.setdefault("backoffLimit", 6)
    spec.setdefault("completionMode", "NonIndexed")
    spec.setdefault("suspend", False)
    spec.setdefault("podReplacementPolicy", "TerminatingOrFailed")
    _default_template(obj)


def _default_cronjob(obj: dict) -> None:
    """SetDefaults_CronJob; the job template is not Job-defaulted, only its pod template (as the generated
    defaulters walk every PodSpec)."""
    spec = obj.setdefault("spec", {})
    spec.setdefault("concurrencyPolicy", "Allow")
    spec.setdefault("suspend", False)
    spec.setdefault("successfulJobsHistoryLimit", 3)
    spec.setdefault("failedJobsHistoryLimit", 1)
    job = spec.get("jobTemplate")
    if isinstance(job, dict) and isinstance(job.get("spec"), dict):
        _default_template(job)
