"""Follow-up without a name (issue #39 item 3): a report filed without a
reporter's name (anonymous, or a reporting link's report without
`reporterName`) gets a code, shown once, with which the reporter reads the
report's status and the safety team's messages and answers them, at
`/f/<code>` and `GET /api/follow-up/{code}`; the team writes with
`POST /api/incidents/:number/follow-up-messages` and reads the thread as a
panel of the incident page. The rules live in `services`; `views` and
`pages` adapt them; the kiosk plugin and the incidents' create call
`services.issue_code`."""

from __future__ import annotations

from pyramid.config import Configurator

CODE = "/{code}"


def includeme(config: Configurator) -> None:
    from ehs_core.followup.listeners import ACTIONS

    config.add_route("follow_up", "/api/follow-up" + CODE)
    config.add_route("follow_up.messages", "/api/follow-up" + CODE + "/messages")
    config.add_route("incident.follow_up_messages", r"/api/incidents/{number:\d{1,9}}/follow-up-messages",
                     factory="ehs_core.incidents.resources.incident_factory")
    config.add_mail_template("follow_up_answer", "ehs_core.mail:templates/follow_up_answer.txt")
    for action in ACTIONS:
        config.add_restricted_audit_action(action, "ehs_core.followup.listeners.may_see")
    config.scan(".views")
    config.scan(".listeners")
    config.include(".pages")
