"""With `calosha` left out of ehs.plugins (the session's application:
`osha kiosk analytics`), on the same database: its URLs answer 404, its
pages, panel, card and menu entry are gone, incidents carry neither of its
sections, and its obligations are neither listed, closable nor mailed;
the rest works."""

from __future__ import annotations

import datetime as dt
import json

from ehs_core.obligations.notices import send_notices
from tests.plugins.calosha.test_violence_log import entry


def test_disabled_calosha_contributes_nothing(app, registry, as_user, admin, ca_site):
    supervisor = as_user("supervisor")
    manager = as_user("safety_manager")
    occurred = (dt.datetime.now(dt.UTC) - dt.timedelta(hours=1)).isoformat()
    number = supervisor.post_json("/api/incidents", {
        "title": "Assault at the counter", "type": "injury", "severity": "high", "siteId": ca_site,
        "occurredAt": occurred}, status=201).json["number"]
    supervisor.put_json(f"/api/calosha/incidents/{number}/violence", entry(1))
    supervisor.put_json(f"/api/calosha/incidents/{number}/serious", {"died": True})
    supervisor.post_json("/api/calosha/log-requests", {}, status=201)
    owed = manager.get("/api/obligations").json["items"]
    assert {item["kind"] for item in owed} == {"calosha.serious_report", "calosha.log_copy"}
    assert "calosha" in app["enabled_plugins"] and "calosha" not in registry["enabled_plugins"]

    # `admin` speaks to the application without the plugin.
    for method, url, body in (
            ("GET", "/api/calosha/violent-incident-log", None),
            ("GET", "/api/calosha/violent-incident-log.csv", None),
            ("PUT", f"/api/calosha/incidents/{number}/violence", entry(1)),
            ("PUT", f"/api/calosha/incidents/{number}/serious", {"died": True}),
            ("POST", "/api/calosha/log-requests", {})):
        extra = {"body": json.dumps(body).encode(), "content_type": "application/json"} if body else {}
        answer = admin.request(url, method=method, status=404, **extra)
        assert answer.json["error"]
    for url in ("/calosha/violent-incident-log", "/calosha/violent-incident-log.pdf",
                f"/incidents/{number}/calosha/violence"):
        admin.get(url, status=404)
    admin.post("/calosha/log-requests", status=404)

    detail = admin.get(f"/api/incidents/{number}").json
    assert "workplaceViolence" not in detail and "seriousInjury" not in detail
    page = admin.get(f"/incidents/{number}")
    assert page.html.find(id="panel-calosha") is None
    home = admin.get("/")
    assert home.html.find(id="card-calosha_ask") is None
    assert home.html.find("a", string="Violence log") is None
    card = home.html.find(id="card-obligations").parent  # the admin handles OSHA's kind, not these
    assert "Nothing is owed to a regulator now." in card.get_text()
    assert admin.get("/api/obligations", {"status": "all"}).json["items"] == []
    for item in owed:
        admin.post_json(f"/api/obligations/{item['id']}/done", {"note": "x"}, status=404)
    assert send_notices(registry, now=dt.datetime.now(dt.UTC) + dt.timedelta(days=20)) == 0
    assert not any(name.startswith("calosha") for name in registry.get("obligation_kinds", {}))
    assert admin.get("/api/openapi.json").json["paths"].keys().isdisjoint(
        {"/api/calosha/violent-incident-log", "/api/calosha/log-requests"})
    # The rest works, and the enabled app still has everything.
    assert admin.get(f"/api/incidents/{number}").json["title"] == "Assault at the counter"
    assert len(manager.get("/api/obligations").json["items"]) == 2
