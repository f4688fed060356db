"""What a release may be called and licensed under: its version (Semantic Versioning 2.0.0) and
its licence (a short list of SPDX identifiers for data); the release model validates both."""

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
