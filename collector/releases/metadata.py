"""What a release may be called and licensed under: its version (Semantic Versioning 2.0.0),
its licence (a short list of SPDX identifiers for data) and its authors."""

from __future__ import annotations

import re
from dataclasses import dataclass

from django.core.exceptions import ValidationError

# semver.org's regular expression for a version (MAJOR.MINOR.PATCH[-pre][+build]).
SEMVER = re.compile(
    r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)"
    r"(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?"
    r"(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?$"
)
MAX_VERSION = 40


@dataclass(frozen=True)
class Licence:
    spdx: str  # the SPDX identifier (CITATION.cff, the card)
    name: str
    url: str  # Croissant's license (a URL)
    hub: str  # the Hugging Face card's license id


LICENCES: dict[str, Licence] = {
    lic.spdx: lic
    for lic in (
        Licence("CC-BY-4.0", "Creative Commons Attribution 4.0",
                "https://creativecommons.org/licenses/by/4.0/", "cc-by-4.0"),
        Licence("CC-BY-SA-4.0", "Creative Commons Attribution-ShareAlike 4.0",
                "https://creativecommons.org/licenses/by-sa/4.0/", "cc-by-sa-4.0"),
        Licence("CC-BY-NC-4.0", "Creative Commons Attribution-NonCommercial 4.0",
                "https://creativecommons.org/licenses/by-nc/4.0/", "cc-by-nc-4.0"),
        Licence("CC-BY-NC-SA-4.0", "Creative Commons Attribution-NonCommercial-ShareAlike 4.0",
                "https://creativecommons.org/licenses/by-nc-sa/4.0/", "cc-by-nc-sa-4.0"),
        Licence("CC0-1.0", "Creative Commons Zero 1.0 (public domain dedication)",
                "https://creativecommons.org/publicdomain/zero/1.0/", "cc0-1.0"),
        Licence("ODC-By-1.0", "Open Data Commons Attribution 1.0",
                "https://opendatacommons.org/licenses/by/1-0/", "odc-by"),
        Licence("ODbL-1.0", "Open Database License 1.0",
                "https://opendatacommons.org/licenses/odbl/1-0/", "odbl"),
        Licence("PDDL-1.0", "Open Data Commons Public Domain Dedication and License 1.0",
                "https://opendatacommons.org/licenses/pddl/1-0/", "pddl"),
    )
}  # fmt: skip
MAX_AUTHORS = 50


def validate_version(value: str) -> None:
    """A Semantic Versioning 2.0.0 version (``1.0.0``, ``1.1.0-rc.1``)."""
    if len(value) > MAX_VERSION or not SEMVER.match(value):
        raise ValidationError(
            f"{value!r} is not a version MAJOR.MINOR.PATCH (Semantic Versioning: 1.0.0, "
            f"1.1.0, 2.0.0-rc.1; at most {MAX_VERSION} characters)"
        )


def validate_licence(value: str) -> None:
    if value not in LICENCES:
        raise ValidationError(
            f"{value!r} is not a licence offered here: one of {', '.join(LICENCES)} (SPDX ids)"
        )


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
