"""The reporting links' screens (/admin/links) per role: safety managers and
admins create, rename, restrict and revoke links as the API allows; others
are refused. Each link's printable poster carries a QR code of
<public_url>/k/<token> (optionally with the area to preselect), decoded
here with zxing-cpp; A4 and Letter print sizes."""

from __future__ import annotations

import io

import zxingcpp
from PIL import Image

from ehs_core.testing import PUBLIC_URL, form_with
from tests.plugins.kiosk.support import LINKS, new_area, new_link, new_site


def decode_qr(png: bytes) -> str:
    [found] = zxingcpp.read_barcodes(Image.open(io.BytesIO(png)))
    assert found.format == zxingcpp.BarcodeFormat.QRCode
    return found.text


def links_of(browser) -> dict[str, dict]:
    return {link["name"]: link for link in browser.get(LINKS).json}


def test_a_safety_manager_creates_a_link_restricted_to_a_site(admin, make_user):
    site = new_site(admin, "Plant North")
    manager = make_user("safety_manager")
    page = manager.get("/admin/links")
    assert "No reporting link yet." in page.text
    form = form_with(page, "/admin/links")
    form["name"], form["siteId"] = "Canteen poster", str(site)
    listed = form.submit(status=302).follow()
    link = links_of(manager)["Canteen poster"]
    assert link["siteId"] == site and link["revoked"] is False
    assert f'id="link-{link["id"]}"' in listed.text and "Reports on Plant North only" in listed.text
    assert f'/k/{link["token"]}' in listed.text


def test_errors_stand_next_to_the_fields(admin, make_user):
    manager = make_user("safety_manager")
    refused = manager.post("/admin/links", {"name": "", "siteId": ""}, status=400)
    assert 'id="name-error"' in refused.text
    refused = manager.post("/admin/links", {"name": "Gate", "siteId": "999999"}, status=400)
    assert 'id="siteId-error"' in refused.text and "Unknown site" in refused.text
    assert links_of(manager) == {}


def test_rename_change_the_site_revoke_and_restore(admin, client):
    site = new_site(admin, "Plant North")
    link = new_link(admin, "Gate tablet")
    admin.post(f"/admin/links/{link['id']}", {"name": "Main gate", "siteId": str(site)}, status=302)
    changed = links_of(admin)["Main gate"]
    assert changed["siteId"] == site
    admin.post(f"/admin/links/{link['id']}", {"revoked": "true"}, status=302)
    assert links_of(admin)["Main gate"]["revoked"] is True
    client.get(f"/k/{link['token']}", status=404)  # revoked: stops at once
    page = admin.get("/admin/links")
    assert "Revoked" in page.text and f"/admin/links/{link['id']}/poster" not in page.text
    admin.get(f"/admin/links/{link['id']}/poster", status=404)
    admin.post(f"/admin/links/{link['id']}", {"revoked": "false"}, status=302)
    client.get(f"/k/{link['token']}", status=200)
    bad = admin.post(f"/admin/links/{link['id']}", {"name": " "}, status=400)
    assert "field-error" in bad.text
    admin.post("/admin/links/999999", {"name": "X"}, status=404)


def test_the_poster_qr_code_decodes_to_the_link(admin):
    link = new_link(admin, "Gate tablet")
    poster = admin.get(f"/admin/links/{link['id']}/poster")
    url = f"{PUBLIC_URL}/k/{link['token']}"
    assert url in poster.text and "Report a safety incident" in poster.text
    assert "Print it at 100% scale, then check" in poster.text  # the % was eaten: "100{}cale"
    qr = poster.html.select_one("img.poster-qr")
    assert url in qr["alt"]
    image = admin.get(qr["src"])
    assert image.content_type == "image/png"
    assert decode_qr(image.body) == url


def test_a_poster_can_preselect_an_area_and_the_paper(admin, client):
    site = new_site(admin, "Plant North")
    area = new_area(admin, site, "Loading dock")
    other = new_area(admin, new_site(admin, "Plant South"), "Yard")
    link = new_link(admin, "Dock poster", site_id=site)
    poster = admin.get(f"/admin/links/{link['id']}/poster", {"area": str(area), "paper": "letter"})
    url = f"{PUBLIC_URL}/k/{link['token']}?area={area}"
    assert decode_qr(admin.get(poster.html.select_one("img.poster-qr")["src"]).body) == url
    assert "poster-letter.css" in poster.text and "Loading dock" in poster.text
    # The page the code opens has that area chosen.
    opened = client.get(f"/k/{link['token']}?area={area}")
    assert opened.html.select_one(f'#areaId option[value="{area}"]').has_attr("selected")
    # An area of another site than the link's is not offered nor encoded.
    poster = admin.get(f"/admin/links/{link['id']}/poster", {"area": str(other)})
    assert decode_qr(admin.get(poster.html.select_one("img.poster-qr")["src"]).body) == url.split("?")[0]
    assert "Yard" not in poster.text and "poster-a4.css" in poster.text


def test_the_print_sizes_are_a4_and_letter(admin):
    for paper, size in (("a4", "A4"), ("letter", "letter")):
        css = admin.get(f"/kiosk-static/poster-{paper}.css").text
        assert f"size: {size} portrait" in css


def test_supervisors_and_reporters_are_refused(admin, make_user):
    link = new_link(admin, "Gate tablet")
    for role in ("supervisor", "reporter"):
        browser = make_user(role)
        browser.get("/admin/links", status=403)
        browser.post("/admin/links", {"name": "Mine"}, status=403)
        browser.get(f"/admin/links/{link['id']}/poster", status=403)
        browser.get(f"/admin/links/{link['id']}/qr.png", status=403)
        assert "/admin/links" not in browser.get("/").text
    assert "/admin/links" in make_user("safety_manager").get("/").text
