"""What a pod's status says about it: running, ready, restarting over and over (the checks the ownership rule and the
findings read of GPU-stack pods)."""

from __future__ import annotations

from dragoman.fleet.k8s.times import parse_time


def pod_running(pod: dict) -> bool:
    deleting = (pod.get("metadata") or {}).get("deletionTimestamp")
    return (pod.get("status") or {}).get("phase") == "Running" and not deleting


def pod_ready(pod: dict) -> bool:
    for c in (pod.get("status") or {}).get("conditions") or ():
        if c.get("type") == "Ready":
            return c.get("status") == "True"
    return False


RECENT_RESTART_SECONDS = 600


def crash_looping(pod: dict, now: float | None = None) -> tuple[bool, int, str]:
    """(restarting repeatedly now, restarts, why): CrashLoopBackOff; several restarts and not ready; or, between two
    crashes, several restarts with the last one less than ten minutes before `now` (the cluster's clock)."""
    restarts = 0
    reason = ""
    for cs in (pod.get("status") or {}).get("containerStatuses") or ():
        restarts = max(restarts, int(cs.get("restartCount") or 0))
        waiting = (cs.get("state") or {}).get("waiting") or {}
        if waiting.get("reason") == "CrashLoopBackOff":
            reason = "CrashLoopBackOff"
        term = (cs.get("lastState") or {}).get("terminated") or {}
        if not reason and term.get("reason") and int(cs.get("restartCount") or 0) >= 3:
            if not cs.get("ready"):
                reason = f"restarting ({term.get('reason')})"
            elif now is not None:
                finished = parse_time(term.get("finishedAt"))
                if finished is not None and now - finished < RECENT_RESTART_SECONDS:
                    reason = f"running again after a crash ({term.get('reason')}) at {term.get('finishedAt')}"
    if reason:
        return True, restarts, reason
    if restarts >= 3 and not pod_ready(pod) and (pod.get("status") or {}).get("phase") == "Running":
        return True, restarts, "restarting, not ready"
    return False, restarts, ""


def failing_exit(pod: dict) -> str | None:
    """How the pod's containers keep ending when one is down after a failed exit (terminated now, or waiting to be
    restarted after one): "<reason>, exit code <n>"; None when none is (all run, or none has failed yet)."""
    for cs in (pod.get("status") or {}).get("containerStatuses") or ():
        state = cs.get("state") or {}
        if "running" in state:
            continue
        term = state.get("terminated") or (cs.get("lastState") or {}).get("terminated") or {}
        code = term.get("exitCode")
        if isinstance(code, int) and code != 0:
            return f"{term.get('reason') or 'Error'}, exit code {code}"
    return None
