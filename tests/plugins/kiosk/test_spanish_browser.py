"""A whole report in Spanish on a phone (issue #39): a reporting link opened
by a browser whose language is Spanish shows the page in Spanish, the
report is filed in Spanish down to the thanks, axe-core finds no serious
or critical problem, and the visible language switch turns the page into
English, which then stays English."""

from __future__ import annotations

from playwright.sync_api import expect

from ehs_core.browser_testing import assert_accessible

PHONE = (390, 844)


def test_a_whole_report_in_spanish_on_a_phone_through_a_reporting_link(live, new_page):
    admin = live.admin()
    site = admin.post_json("/api/sites", {"name": "Planta Norte"}).json["id"]
    admin.post_json(f"/api/sites/{site}/areas", {"name": "Andén de carga"})
    link = admin.post_json("/api/kiosks", {"name": "Cartel de la entrada", "siteId": site}).json
    page = new_page(viewport=PHONE, locale="es-MX")
    page.goto(f"{live.url}/k/{link['token']}")
    assert page.locator("html").get_attribute("lang") == "es"
    expect(page.get_by_role("heading", name="Reportar un incidente")).to_be_visible()
    switch = page.get_by_role("navigation", name="Idioma")
    expect(switch.get_by_role("link", name="English")).to_be_visible()
    assert switch.get_by_role("link", name="Español").get_attribute("aria-current") == "true"
    assert_accessible(page)
    # Sent empty: the error by its field, in Spanish.
    page.get_by_role("button", name="Enviar reporte").click()
    assert page.locator("#title-error").inner_text() == "Complete este campo, por favor."
    expect(page.get_by_role("heading", name="Revise el reporte, por favor")).to_be_visible()
    assert_accessible(page)
    # The whole report, with the words of the trade.
    page.get_by_label("¿Qué pasó? (título breve)").fill("Derrame de aceite junto a la prensa 3")
    page.get_by_label("Tipo", exact=True).select_option(label="Casi accidente")
    page.get_by_label("¿Qué tan grave?").select_option(label="Alta")
    page.locator("#occurredAt").fill("2024-05-01T08:15")
    expect(page.get_by_label("Sitio", exact=True)).to_have_value(str(site))
    page.get_by_label("Área").select_option(label="Andén de carga")
    page.get_by_label("¿Dónde exactamente?").fill("Pasillo 3, junto a la prensa")
    page.get_by_label("¿Qué pasó? (detalles)").fill("Un compañero casi se resbala con el aceite.")
    page.get_by_label("¿Qué se hizo de inmediato?").fill("Se puso aserrín y se acordonó el área.")
    page.get_by_role("button", name="Enviar reporte").click()
    expect(page.get_by_role("heading", name="Gracias")).to_be_visible()
    expect(page.get_by_text("Su reporte se recibió con la referencia")).to_be_visible()
    page.locator("#reference").get_by_text("INC-0001").wait_for()
    expect(page.get_by_role("button", name="Reportar otro incidente")).to_be_visible()
    assert_accessible(page)
    incident = admin.get("/api/incidents/1").json
    assert (incident["title"], incident["type"], incident["severity"]) == (
        "Derrame de aceite junto a la prensa 3", "near_miss", "high")
    # The switch: English, kept for the pages that follow (a cookie), even
    # though the browser still asks for Spanish. No script needed: a link.
    page.get_by_role("navigation", name="Idioma").get_by_role("link", name="English").click()
    expect(page.get_by_role("heading", name="Report an incident")).to_be_visible()
    assert page.locator("html").get_attribute("lang") == "en"
    page.goto(f"{live.url}/k/{link['token']}")
    expect(page.get_by_role("button", name="Send report")).to_be_visible()
    assert page.get_by_role("navigation", name="Language").get_by_role(
        "link", name="English").get_attribute("aria-current") == "true"
    assert_accessible(page)
