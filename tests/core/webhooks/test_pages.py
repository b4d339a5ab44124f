"""The webhooks page (/admin/webhooks): an admin adds a webhook by its form
and sees the secret once, switches it off and on, reads its deliveries and
removes it; nobody else may open it."""

from __future__ import annotations

import re

from ehs_core.testing import form_with, new_site, report_body


def test_an_admin_manages_webhooks_on_the_page(hooks_app, receiver):
    admin = hooks_app.admin()
    page = admin.get("/admin/webhooks")
    assert "No webhook yet." in page.text
    form = form_with(page, "/admin/webhooks")
    form["url"] = "ftp://nowhere"
    refused = form.submit(status=400)
    assert "Must be a URL such as https://hooks.example.com/ehs" in refused.text
    assert "Name at least one event" not in refused.text  # one problem at a time

    form = form_with(refused, "/admin/webhooks")
    form["url"] = receiver.url
    form["description"] = "Ticketing"
    form.get("events", index=0).checked = True  # action.created
    form.get("events", index=3).checked = True  # incident.created
    added = form.submit(status=201)
    secret = re.search(r"<code>(whsec_[^<]+)</code>", added.text)[1]
    endpoint = admin.get("/api/webhooks").json[0]
    assert endpoint["events"] == ["action.created", "incident.created"]
    assert secret not in admin.get("/admin/webhooks").text  # shown once

    admin.post_json("/api/incidents", report_body(new_site(admin)["id"]))
    receiver.wait(1)
    hooks_app.settle()
    deliveries = admin.get(f"/admin/webhooks/{endpoint['id']}")
    assert "incident.created" in deliveries.text and "Delivered" in deliveries.text

    off = form_with(admin.get("/admin/webhooks"), f"/admin/webhooks/{endpoint['id']}").submit().follow()
    assert "Switch on" in off.text and admin.get("/api/webhooks").json[0]["active"] is False
    form_with(off, f"/admin/webhooks/{endpoint['id']}/delete").submit().follow()
    assert admin.get("/api/webhooks").json == []


def test_only_admins_open_the_webhooks_page(hooks_app):
    admin = hooks_app.admin()
    manager = hooks_app.user(admin, "safety_manager")
    manager.get("/admin/webhooks", status=403)
    assert "/admin/webhooks" not in manager.get("/").text
    assert "/admin/webhooks" in admin.get("/").text
