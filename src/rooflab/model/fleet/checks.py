"""Whether a node's measurements can be trusted: every link copy and every all-reduce size is
checked before it is timed, and one that failed (or never ran) fails the command."""

from __future__ import annotations

COPY_KINDS = ("ce_uni", "ce_bidir", "sm_uni", "sm_bidir")


def links_failed(section: dict) -> bool:
    """A GPU-to-GPU copy of the links section failed its check or could not run."""
    return any(not r.get("verified") for k in COPY_KINDS for r in section.get(k) or [])


def allreduce_problem(section: dict) -> str | None:
    """Why the all-reduce section is not a full, checked measurement; None where it is."""
    if not section.get("available"):
        return f"all-reduce not measured: {section.get('reason') or section.get('error') or 'not available here'}"
    if any(not r.get("verified") for r in section.get("rows") or []):
        return "one or more all-reduce sizes FAILED their check: no bandwidth is reported for them"
    return None
