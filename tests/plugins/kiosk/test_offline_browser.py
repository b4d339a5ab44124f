"""The reporting link without a network (issue #39 item 2), in Chromium
against a live server: once opened, the page opens again with the network
gone; a report with two photos sent then waits on the device ("Waiting to
send") and reaches the server once, with both photos, when the network
returns ("Sent as INC-0001"), then leaves the device; its repeat files
nothing twice; axe finds nothing serious on a phone-size screen.

"The network gone" is both Chromium's offline mode for the context and the
server stopped: the offline mode does not reach a service worker's own
requests (microsoft/playwright#2311), so without the stop a page served by
the network would pass for one served from the device."""

from __future__ import annotations

import io
import json
import os
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from playwright.sync_api import expect

from ehs_core.browser_testing import assert_accessible
from ehs_core.testing import PASSWORD, Client, base_settings, free_port
from tests.plugins.kiosk.support import HEADER, REPORTS, new_link, new_site

PHONE = (390, 844)


@dataclass
class Live:
    """The application served over HTTP, on a server that can be stopped
    and started again on the same address (the network going and coming)."""

    url: str
    port: int
    app: Any
    engine: Any
    server: Any

    def admin(self) -> Client:
        browser = Client(self.app, origin=self.url)
        browser.post_json("/api/setup", {"organizationName": "Acme Works", "name": "Ada Admin",
                                         "email": "admin@acme.test", "password": PASSWORD}, status=201)
        return browser

    def down(self) -> None:
        self.server.shutdown()
        self.server.runner.join(10)

    def up(self) -> None:
        from webtest.http import StopableWSGIServer

        for _ in range(50):  # the old listening socket may take a moment to go
            try:
                self.server = StopableWSGIServer.create(self.app, host="127.0.0.1", port=self.port, threads=4)
                break
            except OSError:
                time.sleep(0.2)
        assert self.server.wait(), "the live server did not start again"


@pytest.fixture
def live(tmp_path: Path, smtp_server: Any, monkeypatch: pytest.MonkeyPatch) -> Iterator[Live]:
    from webtest.http import StopableWSGIServer

    from ehs_core.config import configure
    from ehs_core.jobs import start_in_process_runner
    from ehs_core.migrations import upgrade

    for name in [k for k in os.environ if k.startswith("EHS_") and not k.startswith("EHS_TEST_")]:
        monkeypatch.delenv(name)
    monkeypatch.delenv("MAX_UPLOAD_MB", raising=False)
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    database = f"sqlite:///{tmp_path}/offline.sqlite"
    settings = base_settings(database, smtp_server.port, str(tmp_path / "uploads"))
    config = configure(dict(settings, **{"sqlalchemy.url": database, "ehs.public_url": url}))
    upgrade(config.registry)
    app = config.make_wsgi_app()
    runner = start_in_process_runner(config.registry, periodic=False)
    server = StopableWSGIServer.create(app, host="127.0.0.1", port=port, threads=4)
    live = Live(url, port, app, config.registry["db.engine"], server)
    try:
        assert server.wait(), "the live server did not start"
        yield live
    finally:
        live.server.shutdown()
        if runner is not None:
            runner.stop()
        config.registry["db.engine"].dispose()


def jpeg(colour: tuple[int, int, int]) -> bytes:
    from PIL import Image

    target = io.BytesIO()
    Image.new("RGB", (8, 6), colour).save(target, format="JPEG")
    return target.getvalue()


def counts(live: Live) -> tuple[int, int]:
    """(incidents, attachments) the server holds."""
    from ehs_core.attachments.models import Attachment
    from ehs_core.incidents.models import Incident

    with live.engine.connect() as conn:
        return (conn.execute(sa.select(sa.func.count()).select_from(Incident)).scalar(),
                conn.execute(sa.select(sa.func.count()).select_from(Attachment)).scalar())


# The page's outbox as stored on the device (IndexedDB), read by the test.
OUTBOX = """() => new Promise((resolve, reject) => {
  const open = indexedDB.open("ehs-kiosk-outbox");
  open.onerror = () => reject(open.error);
  open.onsuccess = () => {
    const db = open.result;
    if (!db.objectStoreNames.contains("reports")) { db.close(); resolve([]); return; }
    const all = db.transaction("reports").objectStore("reports").getAll();
    all.onsuccess = () => {
      db.close();
      resolve(all.result.map(e => ({clientId: e.clientId, report: e.report,
                                    files: e.files.map(f => ({name: f.name, size: f.blob.size}))})));
    };
  };
})"""


def test_a_report_with_two_photos_made_offline_is_delivered_once_when_back_online(live, new_page, tmp_path):
    admin = live.admin()
    site = new_site(admin, "Plant North")
    link = new_link(admin, "Gate tablet", site_id=site)
    photos = [tmp_path / "first.jpg", tmp_path / "second.jpg"]
    photos[0].write_bytes(jpeg((200, 30, 30)))
    photos[1].write_bytes(jpeg((30, 30, 200)))

    page = new_page(viewport=PHONE)
    page.goto(f"{live.url}/k/{link['token']}")
    # The worker keeps the page: the page says it opens without a network.
    page.get_by_text("This page also opens without a network").wait_for()
    # Chromium finds nothing that keeps it from installing the page as an
    # app, but that Playwright's browser context is a private one.
    cdp = page.context.new_cdp_session(page)
    errors = cdp.send("Page.getInstallabilityErrors")["installabilityErrors"]
    assert [error["errorId"] for error in errors if error["errorId"] != "in-incognito"] == []
    manifest = cdp.send("Page.getAppManifest")
    assert manifest["errors"] == [] and manifest["url"].startswith(f"{live.url}/k/{link['token']}/")
    cdp.detach()
    assert_accessible(page)

    page.context.set_offline(True)
    live.down()
    page.reload()  # from the device: nothing answers on the network
    expect(page.get_by_role("heading", name="Report an incident")).to_be_visible()
    assert "Gate tablet" in page.locator(".link-name").inner_text()
    page.get_by_label("What happened? (short title)").fill("Oil leak under the press")
    page.get_by_label("How serious?").select_option("high")
    page.set_input_files("#photos", [str(path) for path in photos])
    page.get_by_role("button", name="Send report").click()

    page.get_by_role("heading", name="Waiting to send").wait_for()
    expect(page.locator("#outbox")).to_have_text("Waiting to send: 1 report(s) kept on this device.")
    waiting = page.evaluate(OUTBOX)
    assert len(waiting) == 1
    assert waiting[0]["report"]["title"] == "Oil leak under the press"
    assert [f["name"] for f in waiting[0]["files"]] == ["first.jpg", "second.jpg"]
    assert waiting[0]["report"]["clientId"] == waiting[0]["clientId"]
    assert_accessible(page)
    # Opened again, still without a network: the report waits, and it is no
    # draft for the next person to continue (nothing of it on the page).
    page.reload()
    expect(page.locator("#outbox")).to_have_text("Waiting to send: 1 report(s) kept on this device.")
    assert page.locator("#draft-offer").is_hidden()
    assert page.get_by_label("What happened? (short title)").input_value() == ""
    assert "Oil leak" not in page.content()
    assert counts(live) == (0, 0)  # nothing reached the server
    live.up()

    page.context.set_offline(False)  # the browser's "online": the outbox goes
    expect(page.locator("#outbox")).to_have_text("Sent as INC-0001.", timeout=20_000)
    assert_accessible(page)
    assert counts(live) == (1, 2)
    assert page.evaluate(OUTBOX) == []  # it left the device once confirmed

    incident = admin.get("/api/incidents/1", status=200).json
    assert (incident["title"], incident["severity"], incident["channel"]) == (
        "Oil leak under the press", "high", "kiosk")
    assert sorted(item["contentType"] for item in incident["attachments"]) == ["image/jpeg", "image/jpeg"]
    assert sorted(admin.get(item["url"]).body for item in incident["attachments"]) == sorted(
        path.read_bytes() for path in photos)

    # The same report sent again (an answer lost on the way): the same
    # incident, no photo attached twice.
    again = Client(live.app, origin=live.url).post(
        REPORTS, params=[("report", json.dumps(waiting[0]["report"]))],
        upload_files=[("files", path.name, path.read_bytes(), "image/jpeg") for path in photos],
        content_type="multipart/form-data", headers={HEADER: link["token"]}, status=200)
    assert again.json["reference"] == "INC-0001"
    assert counts(live) == (1, 2)

    # Opened again: nothing waits, nothing of the report is on the page.
    page.reload()
    page.get_by_text("This page also opens without a network").wait_for()
    assert page.locator("#outbox").inner_text() == ""
    assert page.get_by_label("What happened? (short title)").input_value() == ""


def open_offline(live: Live, page: Any, token: str) -> None:
    """The link's page opened once, then the network gone."""
    page.goto(f"{live.url}/k/{token}")
    page.get_by_text("This page also opens without a network").wait_for()
    page.context.set_offline(True)
    live.down()


def test_the_person_who_waits_sees_the_reference_when_it_is_sent(live, new_page):
    admin = live.admin()
    site = new_site(admin, "Plant North")
    link = new_link(admin, "Gate tablet", site_id=site)
    page = new_page(viewport=PHONE)
    open_offline(live, page, link["token"])
    page.get_by_label("What happened? (short title)").fill("Forklift too fast in aisle 3")
    page.get_by_role("button", name="Send report").click()
    expect(page.get_by_role("heading", name="Waiting to send")).to_be_focused()
    assert page.locator("#report").is_hidden()
    live.up()
    page.context.set_offline(False)
    expect(page.locator("#reference")).to_have_text("INC-0001", timeout=20_000)
    expect(page.get_by_role("heading", name="Thank you")).to_be_focused()
    assert page.locator("#queued").is_hidden()
    assert_accessible(page)
    assert counts(live) == (1, 0)


def test_a_waiting_report_the_server_refuses_comes_back_to_the_form(live, new_page):
    admin = live.admin()
    north = new_site(admin, "Plant North")
    south = new_site(admin, "Plant South")
    link = new_link(admin, "Gate tablet")
    page = new_page(viewport=PHONE)
    open_offline(live, page, link["token"])
    page.get_by_label("What happened? (short title)").fill("Loose railing")
    page.get_by_label("Site").select_option(str(south))
    page.get_by_role("button", name="Send report").click()
    page.get_by_role("heading", name="Waiting to send").wait_for()
    admin.patch_json(f"/api/sites/{south}", {"archived": True}, status=200)  # meanwhile
    live.up()
    page.context.set_offline(False)
    # Not lost and not sent: back in the form, the error beside its field.
    page.locator("#siteId-error").wait_for(state="visible", timeout=20_000)
    expect(page.get_by_text("A report kept on this device was not accepted")).to_be_visible()
    assert page.get_by_label("What happened? (short title)").input_value() == "Loose railing"
    assert page.evaluate(OUTBOX) == []
    assert_accessible(page)
    page.get_by_label("Site").select_option(str(north))
    page.get_by_role("button", name="Send report").click()
    expect(page.locator("#reference")).to_have_text("INC-0001")
    assert counts(live) == (1, 0)


KEPT = """async () => ({
  caches: (await caches.keys()).filter(name => name.startsWith("ehs-kiosk:")).length,
  workers: (await navigator.serviceWorker.getRegistrations()).length
})"""


def test_a_revoked_link_keeps_nothing_on_the_device(live, new_page):
    admin = live.admin()
    new_site(admin, "Plant North")
    link = new_link(admin, "Gate tablet")
    page = new_page(viewport=PHONE)
    page.goto(f"{live.url}/k/{link['token']}")
    page.get_by_text("This page also opens without a network").wait_for()
    assert page.evaluate(KEPT) == {"caches": 1, "workers": 1}
    admin.patch_json(f"/api/kiosks/{link['id']}", {"revoked": True}, status=200)
    assert page.reload().status == 404
    expect(page.get_by_role("heading", name="This reporting link does not work")).to_be_visible()
    for _ in range(50):
        if page.evaluate(KEPT) == {"caches": 0, "workers": 0}:
            break
        time.sleep(0.1)
    assert page.evaluate(KEPT) == {"caches": 0, "workers": 0}
