"""Sites and areas: listing (with and without archived ones), creation and
updates, the establishment fields, and who may do what."""

import pytest

ROLES = ["reporter", "supervisor", "safety_manager", "admin"]
ESTABLISHMENT = ["streetAddress", "city", "state", "zip", "naicsCode", "industryDescription", "ein",
                 "establishmentType"]


def as_role(role, admin, make_user):
    return admin if role == "admin" else make_user(role)


def issue_paths(response):
    assert response.json["error"]
    for issue in response.json["issues"]:
        assert set(issue) == {"path", "message"}
        assert isinstance(issue["message"], str) and issue["message"]
    return {issue["path"] for issue in response.json["issues"]}


def new_site(browser, name="Plant North", **body):
    return browser.post_json("/api/sites", {"name": name, **body}, status=201).json


def new_area(browser, site_id, name="Assembly", **body):
    return browser.post_json(f"/api/sites/{site_id}/areas", {"name": name, **body}, status=201).json


def listed(browser, query=""):
    return {site["id"]: site for site in browser.get(f"/api/sites{query}").json}


def site_in_list(browser, site_id, query="?includeArchived=true"):
    return listed(browser, query)[site_id]


# --- who may do what ------------------------------------------------------


@pytest.mark.parametrize(("method", "path", "body"), [
    ("get", "/api/sites", None),
    ("post", "/api/sites", {"name": "S"}),
    ("patch", "/api/sites/1", {"name": "S"}),
    ("post", "/api/sites/1/areas", {"name": "A"}),
    ("patch", "/api/areas/1", {"name": "A"}),
])
def test_site_endpoints_need_a_session(admin, client, method, path, body):
    if body is None:
        response = client.get(path, status=401)
    else:
        response = getattr(client, f"{method}_json")(path, body, status=401)
    assert list(response.json) == ["error"]


@pytest.mark.parametrize("role", ROLES)
def test_every_signed_in_role_can_list_sites(admin, make_user, role):
    site = new_site(admin)
    area = new_area(admin, site["id"])
    browser = as_role(role, admin, make_user)
    sites = listed(browser)
    assert sites[site["id"]]["name"] == "Plant North"
    assert [a["id"] for a in sites[site["id"]]["areas"]] == [area["id"]]
    assert site["id"] in listed(browser, "?includeArchived=true")


@pytest.mark.parametrize(("role", "status"), [
    ("reporter", 403), ("supervisor", 403), ("safety_manager", 201), ("admin", 201)])
def test_creating_sites_needs_safety_manager(admin, make_user, role, status):
    browser = as_role(role, admin, make_user)
    browser.post_json("/api/sites", {"name": "Role Site"}, status=status)
    names = [s["name"] for s in admin.get("/api/sites").json]
    assert names.count("Role Site") == (1 if status == 201 else 0)


@pytest.mark.parametrize(("role", "status"), [
    ("reporter", 403), ("supervisor", 403), ("safety_manager", 200), ("admin", 200)])
def test_updating_sites_needs_safety_manager(admin, make_user, role, status):
    site = new_site(admin)
    browser = as_role(role, admin, make_user)
    browser.patch_json(f"/api/sites/{site['id']}", {"name": "Renamed", "ein": "123456789"},
                       status=status)
    after = site_in_list(admin, site["id"])
    assert after["name"] == ("Renamed" if status == 200 else "Plant North")
    assert after["ein"] == ("123456789" if status == 200 else None)


@pytest.mark.parametrize(("role", "status"), [
    ("reporter", 403), ("supervisor", 403), ("safety_manager", 201), ("admin", 201)])
def test_creating_areas_needs_safety_manager(admin, make_user, role, status):
    site = new_site(admin)
    browser = as_role(role, admin, make_user)
    browser.post_json(f"/api/sites/{site['id']}/areas", {"name": "Dock"}, status=status)
    assert len(site_in_list(admin, site["id"])["areas"]) == (1 if status == 201 else 0)


@pytest.mark.parametrize(("role", "status"), [
    ("reporter", 403), ("supervisor", 403), ("safety_manager", 200), ("admin", 200)])
def test_updating_areas_needs_safety_manager(admin, make_user, role, status):
    site = new_site(admin)
    area = new_area(admin, site["id"])
    browser = as_role(role, admin, make_user)
    browser.patch_json(f"/api/areas/{area['id']}", {"name": "Dock", "archived": True}, status=status)
    after = site_in_list(admin, site["id"])["areas"][0]
    assert after["name"] == ("Dock" if status == 200 else "Assembly")
    assert after["archived"] is (status == 200)


# --- listing ----------------------------------------------------------------


def test_list_is_empty_before_any_site(admin):
    assert admin.get("/api/sites").json == []


def test_list_returns_sites_with_flat_areas_and_parent_ids(admin, make_user):
    site = new_site(admin, address="1 Main St", timezone="America/Chicago")
    other = new_site(admin, "Plant South")
    building = new_area(admin, site["id"], "Building A", kind="building")
    line = new_area(admin, site["id"], "Line 1", kind="line", parentId=building["id"])
    cell = new_area(admin, site["id"], "Cell 7", kind="other", parentId=line["id"])
    south = new_area(admin, other["id"], "Yard")
    sites = listed(make_user("reporter"))
    assert set(sites) == {site["id"], other["id"]}
    north = sites[site["id"]]
    assert north["name"] == "Plant North"
    assert north["address"] == "1 Main St"
    assert north["timezone"] == "America/Chicago"
    assert north["archived"] is False
    for key in ESTABLISHMENT:
        assert north[key] is None
    areas = {a["id"]: a for a in north["areas"]}
    assert set(areas) == {building["id"], line["id"], cell["id"]}
    assert areas[building["id"]]["parentId"] is None
    assert areas[line["id"]]["parentId"] == building["id"]
    assert areas[cell["id"]]["parentId"] == line["id"]
    assert areas[cell["id"]] == {**areas[cell["id"]], "name": "Cell 7", "kind": "other",
                                 "archived": False}
    for area in north["areas"]:
        assert "areas" not in area and "children" not in area
    assert [a["id"] for a in sites[other["id"]]["areas"]] == [south["id"]]


def test_archived_sites_and_areas_are_hidden_unless_asked_for(admin, make_user):
    kept = new_site(admin, "Kept Site")
    gone = new_site(admin, "Gone Site")
    live = new_area(admin, kept["id"], "Live Area")
    old = new_area(admin, kept["id"], "Old Area")
    gone_area = new_area(admin, gone["id"], "Inside Gone")
    admin.patch_json(f"/api/sites/{gone['id']}", {"archived": True})
    admin.patch_json(f"/api/areas/{old['id']}", {"archived": True})
    reporter = make_user("reporter")
    for query in ("", "?includeArchived=false", "?includeArchived=0"):
        sites = listed(reporter, query)
        assert set(sites) == {kept["id"]}
        assert [a["id"] for a in sites[kept["id"]]["areas"]] == [live["id"]]
    for query in ("?includeArchived=true", "?includeArchived=1"):
        sites = listed(reporter, query)
        assert set(sites) == {kept["id"], gone["id"]}
        assert sites[gone["id"]]["archived"] is True
        assert {a["id"] for a in sites[kept["id"]]["areas"]} == {live["id"], old["id"]}
        archived = {a["id"]: a["archived"] for a in sites[kept["id"]]["areas"]}
        assert archived == {live["id"]: False, old["id"]: True}
        assert [a["id"] for a in sites[gone["id"]]["areas"]] == [gone_area["id"]]
    # unarchiving brings them back
    admin.patch_json(f"/api/sites/{gone['id']}", {"archived": False})
    admin.patch_json(f"/api/areas/{old['id']}", {"archived": False})
    sites = listed(reporter)
    assert set(sites) == {kept["id"], gone["id"]}
    assert len(sites[kept["id"]]["areas"]) == 2


@pytest.mark.parametrize("value", ["maybe", "yes", "TRUE", "", "2"])
def test_include_archived_must_be_a_boolean(admin, value):
    response = admin.get(f"/api/sites?includeArchived={value}", status=400)
    assert "includeArchived" in issue_paths(response)


# --- creating sites -------------------------------------------------------------


def test_create_site_returns_201_with_the_site(admin):
    site = admin.post_json("/api/sites", {"name": "  HQ  ", "address": "5 Elm Road",
                                          "timezone": "Europe/Berlin"}, status=201).json
    assert isinstance(site["id"], int)
    assert site["name"] == "HQ"
    assert site["address"] == "5 Elm Road"
    assert site["timezone"] == "Europe/Berlin"
    assert site["archived"] is False
    assert site["areas"] == []
    assert site_in_list(admin, site["id"], "") == site


def test_create_site_with_name_only(admin):
    site = new_site(admin, "Bare")
    assert site["address"] is None
    assert site["timezone"] is None


def test_create_site_refuses_fields_it_does_not_take(admin):
    response = admin.post_json("/api/sites", {"name": "Extra", "id": 99999, "archived": True,
                                              "organizationId": 777}, status=400)
    assert issue_paths(response) == {"id", "archived", "organizationId"}
    assert listed(admin) == {}


@pytest.mark.parametrize(("body", "path"), [
    ({"timezone": "Mars/Olympus"}, "timezone"),
    ({"timezone": "../../etc/passwd"}, "timezone"),
    ({"timezone": 5}, "timezone"),
    ({"name": ""}, "name"),
    ({"name": None}, "name"),
    ({"name": 12}, "name"),
    ({"name": "s" * 201}, "name"),
    ({"address": "a" * 501}, "address"),
    ({"address": 3}, "address"),
])
def test_create_site_validation(admin, body, path):
    response = admin.post_json("/api/sites", {"name": "Valid", **body}, status=400)
    assert path in issue_paths(response)
    assert admin.get("/api/sites?includeArchived=true").json == []


def test_create_site_requires_a_name(admin):
    assert "name" in issue_paths(admin.post_json("/api/sites", {"address": "x"}, status=400))


def test_create_site_accepts_null_optional_fields(admin):
    site = admin.post_json("/api/sites", {"name": "Nulls", "address": None, "timezone": None},
                           status=201).json
    assert site["address"] is None and site["timezone"] is None


# --- updating sites ---------------------------------------------------------------


def test_update_site_basic_fields(admin):
    site = new_site(admin, address="Old", timezone="UTC")
    url = f"/api/sites/{site['id']}"
    updated = admin.patch_json(url, {"name": "New Name", "address": "New Address",
                                     "timezone": "Asia/Tokyo"}).json
    assert updated == {**updated, "id": site["id"], "name": "New Name", "address": "New Address",
                       "timezone": "Asia/Tokyo", "archived": False}
    assert admin.patch_json(url, {"archived": True}).json["archived"] is True
    assert site["id"] not in listed(admin)
    assert site_in_list(admin, site["id"])["name"] == "New Name"
    assert admin.patch_json(url, {"timezone": None}).json["timezone"] is None


def test_update_site_returns_all_of_its_areas(admin):
    site = new_site(admin)
    a = new_area(admin, site["id"], "A")
    b = new_area(admin, site["id"], "B")
    admin.patch_json(f"/api/areas/{b['id']}", {"archived": True})
    updated = admin.patch_json(f"/api/sites/{site['id']}", {"name": "X"}).json
    assert {area["id"] for area in updated["areas"]} == {a["id"], b["id"]}


def test_update_site_with_empty_body_changes_nothing(admin):
    site = new_site(admin, address="Addr", timezone="UTC")
    assert admin.patch_json(f"/api/sites/{site['id']}", {}).json == site


def test_update_site_establishment_fields(admin):
    site = new_site(admin)
    url = f"/api/sites/{site['id']}"
    updated = admin.patch_json(url, {
        "streetAddress": "12 Factory Lane", "city": "Springfield", "state": "il",
        "zip": "62701", "naicsCode": "336111", "industryDescription": "Automobile manufacturing",
        "ein": "01-2345678", "establishmentType": 1,
    }).json
    expected = {"streetAddress": "12 Factory Lane", "city": "Springfield", "state": "IL",
                "zip": "62701", "naicsCode": "336111",
                "industryDescription": "Automobile manufacturing", "ein": "012345678",
                "establishmentType": 1}
    assert {key: updated[key] for key in ESTABLISHMENT} == expected
    stored = site_in_list(admin, site["id"], "")
    assert {key: stored[key] for key in ESTABLISHMENT} == expected
    # other fields are untouched
    assert stored["name"] == "Plant North"


@pytest.mark.parametrize(("field", "value", "stored"), [
    ("zip", "62701", "62701"),
    ("zip", "62701-1234", "627011234"),
    ("zip", "627011234", "627011234"),
    ("zip", "01234", "01234"),
    ("ein", "123456789", "123456789"),
    ("ein", "00-0000001", "000000001"),
    ("ein", "012345678", "012345678"),
    ("ein", " 12-3456789 ", "123456789"),
    ("naicsCode", "011111", "011111"),
    ("naicsCode", "336111", "336111"),
    ("state", "TX", "TX"),
    ("state", "pr", "PR"),
    ("establishmentType", 2, 2),
    ("establishmentType", 3, 3),
])
def test_establishment_field_values_accepted(admin, field, value, stored):
    site = new_site(admin)
    updated = admin.patch_json(f"/api/sites/{site['id']}", {field: value}).json
    assert updated[field] == stored
    assert site_in_list(admin, site["id"], "")[field] == stored


@pytest.mark.parametrize(("field", "value"), [
    ("state", "Illinois"),
    ("state", "I"),
    ("state", "I1"),
    ("state", 12),
    ("zip", "1234"),
    ("zip", "123456"),
    ("zip", "12345678"),
    ("zip", "1234567890"),
    ("zip", "ABCDE"),
    ("zip", 62701),
    ("naicsCode", "33611"),
    ("naicsCode", "3361111"),
    ("naicsCode", "33611A"),
    ("naicsCode", 336111),
    ("ein", "12345678"),
    ("ein", "1234567890"),
    ("ein", "12-345678A"),
    ("ein", 123456789),
    ("establishmentType", 0),
    ("establishmentType", 4),
    ("establishmentType", "1"),
    ("establishmentType", 1.5),
    ("establishmentType", True),
    ("streetAddress", 5),
    ("streetAddress", "s" * 201),
    ("city", "c" * 101),
    ("city", ["Springfield"]),
    ("industryDescription", "d" * 301),
    ("timezone", "Not/AZone"),
    ("timezone", "EST5EDT-nope"),
    ("archived", "true"),
    ("archived", 1),
    ("archived", None),
    ("name", ""),
    ("name", None),
])
def test_invalid_site_update_is_400_with_the_field_path(admin, field, value):
    site = new_site(admin)
    response = admin.patch_json(f"/api/sites/{site['id']}", {field: value}, status=400)
    assert field in issue_paths(response)
    assert site_in_list(admin, site["id"]) == site


@pytest.mark.parametrize("field", [*ESTABLISHMENT, "address", "timezone"])
def test_null_clears_a_site_field(admin, field):
    site = new_site(admin, address="1 Main St", timezone="UTC")
    url = f"/api/sites/{site['id']}"
    admin.patch_json(url, {"streetAddress": "12 Factory Lane", "city": "Springfield", "state": "IL",
                           "zip": "62701", "naicsCode": "336111",
                           "industryDescription": "Manufacturing", "ein": "123456789",
                           "establishmentType": 2})
    before = site_in_list(admin, site["id"])
    assert before[field] is not None
    response = admin.patch_json(url, {field: None}, expect_errors=True)
    assert response.status_int == 200, response.text
    assert response.json[field] is None
    after = site_in_list(admin, site["id"])
    assert after == {**before, field: None}


def test_invalid_site_update_reports_every_bad_field(admin):
    site = new_site(admin)
    response = admin.patch_json(f"/api/sites/{site['id']}",
                                {"zip": "1", "ein": "2", "naicsCode": "3", "state": "XYZ",
                                 "establishmentType": 9}, status=400)
    assert {"zip", "ein", "naicsCode", "state", "establishmentType"} <= issue_paths(response)


def test_update_site_refuses_unknown_fields_and_says_where_areas_are_changed(admin):
    site = new_site(admin)
    response = admin.patch_json(f"/api/sites/{site['id']}",
                                {"id": 4242, "areas": [], "name": "Ok"}, status=400)
    issues = {issue["path"]: issue["message"] for issue in response.json["issues"]}
    assert set(issues) == {"id", "areas"}
    assert "POST /api/sites/{id}/areas" in issues["areas"]
    assert site_in_list(admin, site["id"])["name"] == site["name"]


# --- areas -----------------------------------------------------------------------


def test_create_area_defaults_to_kind_area(admin):
    site = new_site(admin)
    response = admin.post_json(f"/api/sites/{site['id']}/areas", {"name": "  Warehouse "}, status=201)
    area = response.json
    assert isinstance(area["id"], int)
    assert area["name"] == "Warehouse"
    assert area["kind"] == "area"
    assert area["parentId"] is None
    assert area["archived"] is False
    assert site_in_list(admin, site["id"], "")["areas"][0] == area


@pytest.mark.parametrize("kind", ["building", "area", "line", "other"])
def test_create_area_with_each_kind(admin, kind):
    site = new_site(admin)
    area = new_area(admin, site["id"], kind=kind)
    assert area["kind"] == kind
    assert site_in_list(admin, site["id"], "")["areas"][0]["kind"] == kind


@pytest.mark.parametrize(("body", "path"), [
    ({"kind": "room"}, "kind"),
    ({"kind": "Building"}, "kind"),
    ({"kind": 1}, "kind"),
    ({"kind": None}, "kind"),
    ({"name": ""}, "name"),
    ({"name": None}, "name"),
    ({"name": "n" * 201}, "name"),
    ({"parentId": "1"}, "parentId"),
    ({"parentId": 1.5}, "parentId"),
    ({"parentId": True}, "parentId"),
])
def test_create_area_validation(admin, body, path):
    site = new_site(admin)
    response = admin.post_json(f"/api/sites/{site['id']}/areas", {"name": "Ok", **body}, status=400)
    assert path in issue_paths(response)
    assert site_in_list(admin, site["id"])["areas"] == []


def test_create_area_requires_a_name(admin):
    site = new_site(admin)
    response = admin.post_json(f"/api/sites/{site['id']}/areas", {"kind": "line"}, status=400)
    assert "name" in issue_paths(response)


def test_parent_must_belong_to_the_same_site(admin):
    site = new_site(admin)
    other = new_site(admin, "Other Site")
    foreign = new_area(admin, other["id"], "Foreign")
    response = admin.post_json(f"/api/sites/{site['id']}/areas",
                               {"name": "Child", "parentId": foreign["id"]}, status=400)
    assert issue_paths(response) == {"parentId"}
    response = admin.post_json(f"/api/sites/{site['id']}/areas",
                               {"name": "Child", "parentId": 987654}, status=400)
    assert issue_paths(response) == {"parentId"}
    assert site_in_list(admin, site["id"])["areas"] == []


def test_parent_in_the_same_site_and_null_parent(admin):
    site = new_site(admin)
    parent = new_area(admin, site["id"], "Parent", kind="building")
    child = new_area(admin, site["id"], "Child", parentId=parent["id"])
    assert child["parentId"] == parent["id"]
    top = new_area(admin, site["id"], "Top", parentId=None)
    assert top["parentId"] is None


def test_create_area_refuses_fields_it_does_not_take(admin):
    site = new_site(admin)
    other = new_site(admin, "Other")
    response = admin.post_json(f"/api/sites/{site['id']}/areas",
                               {"name": "X", "archived": True, "siteId": other["id"]}, status=400)
    assert issue_paths(response) == {"archived", "siteId"}
    assert site_in_list(admin, site["id"])["areas"] == []
    assert site_in_list(admin, other["id"])["areas"] == []


def test_update_area_fields(admin):
    site = new_site(admin)
    area = new_area(admin, site["id"])
    url = f"/api/areas/{area['id']}"
    updated = admin.patch_json(url, {"name": " Paint Shop ", "kind": "building"}).json
    assert updated == {**area, "name": "Paint Shop", "kind": "building"}
    updated = admin.patch_json(url, {"archived": True}).json
    assert updated["archived"] is True
    assert site_in_list(admin, site["id"], "")["areas"] == []
    assert admin.patch_json(url, {"archived": False}).json["archived"] is False
    assert site_in_list(admin, site["id"], "")["areas"] == [{**area, "name": "Paint Shop",
                                                             "kind": "building"}]
    assert admin.patch_json(url, {}).json == {**area, "name": "Paint Shop", "kind": "building"}


def test_update_area_refuses_parent_and_site_changes_saying_what_to_do(admin):
    site = new_site(admin)
    other = new_site(admin, "Other")
    parent = new_area(admin, site["id"], "Parent")
    area = new_area(admin, site["id"], "Child")
    response = admin.patch_json(f"/api/areas/{area['id']}",
                                {"siteId": other["id"], "parentId": parent["id"]}, status=400)
    issues = {issue["path"]: issue["message"] for issue in response.json["issues"]}
    assert set(issues) == {"siteId", "parentId"}
    assert "create a new area" in issues["parentId"]
    [stored] = [a for a in site_in_list(admin, site["id"])["areas"] if a["id"] == area["id"]]
    assert stored == area


@pytest.mark.parametrize(("body", "path"), [
    ({"kind": "room"}, "kind"),
    ({"kind": None}, "kind"),
    ({"archived": "true"}, "archived"),
    ({"archived": 0}, "archived"),
    ({"archived": None}, "archived"),
    ({"name": ""}, "name"),
    ({"name": None}, "name"),
    ({"name": 7}, "name"),
])
def test_update_area_validation(admin, body, path):
    site = new_site(admin)
    area = new_area(admin, site["id"])
    response = admin.patch_json(f"/api/areas/{area['id']}", body, status=400)
    assert path in issue_paths(response)
    assert site_in_list(admin, site["id"])["areas"] == [area]


# --- unknown ids -----------------------------------------------------------------


def test_unknown_site_and_area_ids_are_404(admin):
    site = new_site(admin)
    assert admin.patch_json("/api/sites/999999", {"name": "X"}, status=404).json["error"]
    assert admin.post_json("/api/sites/999999/areas", {"name": "X"}, status=404).json["error"]
    assert admin.patch_json("/api/areas/999999", {"name": "X"}, status=404).json["error"]
    admin.patch_json("/api/sites/abc", {"name": "X"}, status=404)
    admin.patch_json("/api/areas/abc", {"name": "X"}, status=404)
    assert site_in_list(admin, site["id"]) == site


def test_body_must_be_json(admin):
    site = new_site(admin)
    admin.patch(f"/api/sites/{site['id']}", "name=X", content_type="application/x-www-form-urlencoded",
                status=415)
    response = admin.patch_json(f"/api/sites/{site['id']}", ["name"], status=400)
    assert response.json["issues"]
    response = admin.post(f"/api/sites/{site['id']}/areas", "{not json",
                          content_type="application/json", status=400)
    assert response.json["issues"]


def test_establishment_type_7_is_refused_saying_what_1_2_and_3_mean(admin):
    site = new_site(admin)
    response = admin.patch_json(f"/api/sites/{site['id']}", {"establishmentType": 7}, status=400)
    assert response.json["issues"] == [{"path": "establishmentType", "message":
        "Must be 1 (not a government entity), 2 (a state government entity) "
        "or 3 (a local government entity)"}]


@pytest.mark.parametrize(("field", "value"), [
    ("ein", "١٢٣٤٥٦٧٨٩"),  # Arabic-Indic digits
    ("ein", "12345678\u00b2"),
    ("zip", "\uff11\uff12\uff13\uff14\uff15"),  # full-width digits
    ("naicsCode", "৩৩৬১১১"),  # Bengali digits
])
def test_digits_other_than_ascii_are_refused_in_ein_zip_and_naics(admin, field, value):
    site = new_site(admin)
    response = admin.patch_json(f"/api/sites/{site['id']}", {field: value}, status=400)
    assert issue_paths(response) == {field}
    assert site_in_list(admin, site["id"])[field] is None


def test_an_archived_parent_area_is_refused_saying_so(admin):
    site = new_site(admin)
    parent = new_area(admin, site["id"], "Old hall")
    admin.patch_json(f"/api/areas/{parent['id']}", {"archived": True}, status=200)
    response = admin.post_json(f"/api/sites/{site['id']}/areas", {"name": "Bay", "parentId": parent["id"]},
                               status=400)
    assert response.json["issues"] == [{"path": "parentId", "message": "The parent area is archived"}]
