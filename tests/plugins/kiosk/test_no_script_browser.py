"""The reporting link in Chromium with JavaScript turned off (project rule:
pages work without JavaScript): a person on a phone fills the form, adds a
photo and sends it; the browser's own form post files the report, with its
photo, and the thanks page names its reference (test_plain_post.py holds
the same post's other answers: errors by their fields, a second send).
No axe run here: axe-core is a script, which this page may not run."""

from __future__ import annotations

from playwright.sync_api import expect

from tests.core.attachments import samples

PHONE = (390, 844)


def test_a_report_with_a_photo_is_filed_from_a_phone_without_javascript(live, new_page, tmp_path):
    admin = live.admin()
    site = admin.post_json("/api/sites", {"name": "Plant North"}).json["id"]
    link = admin.post_json("/api/kiosks", {"name": "Gate tablet", "siteId": site}).json
    photo = tmp_path / "pallet.png"
    photo.write_bytes(samples.PNG)
    page = new_page(viewport=PHONE, java_script_enabled=False)
    page.goto(f"{live.url}/k/{link['token']}")
    expect(page.get_by_role("heading", name="Report an incident")).to_be_visible()
    page.get_by_label("What happened? (short title)").fill("Pallet blocking the fire exit")
    page.get_by_label("How serious?").select_option(label="High")
    page.locator("#occurredAt").fill("2024-05-01T08:15")
    page.get_by_label("Your name").fill("Pat Doe")
    page.locator("input[type=file]").set_input_files(str(photo))
    page.get_by_role("button", name="Send report").click()
    expect(page.get_by_role("heading", name="Thank you")).to_be_visible()
    expect(page.get_by_text("INC-0001")).to_be_visible()
    incident = admin.get("/api/incidents/1").json
    assert incident["title"] == "Pallet blocking the fire exit" and incident["severity"] == "high"
    assert [f["filename"] for f in incident["attachments"]] == ["pallet.png"]
    assert admin.get("/api/incidents").json["total"] == 1
