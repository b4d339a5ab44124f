"""The incident pages for each role: the list shows what the API lists to
that person, the detail answers 404 where the API does, the buttons are the
moves the workflow allows that role, and forms refuse what the API refuses,
showing the error next to its field."""

from __future__ import annotations

import datetime as dt
import re
from html import unescape

import pytest

from ehs_core.testing import form_with, submit_with_files
from tests.core.attachments import samples
from tests.core.workflow.support import add_action, add_root_cause, new_site, report, set_action


@pytest.fixture
def team(admin, make_user):
    return {"admin": admin, "reporter": make_user("reporter", name="Rita Reporter"),
            "other": make_user("reporter", name="Otto Other"),
            "supervisor": make_user("supervisor", name="Sam Supervisor"),
            "manager": make_user("safety_manager", name="Sue Safety")}


@pytest.fixture
def site(admin):
    return new_site(admin)


def test_the_list_shows_each_role_what_the_api_lists(team, site):
    mine = report(team["reporter"], site, title="Rita's spill")
    theirs = report(team["other"], site, title="Otto's ladder")
    for role, expected in (("reporter", {mine["reference"]}), ("other", {theirs["reference"]}),
                           ("supervisor", {mine["reference"], theirs["reference"]})):
        page = team[role].get("/incidents")
        shown = set(re.findall(r"INC-\d{4}(?=</a></td>)", page.text))
        api = {item["reference"] for item in team[role].get("/api/incidents").json["items"]}
        assert shown == api == expected


def test_a_listed_row_shows_the_incident_as_it_is_now(team, site, admin):
    """Rows are kept by what they show: a change shows on the next list."""
    number = report(team["admin"], site, title="Oil <spill> & mess")["number"]
    first = team["supervisor"].get("/incidents").text
    assert "<td>Oil &lt;spill&gt; &amp; mess</td>" in first
    assert team["supervisor"].get("/incidents").text == first
    team["supervisor"].patch_json(f"/api/incidents/{number}", {"title": "Oil spill", "severity": "high"})
    team["supervisor"].post_json(f"/api/incidents/{number}/transitions", {"to": "triage"})
    admin.patch_json(f"/api/sites/{site}", {"name": "North yard", "timezone": "Asia/Tokyo"})
    row = team["supervisor"].get("/incidents").text.split(f">INC-{number:04d}</a>", 1)[1].split("</tr>", 1)[0]
    assert "<td>Oil spill</td>" in row and ">High</span>" in row and ">Triage</span>" in row
    assert "<td>North yard</td>" in row and " JST</time>" in row


def test_the_list_filters_by_several_values_and_searches(team, site):
    report(team["admin"], site, title="Cut hand", type="injury")
    report(team["admin"], site, title="Wet floor", type="hazard")
    report(team["admin"], site, title="Smoke", type="environmental")
    page = team["supervisor"].get("/incidents", [("type", "injury"), ("type", "hazard")])
    assert "Cut hand" in page.text and "Wet floor" in page.text and "Smoke" not in page.text
    assert "2 incidents" in page.text
    assert "Smoke" in team["supervisor"].get("/incidents", {"q": "smok"}).text
    assert "Cut hand" not in team["supervisor"].get("/incidents", {"q": "smok"}).text


def test_the_list_filters_by_several_sites_and_several_areas_ticked_in_its_form(team, site, admin):
    south = admin.post_json("/api/sites", {"name": "Plant South"}).json["id"]
    east = admin.post_json("/api/sites", {"name": "Plant East"}).json["id"]
    dock = admin.post_json(f"/api/sites/{south}/areas", {"name": "Dock"}).json["id"]
    yard = admin.post_json(f"/api/sites/{east}/areas", {"name": "Yard"}).json["id"]
    report(team["admin"], site, title="North spill")
    report(team["admin"], south, title="South spill", areaId=dock)
    report(team["admin"], east, title="East spill", areaId=yard)
    report(team["admin"], east, title="East roof")
    browser = team["supervisor"]
    form = browser.get("/incidents").forms["filters"]
    sites = {box._value: box for box in form.fields["siteId"]}
    assert set(sites) == {str(site), str(south), str(east)} and len(form.fields["areaId"]) == 2
    sites[str(site)].checked = sites[str(south)].checked = True
    both = form.submit()
    assert "North spill" in both.text and "South spill" in both.text
    assert "East spill" not in both.text and "East roof" not in both.text
    assert "2 incidents" in both.text
    areas = browser.get("/incidents", [("areaId", str(dock)), ("areaId", str(yard))])
    assert "South spill" in areas.text and "East spill" in areas.text and "East roof" not in areas.text
    ticked = {f._value for f in areas.forms["filters"].fields["areaId"] if f.checked}
    assert ticked == {str(dock), str(yard)}
    assert areas.text.count("<details class=\"more-filters\" open>") == 1  # the areas only


def test_the_area_filter_names_each_area_by_the_areas_it_is_inside(team, site, admin):
    shed = admin.post_json(f"/api/sites/{site}/areas", {"name": "Shed"}).json["id"]
    hall = admin.post_json(f"/api/sites/{site}/areas", {"name": "Hall"}).json["id"]
    for parent in (shed, hall):
        admin.post_json(f"/api/sites/{site}/areas", {"name": "Yard", "parentId": parent})
    form = team["supervisor"].get("/incidents").html.find("form", id="filters")
    labels = [label.get_text(strip=True) for label in form.find_all("label", class_="check")
              if label.find("input", attrs={"name": "areaId"})]
    assert labels == ["Hall", "Hall / Yard", "Shed", "Shed / Yard"]


def test_a_search_with_more_matches_than_it_counts_says_more_than_and_pages_on(team, site, monkeypatch):
    from ehs_core.incidents import listing
    monkeypatch.setattr(listing, "COUNT_BOUND", 3)
    for n in range(1, 8):
        report(team["admin"], site, title=f"Forklift {n}")
    report(team["admin"], site, title="Ladder")
    browser = team["supervisor"]
    first = browser.get("/incidents", {"q": "forklift", "pageSize": "2"})
    assert "More than 3 incidents" in first.text and "Page 1</span>" in first.text
    assert "Page 1 of" not in first.text
    assert "Forklift 7" in first.text and "Forklift 5" not in first.text
    older = first.click(description="Next page")
    assert "More than 4 incidents" in older.text and "Forklift 5" in older.text
    last = browser.get("/incidents", {"q": "forklift", "pageSize": "2", "page": "4"})
    assert "7 incidents" in last.text and "Page 4 of 4" in last.text and "Forklift 1" in last.text
    assert 'rel="next"' not in last.text
    few = browser.get("/incidents", {"q": "ladder"})
    assert "1 incident<" in few.text and "Page 1 of 1" in few.text


def test_the_list_sorts_as_chosen_on_every_page_and_in_its_export(team, site):
    for title, severity in (("Alpha slip", "low"), ("Bravo fall", "critical"), ("Charlie cut", "high")):
        report(team["admin"], site, title=title, severity=severity)
    browser = team["supervisor"]
    first = browser.get("/incidents", {"sort": "severity", "pageSize": "2"})
    assert first.text.index("Bravo fall") < first.text.index("Charlie cut")
    assert "Alpha slip" not in first.text
    assert first.forms["filters"]["sort"].value == "severity"
    export = re.search(r'href="([^"]*/incidents/export.csv[^"]*)"', first.text).group(1)
    assert "sort=severity" in unescape(export)
    second = first.click(description="Next page")
    assert "Alpha slip" in second.text and "Bravo fall" not in second.text
    assert second.forms["filters"]["sort"].value == "severity"
    oldest = browser.get("/incidents", {"sort": "oldest"})
    shown = [oldest.text.index(title) for title in ("Alpha slip", "Bravo fall", "Charlie cut")]
    assert shown == sorted(shown)
    wrong = browser.get("/incidents", {"sort": "title"})
    assert "sort: Must be one of" in wrong.text
    assert wrong.text.index("Charlie cut") < wrong.text.index("Alpha slip")  # newest first, as by default


def test_htmx_asks_only_for_the_results(team, site):
    report(team["admin"], site, title="Cut hand", type="injury")
    fragment = team["supervisor"].get("/incidents", {"type": "injury"},
                                      headers={"HX-Request": "true", "HX-Target": "results"})
    assert fragment.text.lstrip().startswith('<section id="results"')
    assert "<html" not in fragment.text and "Cut hand" in fragment.text


def test_go_to_an_incident_by_its_reference(team, site):
    created = report(team["admin"], site)
    assert team["admin"].get("/incidents/go", {"number": created["reference"].lower()}).location.endswith(
        f"/incidents/{created['number']}")


def test_detail_answers_404_where_the_api_does(team, site):
    theirs = report(team["other"], site)
    page = team["reporter"].get(f"/incidents/{theirs['number']}", status=404)
    assert "Page not found" in page.text and theirs["title"] not in page.text
    team["reporter"].get(f"/api/incidents/{theirs['number']}", status=404)
    team["reporter"].get("/incidents/99999", status=404)


def test_the_detail_shows_the_moves_the_role_may_make(team, site):
    created = report(team["reporter"], site)
    number = created["number"]
    assert "Move to Triage" not in team["reporter"].get(f"/incidents/{number}").text
    page = team["supervisor"].get(f"/incidents/{number}")
    moved = form_with(page, f"/incidents/{number}/transition").submit("to", value="triage", status=302)
    assert "The incident moved on." in moved.follow().text
    assert team["supervisor"].get(f"/api/incidents/{number}").json["status"] == "triage"


def test_a_blocked_move_says_why_and_links_to_what_is_missing(team, site):
    number = report(team["admin"], site)["number"]
    team["supervisor"].post_json(f"/api/incidents/{number}/transitions", {"to": "triage"})
    team["supervisor"].post_json(f"/api/incidents/{number}/transitions", {"to": "investigation"})
    page = team["supervisor"].get(f"/incidents/{number}")
    assert 'aria-disabled="true"' in page.text
    assert "Record at least one root cause first" in page.text and 'href="#investigation"' in page.text
    # Posting it anyway is refused as the API refuses it, with the reason on the page.
    refused = team["supervisor"].post(f"/incidents/{number}/transition", {"to": "actions"}, status=409)
    assert "Record at least one root cause first" in refused.text
    add_root_cause(team["supervisor"], number)
    form = form_with(team["supervisor"].get(f"/incidents/{number}"), f"/incidents/{number}/transition")
    form["note"] = "Cause found: a worn seal"
    form.submit("to", value="actions", status=302)
    comments = team["supervisor"].get(f"/api/incidents/{number}/comments").json
    assert comments[-1]["body"] == "Cause found: a worn seal" and comments[-1]["transitionTo"] == "actions"


def test_a_refused_form_answers_with_the_page_a_get_shows_and_its_error(team, site, admin):
    """The page a refused form answers with is the incident page as its GET
    shows it (read the same way), with the error added and nothing else."""
    number = report(team["reporter"], site, title="Leak by the press")["number"]
    admin.post_json(f"/api/incidents/{number}/transitions", {"to": "triage"})
    admin.post_json(f"/api/incidents/{number}/transitions", {"to": "investigation"})
    team["reporter"].post_json(f"/api/incidents/{number}/comments", {"body": "Still dripping"})

    def shown(text: str) -> str:
        text = re.sub(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", "KEY", text)
        text = re.sub(r'<div class="error-summary".*?</div>|<p class="field-error".*?</p>', "", text,
                      flags=re.S)
        return re.sub(r' has-error| aria-invalid="true" aria-describedby="[a-z-]+"', "", text)

    for who, path, body, status, error in (
            ("supervisor", "transition", {"to": "actions"}, 409, "Record at least one root cause first"),
            ("reporter", "comments", {"body": " "}, 400, "Must not be empty")):
        page = team[who].get(f"/incidents/{number}").text
        refused = team[who].post(f"/incidents/{number}/{path}", body, status=status).text
        assert re.search(f">{error}</p>", refused) and not re.search(f">{error}</p>", page)
        assert "Leak by the press" in refused and "Still dripping" in refused
        assert shown(refused).split("<main", 1)[1] == shown(page).split("<main", 1)[1]


def test_only_a_safety_manager_may_close_after_verification(team, site):
    number = report(team["admin"], site)["number"]
    for to in ("triage", "actions"):
        team["supervisor"].post_json(f"/api/incidents/{number}/transitions", {"to": to})
    action = add_action(team["supervisor"], number)
    set_action(team["supervisor"], action["id"], status="done")
    team["supervisor"].post_json(f"/api/incidents/{number}/transitions", {"to": "verification"})
    assert "Move to Closed" not in team["supervisor"].get(f"/incidents/{number}").text
    team["supervisor"].post(f"/incidents/{number}/transition", {"to": "closed"}, status=403)
    set_action(team["manager"], action["id"], status="verified")
    form = form_with(team["manager"].get(f"/incidents/{number}"), f"/incidents/{number}/transition")
    form.submit("to", value="closed", status=302)
    assert team["manager"].get(f"/api/incidents/{number}").json["status"] == "closed"
    # A closed incident's one move is its reopening, said so on its button (as
    # the API allows it: a safety manager's, not a supervisor's).
    closed = team["manager"].get(f"/incidents/{number}")
    assert "Reopen for investigation" in closed.text and "Move to Investigation" not in closed.text
    assert "Reopen for" not in team["supervisor"].get(f"/incidents/{number}").text
    form_with(closed, f"/incidents/{number}/transition").submit("to", value="investigation", status=302)
    reopened = team["manager"].get(f"/api/incidents/{number}").json
    assert reopened["status"] == "investigation" and reopened["closedAt"] is None
    assert "Reopen for" not in team["manager"].get(f"/incidents/{number}").text


def test_comments_by_form_and_by_htmx(team, site):
    number = report(team["reporter"], site)["number"]
    page = team["reporter"].get(f"/incidents/{number}")
    form = form_with(page, f"/incidents/{number}/comments")
    form["body"] = "It is still leaking"
    assert "It is still leaking" in form.submit(status=302).follow().text
    fragment = team["reporter"].post(f"/incidents/{number}/comments", {"body": "And now it stopped"},
                                     headers={"HX-Request": "true"})
    assert fragment.text.lstrip().startswith('<section id="comments"')
    assert "And now it stopped" in fragment.text
    empty = team["reporter"].post(f"/incidents/{number}/comments", {"body": "  "}, status=400)
    assert "Must not be empty" in empty.text
    assert [c["body"] for c in team["reporter"].get(f"/api/incidents/{number}/comments").json] == [
        "It is still leaking", "And now it stopped"]


def test_edit_is_for_supervisors_and_shows_field_errors(team, site):
    number = report(team["reporter"], site)["number"]
    edit_link = f'href="/incidents/{number}/edit"'
    # The button is shown to whom the API lets edit (its `can.update`), and only to them.
    assert team["reporter"].get(f"/api/incidents/{number}").json["can"]["update"] is False
    assert edit_link not in team["reporter"].get(f"/incidents/{number}").text
    assert edit_link in team["supervisor"].get(f"/incidents/{number}").text
    team["reporter"].get(f"/incidents/{number}/edit", status=403)
    page = team["supervisor"].get(f"/incidents/{number}/edit")
    form = form_with(page, f"/incidents/{number}/edit")
    form["title"] = ""
    refused = form.submit(status=400)
    assert 'id="title-error"' in refused.text and "Must not be empty" in refused.text
    form = form_with(page, f"/incidents/{number}/edit")
    form["title"] = "Oil under press 3"
    form["severity"] = "high"
    form.submit(status=302)
    detail = team["supervisor"].get(f"/api/incidents/{number}").json
    assert (detail["title"], detail["severity"]) == ("Oil under press 3", "high")


def test_upload_a_photo_and_refuse_other_files(team, site):
    number = report(team["reporter"], site)["number"]
    page = team["reporter"].get(f"/incidents/{number}")
    form = form_with(page, f"/incidents/{number}/attachments")
    shown = submit_with_files(team["reporter"], form, [("file", "spill.png", samples.PNG, "image/png")],
                              status=302).follow()
    files = team["reporter"].get(f"/api/incidents/{number}").json["attachments"]
    assert [f["contentType"] for f in files] == ["image/png"]
    # The gallery shows the photo's preview, which opens the photo itself.
    photo = shown.html.find("img", alt="Photo spill.png")
    assert photo["src"] == f'/api/attachments/{files[0]["id"]}/preview'
    assert photo.parent["href"] == f'/api/attachments/{files[0]["id"]}'
    assert team["reporter"].get(photo["src"]).content_type == "image/webp"
    form = form_with(shown, f"/incidents/{number}/attachments")
    refused = submit_with_files(team["reporter"], form, [("file", "page.html", samples.HTML, "text/html")],
                                status=400)
    assert "Only photos" in refused.text


def test_a_photo_of_too_many_pixels_is_refused_on_the_page_with_the_reason(team, site):
    number = report(team["reporter"], site)["number"]
    form = form_with(team["reporter"].get(f"/incidents/{number}"), f"/incidents/{number}/attachments")
    refused = submit_with_files(team["reporter"], form,
                                [("file", "IMG_0001.png", samples.png_bomb(13_000, 13_000), "image/png")],
                                status=400)
    assert "photos of at most 50 million pixels are accepted" in refused.text
    assert team["reporter"].get(f"/api/incidents/{number}").json["attachments"] == []


def test_report_form_files_once_even_when_sent_twice(team, site):
    page = team["reporter"].get("/incidents/new")
    form = form_with(page, "/incidents/new")
    form["type"], form["severity"], form["title"] = "near_miss", "low", "Forklift too fast"
    form["siteId"] = str(site)
    form["occurredAt"] = (dt.datetime.now(dt.UTC) - dt.timedelta(hours=1)).strftime("%Y-%m-%dT%H:%M")
    photos = [("photos", "look.png", samples.PNG, "image/png")]
    thanks = submit_with_files(team["reporter"], form, photos, status=302).follow()
    reference = re.search(r"INC-\d{4}", thanks.text)[0]
    again = submit_with_files(team["reporter"], form, photos, status=302).follow()  # back, send again
    assert re.search(r"INC-\d{4}", again.text)[0] == reference
    items = team["reporter"].get("/api/incidents").json["items"]
    assert [i["reference"] for i in items] == [reference]
    detail = team["reporter"].get(f"/api/incidents/{items[0]['number']}").json
    assert len(detail["attachments"]) == 1 and detail["reporter"]["name"] == "Rita Reporter"


def test_report_form_shows_errors_next_to_fields(team, site):
    page = team["reporter"].get("/incidents/new")
    form = form_with(page, "/incidents/new")
    form["title"] = ""
    form["occurredAt"] = "2999-01-01T10:00"
    refused = form.submit(status=400)
    for name in ("title", "type", "severity", "occurredAt"):
        assert f'id="{name}-error"' in refused.text, name
    assert "Must not lie in the future" in refused.text
    assert team["reporter"].get("/api/incidents").json["total"] == 0


def test_an_anonymous_report_keeps_no_name(team, site):
    form = form_with(team["reporter"].get("/incidents/new"), "/incidents/new")
    form["type"], form["severity"], form["title"] = "hazard", "medium", "Blocked fire exit"
    form["siteId"] = str(site)
    form["anonymous"] = True
    # Answered at once (no redirect): the follow-up code is on this answer only.
    thanks = form.submit(status=200)
    assert "without your name" in thanks.text and "Open INC-" not in thanks.text
    assert re.search(r'id="follow-up-code">[A-Za-z0-9_-]{32}<', thanks.text)
    number = int(re.search(r"INC-(\d{4})", thanks.text)[1])
    detail = team["supervisor"].get(f"/api/incidents/{number}").json
    assert detail["anonymous"] is True and detail["reporter"] is None
    page = team["supervisor"].get(f"/incidents/{number}").text
    # The lead and assignee pickers list every active person, the reporter too;
    # nothing else on the page may name them.
    assert "Rita Reporter" not in re.sub(r"<option[^>]*>[^<]*</option>", "", page)
    assert "Reported by</dt><dd>Anonymous" in page


def file_by_page(browser, site, **fields) -> tuple[str, str]:
    """File a report through the report form; (its reference, the thanks page's address)."""
    form = form_with(browser.get("/incidents/new"), "/incidents/new")
    form["type"], form["severity"], form["title"] = "hazard", "medium", "Blocked fire exit"
    form["siteId"] = str(site)
    for name, value in fields.items():
        form[name] = value
    answer = form.submit(status=(200, 302))
    if answer.status_int == 200:  # an anonymous report, answered with its follow-up code
        address = f"/incidents/new/thanks?report={form['clientId'].value}"
    else:
        address = answer.location
    return re.search(r"INC-\d{4}", browser.get(address).text)[0], address


def test_the_thanks_page_confirms_only_the_callers_own_report(team, site):
    """`/incidents/new/thanks?number=N` told any user whether N existed and
    whether it was anonymous; now it is reached only with the report's own
    clientId, by who filed it, and answers 404 like any page for what the
    caller cannot see."""
    named, named_thanks = file_by_page(team["reporter"], site)
    anonymous, anonymous_thanks = file_by_page(team["reporter"], site, anonymous=True)
    assert "number=" not in named_thanks + anonymous_thanks
    assert named in team["reporter"].get(named_thanks).text
    shown = team["reporter"].get(anonymous_thanks).text
    assert anonymous in shown and "without your name" in shown
    for who in ("other", "supervisor", "admin"):
        unknown = team[who].get("/incidents/new/thanks?number=999", status=404).text
        for number in (1, 2):
            page = team[who].get(f"/incidents/new/thanks?number={number}", status=404)
            assert page.text == unknown and "INC-" not in page.text
    # A named report's thanks is its reporter's alone.
    assert "INC-" not in team["other"].get(named_thanks, status=404).text
    team["other"].get("/incidents/new/thanks?report=00000000-0000-4000-8000-000000000000", status=404)
    team["other"].get("/incidents/new/thanks?report=x", status=404)


def test_files_not_kept_are_named_from_the_servers_own_state_never_the_address(team, site):
    """`failed` in the thanks page's address was shown in the red box as
    files of the report: now the answer to the form itself names them."""
    form = form_with(team["reporter"].get("/incidents/new"), "/incidents/new")
    form["type"], form["severity"], form["title"] = "hazard", "medium", "Blocked fire exit"
    form["siteId"] = str(site)
    answer = submit_with_files(team["reporter"], form, [("photos", "page.png", samples.HTML, "image/png"),
                                                        ("photos", "exit.png", samples.PNG, "image/png")],
                               status=200)
    assert "Some files were not added" in answer.text
    assert [li.text for li in answer.html.find(class_="error-summary").find_all("li")] == ["page.png"]
    reference = re.search(r"INC-\d{4}", answer.text)[0]
    own = team["reporter"].get("/incidents/new/thanks", {"report": form["clientId"].value,
                                                           "failed": "Your account is locked: call 555-0100"})
    assert reference in own.text and "555-0100" not in own.text and "Some files" not in own.text


def test_a_report_form_without_a_client_id_still_ends_on_its_thanks(team, site):
    page = team["reporter"].post("/incidents/new", {
        "type": "hazard", "severity": "low", "title": "Loose cable", "siteId": str(site),
        "occurredAt": (dt.datetime.now(dt.UTC) - dt.timedelta(hours=1)).strftime("%Y-%m-%dT%H:%M")},
        status=302).follow()
    assert "INC-0001" in page.text


def test_two_people_of_one_name_are_told_apart_in_comments_and_history(team, site, make_user):
    """Renaming oneself (/account/name) to the safety manager's name
    relabelled one's comments and history entries as theirs: where two
    people bear one name (alike once case and spaces are set aside), each
    is shown with their e-mail address."""
    number = report(team["reporter"], site)["number"]
    mallory = make_user("reporter", name="Mallory Moe", email="mallory@acme.test")
    team["supervisor"].post_json(f"/api/incidents/{number}/actions",
                                 {"title": "Mop it", "assigneeId": mallory.user["id"]}, status=201)
    mallory.post_json(f"/api/incidents/{number}/comments", {"body": "Done, all clean"}, status=201)
    team["manager"].post_json(f"/api/incidents/{number}/comments", {"body": "Not clean yet"}, status=201)
    team["manager"].post_json(f"/api/incidents/{number}/transitions", {"to": "triage"}, status=200)

    def shown() -> tuple[list[str], list[str]]:
        page = team["reporter"].get(f"/incidents/{number}").html
        said = [li.find(class_="meta").text.split("·")[0].strip()
                for li in page.find(id="comments").find_all("li")]
        done = [li.get_text(" ", strip=True) for li in page.find(id="timeline").find_all("li")]
        return said, done

    said, done = shown()
    assert said == ["Mallory Moe", "Sue Safety"]
    assert not any("@" in entry for entry in done)
    form = form_with(mallory.get("/account"), "/account/name")
    form["name"] = "sue  SAFETY"
    form.submit(status=302)
    said, done = shown()
    assert said == ["sue  SAFETY (mallory@acme.test)", f"Sue Safety ({team['manager'].user['email']})"]
    assert any(f"Sue Safety ({team['manager'].user['email']})" in entry for entry in done)
    # The API keeps names as they are.
    comments = team["reporter"].get(f"/api/incidents/{number}/comments").json
    assert [c["author"]["name"] for c in comments] == ["sue  SAFETY", "Sue Safety"]


@pytest.mark.parametrize("bad", ["\x00", "\x01", "\x7f"], ids=["nul", "soh", "del"])
def test_control_characters_in_a_transition_note_or_a_comment_are_refused_as_by_the_api(team, site, bad):
    """A NUL in a transition's note was a 500 on PostgreSQL."""
    number = report(team["reporter"], site)["number"]
    moved = team["supervisor"].post(f"/incidents/{number}/transition", {"to": "triage", "note": f"Go{bad}"},
                                    status=400)
    assert "control characters" in moved.text
    said = team["supervisor"].post(f"/incidents/{number}/comments", {"body": f"Hi{bad}"}, status=400)
    assert "control characters" in said.text
    assert team["supervisor"].get(f"/api/incidents/{number}").json["status"] == "reported"
    assert team["supervisor"].get(f"/api/incidents/{number}/comments").json == []
    team["supervisor"].post_json(f"/api/incidents/{number}/transitions", {"to": "triage", "note": f"Go{bad}"},
                                 status=400)


def test_times_are_shown_in_the_sites_zone(team, admin):
    site = admin.post_json("/api/sites", {"name": "Tokyo", "timezone": "Asia/Tokyo"}).json["id"]
    number = report(team["admin"], site, occurredAt="2026-01-05T23:30:00Z")["number"]
    page = team["admin"].get(f"/incidents/{number}")
    assert "6 Jan 2026, 08:30 JST" in page.text


def test_the_menu_counts_what_waits_for_the_person(team, site):
    for _ in range(2):
        report(team["reporter"], site)
    number = report(team["reporter"], site)["number"]
    team["supervisor"].post_json(f"/api/incidents/{number}/transitions", {"to": "triage"})
    action = team["supervisor"].post_json(f"/api/incidents/{number}/actions", {
        "title": "Sweep", "assigneeId": team["supervisor"].user["id"]}).json
    badge = re.compile(r'href="/"[^>]*>Home <span class="badge"[^>]*>(\d+)</span>')
    # Three to triage and one open action; the same on any page, as on the home page.
    assert badge.search(team["supervisor"].get("/incidents").text)[1] == "4"
    assert badge.search(team["supervisor"].get("/").text)[1] == "4"
    assert badge.search(team["reporter"].get("/incidents").text) is None
    team["manager"].patch_json(f"/api/actions/{action['id']}", {"status": "cancelled"})
    assert badge.search(team["supervisor"].get(f"/incidents/{number}").text)[1] == "3"


def test_a_long_queue_shows_99_plus_in_the_menu(team, site):
    """The menu stops counting past 99 (every page reads the count); the
    home page's own lists still count them all."""
    for _ in range(100):
        report(team["reporter"], site)
    badge = re.compile(r'href="/"[^>]*>Home <span class="badge" aria-label="([^"]*)">([^<]*)</span>')
    assert badge.search(team["supervisor"].get("/incidents").text).groups() == ("99+ waiting", "99+")
    home = team["supervisor"].get("/")
    assert badge.search(home.text).groups() == ("99+ waiting", "99+")
    assert home.html.select_one("#q-triage .badge").get_text(strip=True) == "100"


def test_an_investigation_led_by_someone_else_does_not_wait_for_me(team, site, make_user):
    other = make_user("supervisor", name="Olga Other")
    mine, theirs = (report(team["admin"], site)["number"] for _ in range(2))
    for number in (mine, theirs):
        for to in ("triage", "investigation"):
            team["supervisor"].post_json(f"/api/incidents/{number}/transitions", {"to": to})
    team["supervisor"].put_json(f"/api/incidents/{theirs}/investigation", {"leadId": other.user["id"]})
    home = team["supervisor"].get("/")
    waiting = home.text.split('id="q-investigation"', 1)[1].split("</section>", 1)[0]
    assert f"INC-{mine:04d}" in waiting and f"INC-{theirs:04d}" not in waiting
    assert re.search(r'href="/"[^>]*>Home <span class="badge"[^>]*>1</span>', home.text)
    theirs_waiting = other.get("/").text.split('id="q-investigation"', 1)[1].split("</section>")[0]
    assert f"INC-{theirs:04d}" in theirs_waiting


def history_of(page) -> list[tuple[str, str]]:
    """The history's entries as (who, what) pairs, as a person reads them
    (a name's "<" is text: no raw "<" is matched)."""
    section = page.text.split('id="timeline"', 1)[1].split("</section>", 1)[0]
    return [(unescape(who).strip(), unescape(what)) for who, what in re.findall(
        r'</time> (?:&middot;|·) ([^<]*)</div>\s*<div>([^<]*)</div></li>', section)]


def test_the_history_says_who_did_what_in_words(team, site, make_user):
    tricky = make_user("supervisor", name="Ann <b>O'Neil</b>")
    number = report(team["reporter"], site)["number"]
    tricky.post_json(f"/api/incidents/{number}/transitions", {"to": "triage"})
    tricky.patch_json(f"/api/incidents/{number}", {"title": "Oil and water on the floor", "severity": "high"})
    tricky.post_json(f"/api/incidents/{number}/transitions", {"to": "actions"})
    action = add_action(tricky, number)
    set_action(tricky, action["id"], status="done")
    page = team["supervisor"].get(f"/incidents/{number}")
    name = "Ann <b>O'Neil</b>"
    assert history_of(page) == [
        ("Rita Reporter", "Reported"),
        (name, "Moved on: reported → triage"),
        # Each field old → new, and which action (issue #36 item 12).
        (name, "Details changed: Severity: Low → High; Title: Oil on the floor → Oil and water on the floor"),
        (name, "Moved on: triage → actions"),
        (name, "Corrective action added “Replace the seal”"),
        (name, "Corrective action changed “Replace the seal”: open → done"),
    ]
    assert '<time datetime="' in page.text.split('id="timeline"', 1)[1]


def test_the_history_of_an_anonymous_report_names_no_one(team, site):
    number = report(team["reporter"], site, anonymous=True)["number"]
    assert history_of(team["supervisor"].get(f"/incidents/{number}")) == [("Anonymous", "Reported")]


def zoned_site(admin, name: str, zone: str) -> int:
    return admin.post_json("/api/sites", {"name": name, "timezone": zone}, status=201).json["id"]


@pytest.mark.parametrize("zone", ["America/Los_Angeles", "America/New_York", "Pacific/Kiritimati"])
def test_the_report_forms_own_now_is_accepted_at_a_site_in_any_zone(team, admin, zone):
    """Two sites: the form is filled in before a site is chosen, so its "now"
    is the server's clock; kept as shown, it is the moment it was shown at,
    not that wall time read in the chosen site's zone (west of the server it
    lay in the future and was refused)."""
    zoned_site(admin, "Head office", "Asia/Tokyo")
    chosen = zoned_site(admin, "Plant", zone)
    before = dt.datetime.now(dt.UTC).replace(second=0, microsecond=0)
    form = form_with(team["reporter"].get("/incidents/new"), "/incidents/new")
    form["type"], form["severity"], form["title"] = "hazard", "low", "Loose handrail"
    form["siteId"] = str(chosen)
    form.submit(status=302)
    item = team["reporter"].get("/api/incidents").json["items"][0]
    occurred = dt.datetime.fromisoformat(item["occurredAt"])
    assert before <= occurred <= dt.datetime.now(dt.UTC)


def test_a_time_typed_in_the_report_form_is_the_chosen_sites_wall_time(team, admin):
    zoned_site(admin, "Head office", "Asia/Tokyo")
    chosen = zoned_site(admin, "Plant", "America/Los_Angeles")
    form = form_with(team["reporter"].get("/incidents/new"), "/incidents/new")
    form["type"], form["severity"], form["title"] = "hazard", "low", "Loose handrail"
    form["siteId"] = str(chosen)
    form["occurredAt"] = "2026-01-05T08:30"
    form.submit(status=302)
    item = team["reporter"].get("/api/incidents").json["items"][0]
    assert dt.datetime.fromisoformat(item["occurredAt"]) == dt.datetime(2026, 1, 5, 16, 30, tzinfo=dt.UTC)


def test_a_refused_report_says_which_chosen_files_must_be_chosen_again(team, site):
    form = form_with(team["reporter"].get("/incidents/new"), "/incidents/new")
    form["type"], form["severity"], form["title"] = "hazard", "low", ""
    form["siteId"] = str(site)
    refused = submit_with_files(team["reporter"], form, [("photos", "stairs.png", samples.PNG, "image/png")],
                                status=400)
    notice = re.search(r'<p class="field-error" id="photos-dropped" role="alert">([^<]*)</p>', refused.text)
    assert notice and "stairs.png" in unescape(notice[1]) and "Choose them again" in notice[1]
    assert team["reporter"].get("/api/incidents").json["total"] == 0


def test_the_report_forms_area_picker_names_areas_by_their_path(team, admin, site):
    """Issue #36 item 14: two sub-areas named "Yard" under different parents
    read apart in every picker."""
    from ehs_core.testing import new_area

    warehouse = new_area(admin, site, "Warehouse")
    dock = new_area(admin, site, "Dock")
    new_area(admin, site, "Yard", parentId=warehouse["id"])
    new_area(admin, site, "Yard", parentId=dock["id"])
    page = team["reporter"].get("/incidents/new")
    options = re.findall(r'<option value="\d+"[^>]*>([^<]+)</option>', page.text.split('id="areaId"', 1)[1])
    assert options[:4] == ["Dock", "Dock / Yard", "Warehouse", "Warehouse / Yard"]


def test_the_export_link_says_when_it_holds_only_the_first_rows(team, site, monkeypatch):
    """Issue #36 item 7: the export's 10,000-row limit (spec "Limits") is
    said on the link, not met silently in the file."""
    from ehs_core.incidents import export

    for n in range(3):
        report(team["admin"], site, title=f"Spill {n}")
    assert "Export these as CSV" in team["supervisor"].get("/incidents").text
    monkeypatch.setattr(export, "MAX_ROWS", 2)
    page = team["supervisor"].get("/incidents")
    assert "Export the first 2 of these as CSV" in page.text
    link = re.search(r'href="([^"]*/incidents/export.csv[^"]*)"', page.text).group(1).replace("&amp;", "&")
    assert len(team["supervisor"].get(link).text.strip().splitlines()) == 3  # the header and 2 rows


def test_the_history_names_people_and_places_where_ids_changed(team, site, admin):
    """Issue #36 item 12: a changed site, lead or due date reads as names
    and days, never ids."""
    from tests.core.workflow.support import bring_to

    other = admin.post_json("/api/sites", {"name": "Plant South"}).json["id"]
    number = report(team["reporter"], site)["number"]
    team["supervisor"].patch_json(f"/api/incidents/{number}", {"siteId": other})
    bring_to(admin, number, "investigation")
    admin.put_json(f"/api/incidents/{number}/investigation", {"leadId": team["manager"].user["id"]})
    admin.put_json(f"/api/incidents/{number}/investigation", {"leadId": team["supervisor"].user["id"]})
    said = [what for _, what in history_of(team["supervisor"].get(f"/incidents/{number}"))]
    assert "Details changed: Site: Plant North → Plant South" in said
    assert "Investigation updated: Lead: Sue Safety → Sam Supervisor" in said
