"""Saved views on the incident list page: the analytics plugin's tool saves
the current filters under a name and lists the caller's views as links,
through the same operation as POST /api/views."""

from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

from ehs_core.testing import form_with


def save_form(page):
    return form_with(page, "/incidents/views")


def test_save_the_current_filters_and_open_them_again(make_user):
    supervisor = make_user("supervisor")
    page = supervisor.get("/incidents", [("type", "injury"), ("severity", "high")])
    form = save_form(page)
    form["name"] = "Serious injuries"
    done = form.submit(status=302)
    assert parse_qs(urlsplit(done.location).query)["notice"] == ["saved"]
    views = supervisor.get("/api/views", {"page": "incidents"}).json
    assert [(v["name"], v["filters"]) for v in views] == [
        ("Serious injuries", {"type": "injury", "severity": "high"})]
    listed = supervisor.get("/incidents")
    assert 'href="/incidents?type=injury&amp;severity=high"' in listed.text


def test_a_reporter_may_not_share_a_view(make_user):
    reporter = make_user("reporter")
    page = reporter.get("/incidents")
    assert "Share with everyone" not in page.text
    done = reporter.post("/incidents/views", {"name": "Mine", "shared": "on"}, status=302)
    assert "view_error=Sharing+a+view+needs+the+supervisor+role" in done.location
    assert reporter.get("/api/views").json == []


def test_a_view_needs_a_name(make_user):
    reporter = make_user("reporter")
    done = reporter.post("/incidents/views", {"name": ""}, status=302)
    assert "view_error=" in done.location and reporter.get("/api/views").json == []


def test_a_saved_view_keeps_the_lists_order(make_user):
    supervisor = make_user("supervisor")
    page = supervisor.get("/incidents", [("severity", "high"), ("sort", "oldest")])
    form = save_form(page)
    form["name"] = "Oldest serious"
    form.submit(status=302)
    views = supervisor.get("/api/views", {"page": "incidents"}).json
    assert [(v["name"], v["filters"]) for v in views] == [
        ("Oldest serious", {"severity": "high", "sort": "oldest"})]
    link = supervisor.get("/incidents").html.find("a", string="Oldest serious")
    assert parse_qs(urlsplit(link["href"]).query) == {"severity": ["high"], "sort": ["oldest"]}
    assert supervisor.get(link["href"]).forms["filters"]["sort"].value == "oldest"
