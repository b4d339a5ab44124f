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
    assert "view_error=shared" in done.location
    assert "Sharing a view needs the supervisor role" in done.follow().html.find(class_="field-error").text
    assert reporter.get("/api/views").json == []


def test_a_view_needs_a_name(make_user):
    reporter = make_user("reporter")
    done = reporter.post("/incidents/views", {"name": ""}, status=302)
    assert "view_error=name" in done.location and reporter.get("/api/views").json == []
    shown = done.follow().html.find(class_="field-error").text
    assert shown == "Give the view a name of at most 200 characters"


def test_the_tools_error_is_the_sites_own_words_never_the_addresss(make_user):
    """`view_error` in the address was shown in the red box as the site's words."""
    page = make_user("reporter").get("/incidents", {"view_error": "Your account is locked: call 555-0100"})
    assert "555-0100" not in page.html.get_text()  # (the list's links keep the query as it was)
    assert page.html.find(class_="field-error").text == "The filters could not be saved as a view"


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
