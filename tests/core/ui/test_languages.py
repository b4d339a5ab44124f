"""Languages (issue #39): Spanish beside English. Each person chooses theirs
on the account page (`PATCH /api/auth/me`, answered by `GET /api/auth/me`);
only shipped locales are accepted; pages, numbers and dates follow it; mail
goes in each recipient's language; every marked string and every mail
template has its Spanish."""

from __future__ import annotations

from pathlib import Path

import pytest
from babel.messages.pofile import read_po

import ehs_core
import ehs_plugins
from ehs_core.testing import form_with, mail_html
from tests.core.auth.support import body_of, create_user

CORE = Path(ehs_core.__file__).parent
PLUGINS = Path(ehs_plugins.__file__).parent
DOMAINS = [CORE / "locale" / "{locale}" / "LC_MESSAGES" / "ehs.po"] + [
    PLUGINS / name / "locale" / "{locale}" / "LC_MESSAGES" / f"ehs_{name}.po"
    for name in ("analytics", "calosha", "kiosk", "osha")]


@pytest.mark.parametrize("template", DOMAINS, ids=lambda path: path.name)
def test_every_marked_string_of_every_domain_has_its_spanish(template):
    """Every msgid of the English catalogue (which `make messages` keeps
    equal to the extracted strings) has a Spanish msgstr, in every plural
    form, with the same placeholders; the compiled catalogue is there."""
    import re

    def read(locale):
        with Path(str(template).format(locale=locale)).open("rb") as po:
            return read_po(po, locale=locale)

    english, spanish = read("en"), read("es")
    placeholders = re.compile(r"%\(\w+\)[sd]|\$\{\w+\}")
    missing, broken = [], []
    for message in english:
        if not message.id:
            continue
        translated = spanish.get(message.id)
        strings = () if translated is None else (
            translated.string if isinstance(translated.string, tuple) else (translated.string,))
        if not strings or not all(strings) or "fuzzy" in translated.flags:
            missing.append(message.id)
            continue
        ids = message.id if isinstance(message.id, tuple) else (message.id,)
        wanted = set(placeholders.findall(" ".join(ids)))
        if any(set(placeholders.findall(text)) - wanted for text in strings) or (
                len(ids) == 1 and wanted - set(placeholders.findall(strings[0]))):
            broken.append(message.id)
    assert not missing, f"no Spanish for {len(missing)} strings of {template.name}: {missing[:10]}"
    assert not broken, f"placeholders differ in {template.name}: {broken[:10]}"
    assert Path(str(template).format(locale="es")).with_suffix(".mo").exists()


def subject(message):
    """The Subject header as the reader sees it (encoded words decoded)."""
    from email.header import decode_header, make_header

    return str(make_header(decode_header(message["Subject"])))


def test_every_mail_template_has_its_spanish(registry):
    """Each registered mail has a Spanish text (and HTML, where the English
    has one)."""
    english = registry["mail_templates"]
    spanish = registry["mail_templates_by_locale"]
    lacking = sorted(name for name in english if (name, "es") not in spanish)
    assert not lacking, lacking
    for name, (_subject, _body, html) in english.items():
        assert (html is None) == (spanish[(name, "es")][2] is None), name


def test_a_person_chooses_a_shipped_language_and_me_answers_it(admin, make_user):
    worker = make_user("reporter")
    assert worker.get("/api/auth/me").json["user"]["locale"] is None
    answer = worker.patch_json("/api/auth/me", {"locale": "es"}, status=200).json
    assert answer["user"]["locale"] == "es"
    assert worker.get("/api/auth/me").json["user"]["locale"] == "es"
    for refused in ("fr", "ES", "es-MX", "", 3):
        body = worker.patch_json("/api/auth/me", {"locale": refused}, status=400).json
        assert [issue["path"] for issue in body["issues"]] == ["locale"], body
    assert worker.get("/api/auth/me").json["user"]["locale"] == "es"
    worker.patch_json("/api/auth/me", {"locale": None}, status=200)
    assert worker.get("/api/auth/me").json["user"]["locale"] is None
    # An admin may set another's language, from the same shipped list only.
    user_id = worker.user["id"]
    admin.patch_json(f"/api/users/{user_id}", {"locale": "fr"}, status=400)
    assert admin.patch_json(f"/api/users/{user_id}", {"locale": "es"}, status=200).json["locale"] == "es"


def test_the_account_page_sets_the_language_of_the_pages_numbers_and_dates(admin, make_user):
    worker = make_user("supervisor", name="Rosa Díaz")
    page = worker.get("/account", status=200)
    assert '<html lang="en">' in page.text and "Your account" in page.text
    form = form_with(page, "/account/language")
    form["locale"] = "es"
    page = form.submit(status=302).follow(status=200)
    assert '<html lang="es">' in page.text
    assert "Su cuenta" in page.text and "Cerrar sesión" in page.text and "Guardado." in page.text
    assert "Your account" not in page.text
    assert worker.get("/api/auth/me").json["user"]["locale"] == "es"
    # Anything else is refused; the choice stays.
    worker.post("/account/language", {"locale": "fr"}, status=400)
    assert worker.get("/api/auth/me").json["user"]["locale"] == "es"
    # Another person's pages stay in theirs.
    assert "Your account" in admin.get("/account", status=200).text


def test_dates_and_numbers_follow_the_locale(registry):
    import datetime as dt

    from ehs_core.ui.rendering import day, in_locale, number, when

    moment = dt.datetime(2026, 3, 14, 14, 5, tzinfo=dt.UTC)
    with in_locale("en"):
        assert number(100000) == "100,000"
        assert day(moment.date()) == "14 Mar 2026"
    with in_locale("es"):
        assert number(100000) == "100.000"
        assert day(moment.date()) == "14 mar 2026"
        assert when(moment, "UTC").startswith("14 mar 2026, 14:05")


def test_sign_in_follows_the_browsers_language_among_the_shipped_ones(admin, client):
    spanish = client.get("/sign-in", headers={"Accept-Language": "es-MX,es;q=0.9,en;q=0.5"}, status=200)
    assert '<html lang="es">' in spanish.text and "Iniciar sesión" in spanish.text
    other = client.get("/sign-in", headers={"Accept-Language": "fr-FR,fr;q=0.9"}, status=200)
    assert '<html lang="en">' in other.text and "Sign in" in other.text


def test_mail_goes_in_each_recipients_language(admin, inbox):
    """A serious report's notice goes to two safety managers: one reads
    Spanish, one English; each gets it, subject and body, in theirs (one
    rendering per language)."""
    create_user(admin, "lucia@acme.example", role="safety_manager", name="Lucía Pérez")
    create_user(admin, "sam@acme.example", role="safety_manager", name="Sam Lee")
    users = {user["email"]: user for user in admin.get("/api/users").json}
    admin.patch_json(f"/api/users/{users['lucia@acme.example']['id']}", {"locale": "es"}, status=200)
    site = admin.post_json("/api/sites", {"name": "Planta Norte", "timezone": "America/Mexico_City"},
                           status=201).json["id"]
    inbox.settle()
    inbox.clear()
    admin.post_json("/api/incidents", {
        "title": "Caída de escalera", "type": "injury", "severity": "high", "siteId": site,
        "occurredAt": "2026-03-02T16:30:00Z"}, status=201)
    messages = {message["To"]: message for message in inbox.wait(3)}
    spanish, english = messages["lucia@acme.example"], messages["sam@acme.example"]
    assert subject(spanish).startswith("[alta] Se reportó INC-")
    assert "Un incidente de tipo lesión, de gravedad alta, en Planta Norte se reportó." in body_of(spanish)
    assert "Ocurrió: 2 mar 2026, 10:30" in body_of(spanish)
    assert '<html lang="es">' in mail_html(spanish) and "Si el botón no funciona" in mail_html(spanish)
    assert subject(english).startswith("[high] INC-")
    assert "reported: Caída de escalera" in subject(english)
    assert "A high injury incident at Planta Norte was reported." in body_of(english)
    assert "Occurred: 2 Mar 2026, 10:30" in body_of(english)
    assert '<html lang="en">' in mail_html(english)


def test_a_sign_in_link_goes_in_the_persons_language(admin, client, inbox):
    created = create_user(admin, "ana@acme.example", name="Ana Ruiz")
    admin.patch_json(f"/api/users/{created['id']}", {"locale": "es"}, status=200)
    inbox.settle()
    inbox.clear()
    client.post_json("/api/auth/magic-link", {"email": "ana@acme.example"}, status=204)
    [message] = inbox.wait(1)
    assert subject(message) == "Su enlace para iniciar sesión"
    assert "Hola, Ana Ruiz:" in body_of(message) and "15 minutos" in body_of(message)


def test_the_sign_in_page_shows_a_language_switch_that_keeps_its_choice(admin, client):
    page = client.get("/sign-in", status=200)
    switch = page.html.find("nav", class_="language-switch")
    links = {a.get_text(): a for a in switch.find_all("a")}
    assert set(links) == {"English", "Español"}
    assert links["English"].get("aria-current") == "true" and links["Español"]["lang"] == "es"
    chosen = client.get(links["Español"]["href"], status=200)
    assert '<html lang="es">' in chosen.text and "Iniciar sesión" in chosen.text
    assert any(header.startswith("_LOCALE_=es;") for header in chosen.headers.getall("Set-Cookie"))
    # Kept: the next page is Spanish without asking again, whatever the browser says.
    again = client.get("/sign-in", headers={"Accept-Language": "en"}, status=200)
    assert '<html lang="es">' in again.text
    # Signed in, the person's own choice rules (the default: English).
    client.login("admin@acme.test")
    assert '<html lang="en">' in client.get("/account", status=200).text


def test_an_invitation_goes_in_the_language_the_admin_chose_for_the_newcomer(admin, inbox):
    inbox.settle()
    inbox.clear()
    created = admin.post_json("/api/users", {"name": "Marta Gómez", "email": "marta@acme.example",
                                             "role": "supervisor", "locale": "es"}, status=201).json
    assert created["user"]["locale"] == "es"
    [message] = inbox.wait(1)
    assert subject(message) == "Lo invitan a Acme Works"
    assert "Lo invitan con el rol de supervisor (clasifica e investiga incidentes" in body_of(message)
    admin.post_json("/api/users", {"name": "Zoe", "email": "zoe@acme.example", "role": "reporter",
                                   "locale": "fr"}, status=400)
