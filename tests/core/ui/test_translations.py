"""Every user-visible string of the pages is marked for translation and
present in the core's catalogue (`make messages` keeps it current)."""

from __future__ import annotations

from pathlib import Path

from babel.messages.extract import extract_from_dir
from babel.messages.pofile import read_po

import ehs_core

CORE = Path(ehs_core.__file__).parent


def test_the_catalogue_holds_every_marked_string():
    extracted = {
        message[2] if isinstance(message[2], str) else message[2][0]
        for message in extract_from_dir(
            str(CORE.parent),
            method_map=[("ehs_core/**.py", "python"), ("ehs_core/templates/**.html", "jinja2")],
            options_map={"ehs_core/templates/**.html": {"extensions": "jinja2.ext.i18n"}},
            keywords={"translate": None, "_": None, "gettext": None, "ngettext": (1, 2)})
    }
    with (CORE / "locale" / "en" / "LC_MESSAGES" / "ehs.po").open("rb") as po:
        catalogue = {m.id if isinstance(m.id, str) else m.id[0] for m in read_po(po) if m.id}
    missing = sorted(extracted - catalogue)
    assert not missing, f"run `make messages`: {missing[:10]}"
    assert (CORE / "locale" / "en" / "LC_MESSAGES" / "ehs.mo").exists()


def test_templates_have_no_unmarked_prose():
    """A crude guard: visible text between tags is either a variable or marked."""
    import re

    for template in (CORE / "templates").rglob("*.html"):
        text = template.read_text(encoding="utf-8")
        text = re.sub(r"{#.*?#}|{%.*?%}|{{.*?}}|<[^>]+>", " ", text, flags=re.S)
        text = re.sub(r"[\w-]+=\"[^\"]*\"", " ", text)  # attributes written by a macro
        words = re.findall(r"[A-Za-z]{3,}", text)
        assert not words, f"{template.relative_to(CORE)}: unmarked words {words[:8]}"
