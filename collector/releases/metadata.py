"""A release's authors (names and ORCID iDs, as the card, Croissant and the citation give them);
its version and licence rules live below the models (:mod:`collector.models.release_terms`)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from django.core.exceptions import ValidationError

# The rules named here too: migration 0022 names its validators by this module.
from collector.models.release_terms import validate_licence as validate_licence
from collector.models.release_terms import validate_version as validate_version

MAX_AUTHORS = 50


ORCID = re.compile(r"^(?:https?://orcid\.org/)?(\d{4}-\d{4}-\d{4}-\d{3}[\dX])$")
AUTHORS_HELP = (
    "Separated by semicolons, each “Family, Given” (or “Given Family”), optionally followed by "
    "an ORCID iD: “Lovelace, Ada, 0000-0002-1825-0097; Hopper, Grace”. One word is a group or "
    "an organisation."
)


NO_AUTHORS = "name the release's authors (they are cited): “Family, Given; Family, Given”"


@dataclass(frozen=True)
class Author:
    """One author as typed: a person (``family``, ``given``) or an entity (``name`` alone),
    with an ORCID iD (``https://orcid.org/…``) or none."""

    family: str
    given: str
    orcid: str = ""

    @property
    def name(self) -> str:
        """The name as cited: ``Family, Given`` (an entity: its name)."""
        return f"{self.family}, {self.given}" if self.given else self.family


def orcid_checksum_ok(digits: str) -> bool:
    """ISO 7064 MOD 11-2, ORCID's check character (the last of its 16)."""
    total = 0
    for d in digits[:-1]:
        total = (total + int(d)) * 2
    check = (12 - total % 11) % 11
    return digits[-1] == ("X" if check == 10 else str(check))


def author(text: str) -> Author:
    """One author of the form's list (:data:`AUTHORS_HELP`); a ValidationError for an ORCID iD
    that is not one or given to an entity."""
    parts = [p.strip() for p in text.split(",")]
    orcid = ""
    if len(parts) > 1 and (found := ORCID.match(parts[-1])):
        iid = found.group(1)
        if not orcid_checksum_ok(iid.replace("-", "")):
            raise ValidationError(f"{parts[-1]!r} is not an ORCID iD: its check digit is wrong")
        orcid = f"https://orcid.org/{iid}"
        parts.pop()
    elif len(parts) > 2:
        raise ValidationError(
            f"{text!r}: write an author as “Family, Given” or “Family, Given, ORCID iD” "
            "(an ORCID iD is 0000-0002-1825-0097)"
        )
    if len(parts) == 2 and parts[1]:
        family, given = parts
    else:
        given, _, family = parts[0].rpartition(" ")
    if not family:
        raise ValidationError(f"{text!r} has no name")
    if orcid and not given:
        raise ValidationError(
            f"{text!r}: an ORCID iD belongs to a person: “Family, Given, ORCID iD”"
        )
    return Author(family=family, given=given, orcid=orcid)


def parse_authors(text: str) -> list[str]:
    """Authors separated by ``;`` (:data:`AUTHORS_HELP`), each as written, blanks dropped; a
    ValidationError for none, more than :data:`MAX_AUTHORS`, a name over 200 characters or one
    :func:`author` refuses."""
    authors = [" ".join(part.split()) for part in text.split(";")]
    authors = [a for a in authors if a]
    if not authors:
        raise ValidationError(NO_AUTHORS)
    if len(authors) > MAX_AUTHORS:
        raise ValidationError(f"at most {MAX_AUTHORS} authors")
    if any(len(a) > 200 for a in authors):
        raise ValidationError("an author's name is at most 200 characters")
    for a in authors:
        author(a)
    return authors


def person(text: str) -> dict[str, str]:
    """A CITATION.cff author: a person (``family-names``, ``given-names``, ``orcid`` when
    given) or an entity (``name``: one word, a group or an organisation)."""
    a = author(text)
    if not a.given:
        return {"name": a.family}
    return {"family-names": a.family, "given-names": a.given} | (
        {"orcid": a.orcid} if a.orcid else {}
    )


def author_name(text: str) -> str:
    """An author as cited, without the ORCID iD (a release's stored authors are as typed; one
    stored before they were checked is shown as it is)."""
    try:
        return author(text).name
    except ValidationError:
        return text
