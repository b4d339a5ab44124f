"""Names and other identifiers out of text that leaves the employer's hands.

Shared by every record given to outsiders without personal details: the
OSHA plugin's ITA case file (1904.29(b)(10) and 1904.41(b): no employee
names; ITA's guidance asks that the narratives, Form 301 items 14-17, hold
none either) and the California violent incident log (Labor Code
§6401.9(d): no information that identifies any person involved).

The person's name is removed from every text cell (`remove_name`); other
likely identifiers (e-mail addresses, phone numbers, employee or badge
numbers, social security numbers) cannot be told from ordinary text with
certainty: the ITA file reports them as checks for the safety manager to
review (`identifiers`), and the violent incident log, which is handed to
any employee who asks, replaces them (`scrub_identifiers`).

How a name is found:

- every part of the case's name ("Zed Quill": "Zed" and "Quill"; "Anne-Marie
  Dubois": "Anne", "Marie" and "Dubois"), as a whole word, whatever its case
  and accents ("Zoe" finds "Zoë" and "ZOE");
- a part that is also a common English word ("Mark", "Will", "Rose") is
  only taken where it names someone: written with a capital ("Mark slipped"),
  after a title ("mr mark") or next to another part of the name ("mark
  quill"). Written small it is the word ("mark the spill"). At the start of
  a sentence a capital tells nothing, so a common-word part followed there
  by an article or pronoun ("Mark the spill", "Will it hold") is read as the
  word; any other capitalised occurrence is removed, since a name left in
  the file is the worse mistake;
- a title before a removed name goes with it, and a run of removed words is
  one "the employee" ("Mr Quill slipped" -> "the employee slipped").
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Iterable
from typing import Any

import phonenumbers

# Name parts that are also everyday English words (first names and surnames).
COMMON_WORDS = frozenset("""
    amber april art august autumn baker bell bill black bob brook brown buck bush carter chase chip cliff
    cole cook crystal dale dawn dean don drew earl faith fields fisher ford fox frank gene glen grace grant
    green guy hall heath holly hope hunt hunter iris ivy jack jade jay jewel joy june king lance lane lily
    long may miles mark mason max miller moss nick page pat patience penny pierce price ray read reed rich
    river robin rock rose rusty sandy saw shepherd skip sky smith stone storm summer sue tanner terry ward
    wade warren white will win wood woods young
""".split())
TITLES = frozenset("mr mrs ms miss mx dr sir madam madame mister".split())
# After a sentence-initial common word these make it the verb or noun, not a name.
WORD_FOLLOWERS = frozenset("""
    a an the this that these those it its them all each every any some off up out down with on in
""".split())
REPLACEMENT = "the employee"

WORD = re.compile(r"[^\W\d_]+")
SENTENCE_END = re.compile(r"[.!?]\s*$")

# Three decimal digits anywhere (any script's, as phonenumbers reads them): what a
# social security, employee or phone number needs at least. phonenumbers takes a
# number without "+" as a US one (7 or 10 digits) and one with "+" as a country
# code and a national number of at least 2 digits; "Bay 4" or "Station 17" is none.
THREE_DIGITS = re.compile(r"(?:\D*+\d){3}")  # with match(): one pass, nothing to backtrack
EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
SSN = re.compile(r"\b\d{3}-\d{2}-\d{4}\b")
# "employee no. 4411", "badge #A-2231", "emp id 0097", "ID: 55120", "clock number 778".
EMPLOYEE_NUMBER = re.compile(
    r"\b(?:employee|emp|badge|staff|clock|payroll|personnel|worker|id)\.?\s*(?:no|number|num|id|#)?\.?"
    r"\s*[:#]?\s*[A-Z]{0,3}-?\d{3,}\b", re.IGNORECASE)


def fold(word: str) -> str:
    """A word without accents and case ("Zoë" and "ZOE" -> "zoe")."""
    if word.isascii():  # nothing to decompose; ASCII's case folding is lower()
        return word.lower()
    decomposed = unicodedata.normalize("NFKD", word)
    return "".join(c for c in decomposed if not unicodedata.combining(c)).casefold()


def name_parts(name: str | None) -> frozenset[str]:
    """The folded words of a person's name; single letters (initials) are
    left out, as they would take every "a" and "I" with them."""
    return frozenset(fold(part) for part in WORD.findall(name or "") if len(part) > 1)


def _sentence_start(text: str, start: int) -> bool:
    before = text[:start]
    return not before.strip() or bool(SENTENCE_END.search(before))


def may_name(text: str, parts: frozenset[str]) -> bool:
    """Whether a part of the name can be a word of `text`: folding works
    character by character (NFKD only reorders the combining marks it then
    drops), so a folded word of `text` is a piece of the folded `text`.
    Most cells do not hold the name: this spares them the word-by-word pass."""
    folded = fold(text)
    return any(part in folded for part in parts)


def name_spans(text: str, parts: frozenset[str]) -> list[tuple[int, int]]:
    """Where the person's name is in `text`, as (start, end) spans, a title
    before a name and runs of adjacent name words each merged into one."""
    words = list(WORD.finditer(text))
    folded = [fold(m.group()) for m in words]
    hits = [word in parts for word in folded]
    common = [word in COMMON_WORDS for word in folded]
    taken = [hit and not is_common for hit, is_common in zip(hits, common, strict=True)]

    def titled(i: int) -> bool:
        return i > 0 and folded[i - 1] in TITLES \
            and not text[words[i - 1].end():words[i].start()].strip(" .")

    def names_someone(i: int) -> bool:
        beside_name = (i > 0 and taken[i - 1]) or (i + 1 < len(words) and hits[i + 1] and not common[i + 1])
        if titled(i) or beside_name:
            return True
        if not words[i].group()[:1].isupper():
            return False
        following = folded[i + 1] if i + 1 < len(words) else ""
        return not (_sentence_start(text, words[i].start()) and following in WORD_FOLLOWERS)

    for i in range(len(words)):  # common-word parts, left to right (a name's parts come in order)
        if hits[i] and common[i] and names_someone(i):
            taken[i] = True
    spans: list[list[int]] = []
    for i, match in enumerate(words):
        if not taken[i]:
            continue
        start = match.start()
        if titled(i):
            start = words[i - 1].start()
        if spans and not text[spans[-1][1]:start].strip(" \t\n-\u2010"):  # "Anne-Marie Dubois": one
            spans[-1][1] = match.end()
        else:
            spans.append([start, match.end()])
    return [(start, end) for start, end in spans]


def remove_name(text: str, name: str | frozenset[str] | None, replacement: str = REPLACEMENT) -> str:
    """`text` with every part of `name` replaced by "the employee" (or
    `replacement`; capitalised where a capital started a sentence); `name`
    may be given as its `name_parts` already."""
    parts = name if isinstance(name, frozenset) else name_parts(name)
    if not parts or not text or not may_name(text, parts):
        return text
    pieces, last = [], 0
    for start, end in name_spans(text, parts):
        pieces.append(text[last:start])
        capital = text[start].isupper() and _sentence_start(text, start)
        pieces.append(replacement[:1].upper() + replacement[1:] if capital else replacement)
        last = end
    pieces.append(text[last:])
    return "".join(pieces)


def without_name(name: str | None, cell: Callable[..., str],
                 among: Iterable[str | None] | None = None) -> Callable[..., str]:
    """A text-cell writer (`cell(value, limit)`) that removes `name` first;
    `cell` itself when no part of the name can be in any of the texts
    `among` (the values the writer will be given, when known)."""
    parts = name_parts(name)
    if among is not None and not (parts and may_name("\n".join(v for v in among if v), parts)):
        return cell

    def clean(value: Any, limit: int = 255) -> str:
        return cell(remove_name(str(value), parts) if value is not None else None, limit)

    return clean


def may_identify(text: str) -> bool:
    """Whether `identifiers` can find anything in `text` (or in any of the
    texts joined into it)."""
    return "@" in text or THREE_DIGITS.match(text) is not None


def identifiers(text: str | None) -> list[str]:
    """The kinds of likely personal identifiers in `text` ("e-mail address",
    "phone number", "social security number", "employee number"), each once."""
    if not text or not may_identify(text):
        return []  # each kind below needs an "@" or 3 digits (see THREE_DIGITS): most text has neither
    found = []
    if EMAIL.search(text):
        found.append("e-mail address")
    if SSN.search(text):
        found.append("social security number")
    phones = phonenumbers.PhoneNumberMatcher(text, "US", leniency=phonenumbers.Leniency.POSSIBLE)
    if any(not SSN.fullmatch(match.raw_string) for match in phones):
        found.append("phone number")
    if EMPLOYEE_NUMBER.search(text):
        found.append("employee number")
    return found


# "1200 Main St", "45 N. Elm Avenue", "9 Harbor Blvd.": a house number and a street.
STREET_ADDRESS = re.compile(
    r"\b\d{1,6}\s+(?:[NSEW]\.?\s+)?(?:[A-Z][\w'-]*\.?\s+){1,4}"
    r"(?:st|street|ave|avenue|rd|road|blvd|boulevard|dr|drive|ln|lane|way|ct|court|pl|place|hwy|highway"
    r"|pkwy|parkway|ter|terrace|cir|circle)\b\.?", re.IGNORECASE)
# A title and the capitalised words after it: "Mr. Okafor", "Dr Ruth Mbeki".
TITLED_NAME = re.compile(
    r"\b(?i:mr|mrs|ms|miss|mx|dr|sir|madam|mister)\b\.?\s+(?:[A-Z][\w'-]+(?:\s+|$)){1,3}")


def _titled(text: str, person: str) -> str:
    def replace(match: re.Match[str]) -> str:
        capital = _sentence_start(text, match.start())
        trailing = match.group()[len(match.group().rstrip()):]
        return (person[:1].upper() + person[1:] if capital else person) + trailing

    return TITLED_NAME.sub(replace, text)


def scrub_identifiers(text: str | None, person: str = "a person") -> str | None:
    """`text` with likely identifiers replaced: e-mail addresses, social
    security numbers, phone numbers, employee or badge numbers, street
    addresses, and a title with the name after it ("Mr. Okafor" -> "a
    person"). Where a record goes to anyone who asks, a false alarm (a
    number that was not a phone's) costs less than an identifier left in."""
    if not text:
        return text
    text = _titled(text, person)
    text = STREET_ADDRESS.sub("[address]", text)
    if not may_identify(text):
        return text
    text = EMAIL.sub("[e-mail]", text)
    text = SSN.sub("[number]", text)
    text = EMPLOYEE_NUMBER.sub("[number]", text)
    pieces, last = [], 0
    for match in phonenumbers.PhoneNumberMatcher(text, "US", leniency=phonenumbers.Leniency.POSSIBLE):
        pieces.append(text[last:match.start])
        pieces.append("[phone]")
        last = match.end
    pieces.append(text[last:])
    return "".join(pieces)


def deidentify(text: str | None, names: Iterable[str | None], person: str = "a person") -> str | None:
    """`text` without any part of `names` (each replaced by `person`) and
    without the identifiers `scrub_identifiers` finds."""
    if not text:
        return text
    for name in names:
        text = remove_name(text, name, person)
    return scrub_identifiers(text, person)
