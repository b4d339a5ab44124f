"""Writing drafted incidents with the history their status implies:
transitions, investigations, root causes, corrective actions, comments and
the audit trail, as the API would have written them."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from typing import Any

from ehs_core import audit
from ehs_core.actions.models import ActionStatus, CorrectiveAction
from ehs_core.audit.models import AuditEntry
from ehs_core.incidents.models import Comment, Incident, Status
from ehs_core.investigation.models import Investigation, RootCause
from ehs_core.security import Role
from ehs_core.seed.context import SeedContext, SeededIncident
from ehs_core.seed.drafts import Draft
from ehs_core.seed.vocabulary import (
    ACTION_KINDS,
    ACTION_TITLES,
    COMMENTS,
    DESCRIPTIONS,
    INVESTIGATION_METHODS,
    ROOT_CAUSE_CATEGORIES,
    WHYS,
    weighted,
)

HOUR = dt.timedelta(hours=1)


def creation_entry(values: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """`audit.diff({}, values)`, the entry of a row just made (every field
    that has a value), without comparing each field twice: the seed writes
    ten million of them at a million incidents."""
    jsonable = audit.jsonable
    return {key: {"old": None, "new": jsonable(value)} for key, value in values.items() if value is not None}


class IncidentWriter:
    """Writes one batch of incidents and everything that hangs off them."""

    def __init__(self, ctx: SeedContext) -> None:
        self.ctx = ctx
        self.rng = ctx.rng
        users = ctx.users
        self.supervisors = users[Role.supervisor] + users[Role.safety_manager]
        self.managers = users[Role.safety_manager] + users[Role.admin]
        self.assignees = users[Role.supervisor] + users[Role.reporter] + users[Role.safety_manager]
        self.counts: dict[str, int] = {}

    def count(self, table: str, n: int) -> None:
        self.counts[table] = self.counts.get(table, 0) + n

    def write(self, drafts: list[Draft]) -> list[SeededIncident]:
        ctx, rng = self.ctx, self.rng
        # The word counts' trigger (migration 0013) once a batch: once a row,
        # every incident would update the same counts again in this one
        # transaction, a chain of row versions that each update walks.
        # The investigation's lead is chosen before the incident is written:
        # the incident carries its copy (investigation.services), and an
        # UPDATE of each incident afterwards would run its row triggers
        # (word counts, queues) once an investigation.
        for draft in drafts:
            investigated = any(step == "investigation" for step, _ in draft.path)
            draft.lead = rng.choice(self.supervisors) if investigated else None
            draft.row["investigation_lead_id"] = draft.lead
        ids = ctx.insert(Incident, [d.row for d in drafts], ids=True)
        self.count("incidents", len(ids))
        investigations, causes, cause_owner, comments, audits = [], [], [], [], []
        planned_actions: list[tuple[int, Draft, dt.datetime]] = []
        seeded = []
        for incident_id, draft in zip(ids, drafts, strict=True):
            row = draft.row
            seeded.append(SeededIncident(incident_id, row["number"], draft.type, draft.severity, draft.status,
                                         row["occurred_at"], draft.offset, row["created_at"], row["site_id"],
                                         row["area_id"], row["title"]))
            reported = {"title": row["title"], "type": row["type"], "severity": row["severity"],
                        "siteId": row["site_id"], "areaId": row["area_id"],
                        "locationDetail": row["location_detail"], "description": row["description"],
                        "immediateAction": row["immediate_action"], "occurredAt": row["occurred_at"],
                        "anonymous": row["anonymous"]}
            audits.append(self.audit_row(incident_id, row["created_at"], row["reporter_id"],
                                         "incident.created", creation_entry(reported)))
            previous = Status.reported.value
            for step, at in draft.path:
                actor = rng.choice(self.managers if step == "closed" and previous == "verification"
                                   else self.supervisors)
                changes: dict[str, Any] = {"status": {"old": previous, "new": step}}
                if step == "closed":
                    changes["closedAt"] = {"old": None, "new": audit.jsonable(at)}
                if rng.random() < 0.3:
                    note = rng.choice(COMMENTS)
                    changes["note"] = {"old": None, "new": note}
                    comments.append({"incident_id": incident_id, "author_id": actor, "body": note,
                                     "transition_to": step, "created_at": at})
                audits.append(self.audit_row(incident_id, at, actor, "incident.transitioned", changes))
                previous = step
                if step == "investigation":
                    investigations.append(self.investigation(incident_id, draft, at, audits))
                    for _ in range(self.cause_count(draft)):
                        causes.append(self.root_cause(incident_id, at))
                        cause_owner.append(incident_id)
                elif step == "actions":
                    planned_actions.append((incident_id, draft, at))
            for _ in range(rng.choice((0, 0, 1, 1, 2))):
                created = draft.row["created_at"] + dt.timedelta(hours=rng.uniform(1, 72))
                if created < ctx.now:
                    comments.append({"incident_id": incident_id, "author_id": rng.choice(self.assignees),
                                     "body": rng.choice(COMMENTS), "transition_to": None,
                                     "created_at": created})
        ctx.insert(Investigation, investigations)
        self.count("investigations", len(investigations))
        cause_ids = ctx.insert(RootCause, causes, ids=True)
        self.count("root_causes", len(cause_ids))
        causes_of: dict[int, list[int]] = {}
        for cause_id, incident_id, cause in zip(cause_ids, cause_owner, causes, strict=True):
            causes_of.setdefault(incident_id, []).append(cause_id)
            audits.append(self.audit_row(incident_id, cause["created_at"], rng.choice(self.supervisors),
                                         "root_cause.created",
                                         creation_entry({"category": cause["category"],
                                                         "description": cause["description"],
                                                         "whys": cause["whys"]})
                                         | {"id": {"old": None, "new": cause_id}}))
        action_rows, action_audits = [], []
        for incident_id, draft, at in planned_actions:
            for row, updates in self.actions(incident_id, draft, at, causes_of.get(incident_id, [])):
                action_rows.append(row)
                action_audits.append((row, updates))
        action_ids = ctx.insert(CorrectiveAction, action_rows, ids=True)
        self.count("corrective_actions", len(action_ids))
        for action_id, (row, updates) in zip(action_ids, action_audits, strict=True):
            data = {"title": row["title"], "description": row["description"], "kind": row["kind"],
                    "assigneeId": row["assignee_id"], "dueDate": row["due_date"],
                    "rootCauseId": row["root_cause_id"], "status": ActionStatus.open.value}
            audits.append(self.audit_row(row["incident_id"], row["created_at"], rng.choice(self.supervisors),
                                         "action.created",
                                         creation_entry(data) | {"id": {"old": None, "new": action_id}}))
            for at, actor, old, new in updates:
                audits.append(self.audit_row(row["incident_id"], at, actor, "action.updated",
                                             {"status": {"old": old, "new": new},
                                              "id": {"old": action_id, "new": action_id}}))
        ctx.insert(Comment, comments)
        self.count("comments", len(comments))
        audits.sort(key=lambda a: (a["incident_id"], a["at"]))
        ctx.insert(AuditEntry, audits)
        self.count("audit_entries", len(audits))
        return seeded

    @staticmethod
    def audit_row(incident_id: int, at: dt.datetime, actor: int | None, action: str,
                  changes: dict[str, Any]) -> dict[str, Any]:
        return {"incident_id": incident_id, "at": at, "actor_id": actor, "action": action, "changes": changes}

    def cause_count(self, draft: Draft) -> int:
        if draft.status == Status.investigation:
            return self.rng.choice((0, 0, 1, 2))
        # Past investigation on the way to actions: at least one cause (the workflow needs it).
        return self.rng.choice((1, 1, 2, 3))

    def investigation(self, incident_id: int, draft: Draft, at: dt.datetime,
                      audits: list[dict[str, Any]]) -> dict[str, Any]:
        rng = self.rng
        completed = draft.status != Status.investigation and rng.random() < 0.9
        row = {"incident_id": incident_id, "lead_id": draft.lead,
               "method": rng.choice(INVESTIGATION_METHODS),
               "summary": " ".join(rng.sample(DESCRIPTIONS, 2)), "completed": completed,
               "created_at": at, "updated_at": at}
        audits.append(self.audit_row(incident_id, at, row["lead_id"], "investigation.created",
                                     creation_entry({"leadId": row["lead_id"], "method": row["method"],
                                                     "summary": row["summary"], "completed": completed})))
        return row

    def root_cause(self, incident_id: int, at: dt.datetime) -> dict[str, Any]:
        rng = self.rng
        moment = min(at + dt.timedelta(hours=rng.uniform(1, 48)), self.ctx.now)
        return {"incident_id": incident_id, "category": rng.choice(ROOT_CAUSE_CATEGORIES),
                "description": rng.choice(DESCRIPTIONS), "whys": rng.sample(WHYS, rng.randrange(0, 5)),
                "created_at": moment}

    def actions(self, incident_id: int, draft: Draft, at: dt.datetime,
                causes: list[int]) -> Iterable[tuple[dict[str, Any], list[tuple[Any, ...]]]]:
        """Actions created when the incident entered 'actions', with statuses
        its current status allows (verification needs none pending, closing
        needs every uncancelled one verified)."""
        rng, now = self.rng, self.ctx.now
        count = rng.choice((1, 1, 2, 2, 3))
        for n in range(count):
            created = min(at + dt.timedelta(hours=rng.uniform(0.2, 24)), now)
            due = (created + dt.timedelta(days=rng.randrange(5, 45))).date()
            if draft.status == Status.actions:
                status = weighted(rng, ((ActionStatus.open, 40), (ActionStatus.in_progress, 35),
                                        (ActionStatus.done, 25)))
            elif draft.status == Status.verification:
                status = ActionStatus.done if n == 0 or rng.random() < 0.9 else ActionStatus.cancelled
            elif draft.status == Status.closed:
                status = ActionStatus.verified if n == 0 or rng.random() < 0.92 else ActionStatus.cancelled
            else:  # back in investigation after actions were planned: none of that here
                status = ActionStatus.open
            assignee = rng.choice(self.assignees) if rng.random() < 0.95 else None
            updates: list[tuple[Any, ...]] = []
            done_at = None
            updated = created
            if status in (ActionStatus.done, ActionStatus.verified):
                # Most finish on time, some late.
                finish = dt.datetime.combine(due, dt.time(12), dt.UTC) + dt.timedelta(
                    days=rng.uniform(-20, 8))
                done_at = min(max(finish, created + HOUR), now)
                updates.append((done_at, assignee or rng.choice(self.supervisors), "open", "done"))
                updated = done_at
                if status == ActionStatus.verified:
                    verified = min(done_at + dt.timedelta(days=rng.uniform(0.5, 5)), now)
                    updates.append((verified, rng.choice(self.managers), "done", "verified"))
                    updated = verified
            elif status != ActionStatus.open:
                updated = min(created + dt.timedelta(days=rng.uniform(0.5, 10)), now)
                updates.append((updated, assignee or rng.choice(self.supervisors), "open", status.value))
            yield ({"incident_id": incident_id, "title": rng.choice(ACTION_TITLES),
                    "description": rng.choice(DESCRIPTIONS) if rng.random() < 0.7 else None,
                    "kind": rng.choice(ACTION_KINDS), "assignee_id": assignee, "due_date": due,
                    "root_cause_id": rng.choice(causes) if causes and rng.random() < 0.7 else None,
                    "status": status.value, "created_at": created, "updated_at": updated,
                    "done_at": done_at}, updates)
