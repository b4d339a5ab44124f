"""The ITA file's de-identification, kept in the core (`ehs_core.deidentify`)
since the California violent incident log needs the same; these names stay
for the plugin's modules and tests."""

from ehs_core.deidentify import (
    COMMON_WORDS,
    REPLACEMENT,
    TITLES,
    fold,
    identifiers,
    may_identify,
    may_name,
    name_parts,
    name_spans,
    remove_name,
    without_name,
)

__all__ = ["COMMON_WORDS", "REPLACEMENT", "TITLES", "fold", "identifiers", "may_identify", "may_name",
           "name_parts", "name_spans", "remove_name", "without_name"]
