"""A release's ``croissant.json``: Croissant 1.0 metadata (JSON-LD) of its data files, with the
Responsible-AI fields that apply (how the data was collected, who annotated it, personal data).

Each data file is a ``cr:FileObject`` (its path relative to the JSON file, its media type and
SHA-256) and each record set of the export registry (the ranking, the votes, a target study's
comparisons) a ``cr:RecordSet`` whose fields name their column and its type, so that
``mlcroissant`` reads the records.
"""

from __future__ import annotations

from typing import Any

from collector.releases import synthetic
from collector.releases.metadata import author

CONFORMS_TO = "http://mlcommons.org/croissant/1.0"
CONTEXT: dict[str, Any] = {
    "@language": "en",
    "@vocab": "https://schema.org/",
    "citeAs": "cr:citeAs",
    "column": "cr:column",
    "conformsTo": "dct:conformsTo",
    "cr": "http://mlcommons.org/croissant/",
    "rai": "http://mlcommons.org/croissant/RAI/",
    "data": {"@id": "cr:data", "@type": "@json"},
    "dataType": {"@id": "cr:dataType", "@type": "@vocab"},
    "dct": "http://purl.org/dc/terms/",
    "equivalentProperty": "cr:equivalentProperty",
    "examples": {"@id": "cr:examples", "@type": "@json"},
    "extract": "cr:extract",
    "field": "cr:field",
    "fileProperty": "cr:fileProperty",
    "fileObject": "cr:fileObject",
    "fileSet": "cr:fileSet",
    "format": "cr:format",
    "includes": "cr:includes",
    "isLiveDataset": "cr:isLiveDataset",
    "jsonPath": "cr:jsonPath",
    "key": "cr:key",
    "md5": "cr:md5",
    "parentField": "cr:parentField",
    "path": "cr:path",
    "recordSet": "cr:recordSet",
    "references": "cr:references",
    "regex": "cr:regex",
    "repeated": "cr:repeated",
    "replace": "cr:replace",
    "samplingRate": "cr:samplingRate",
    "sc": "https://schema.org/",
    "separator": "cr:separator",
    "source": "cr:source",
    "subField": "cr:subField",
    "transform": "cr:transform",
}
MEDIA = {".csv": "text/csv", ".tsv": "text/tab-separated-values",
         ".jsonl": "application/jsonlines", ".json": "application/json"}  # fmt: skip
DATA_TYPES = {"integer": "sc:Integer", "float": "sc:Float", "boolean": "sc:Boolean",
              "text": "sc:Text"}  # fmt: skip


def croissant(card: dict[str, Any], sums: dict[str, str]) -> dict[str, Any]:
    """The Croissant document of a release: ``card`` its card (its ``configs``, the export
    registry's record sets, are the record sets), ``sums`` each data file's SHA-256."""
    files = [
        {"@type": "cr:FileObject", "@id": name, "name": name, "contentUrl": name,
         "encodingFormat": MEDIA.get(name[name.rfind("."):], "application/octet-stream"),
         "sha256": digest}
        for name, digest in sums.items() if name[name.rfind("."):] in MEDIA
    ]  # fmt: skip
    record_sets = [
        {
            "@type": "cr:RecordSet",
            "@id": config["name"],
            "name": config["name"],
            "description": config["description"],
            "field": [
                {
                    "@type": "cr:Field",
                    "@id": f"{config['name']}/{column}",
                    "name": column,
                    "dataType": DATA_TYPES[kind],
                    "source": {
                        "fileObject": {"@id": config["file"]},
                        "extract": {"column": column},
                    },
                }
                for column, kind in zip(config["columns"], config["kinds"], strict=True)
            ],  # fmt: skip
        }
        for config in card["configs"]
        if config["file"] in sums
    ]
    c, crowd = card["counts"], card["crowd"]
    checks = crowd["attention_checks"]
    simulated = synthetic.sentence(card)
    said = f" {simulated}" if simulated else ""
    return {
        "@context": CONTEXT,
        "@type": "sc:Dataset",
        "conformsTo": CONFORMS_TO,
        "name": card["title"],
        "description": (
            f"A ranking of {c['items']} items by relatedness from {c['votes']} pairwise votes of "
            f"{synthetic.voters_words(card)}, who were asked “{card['question']}”.{said}"
        ),
        "version": card["version"],
        "datePublished": card["date"],
        "license": card["licence_url"],
        **({"url": card["url"]} if card.get("url") else {}),
        "creator": [creator(a) for a in card["authors"]],
        "citeAs": card["citation"],
        "keywords": synthetic.keywords(card),
        "inLanguage": card["language"],
        "distribution": files,
        "recordSet": record_sets,
        "rai:dataCollection": card["protocol"] + said,
        "rai:dataCollectionType": synthetic.collection_types(card),
        "rai:dataCollectionTimeframe": [
            d for d in (card["dates"]["first_vote"], card["dates"]["last_vote"]) if d
        ],
        "rai:dataAnnotationProtocol": (
            f"Each comparison asked “{card['question']}” of two items; voters answered left, "
            f"right{' or a tie' if crowd['allow_ties'] else ''}, at most "
            f"{crowd['per_voter_cap']} comparisons per ballot. "
            + (
                f"One comparison in {checks['every']} was an attention check."
                if checks
                else "No attention checks."
            )
        ),  # fmt: skip
        "rai:dataAnnotationPlatform": sorted(crowd["sources"]) or ["none"],
        "rai:annotationsPerItem": (
            f"{c['votes']} votes over {c['items']} items; M = {card['parameters']['m']} "
            "comparisons per item in each ballot an item is in."
        ),
        "rai:annotatorDemographics": [
            f"{synthetic.voters_words(card)}; no demographic information was collected.{said}"
        ],
        "rai:personalSensitiveInformation": [card["personal_data"]],
        **(
            {"rai:machineAnnotationTools": [synthetic.SIMULATOR]}
            if synthetic.share(card) != "none"
            else {}
        ),
    }


def creator(text: str) -> dict[str, Any]:
    """An author as a schema.org ``Person`` (``sameAs`` their ORCID iD) or, one word, an
    ``Organization``."""
    a = author(text)
    if not a.given:
        return {"@type": "sc:Organization", "name": a.family}
    return {"@type": "sc:Person", "name": f"{a.given} {a.family}", "familyName": a.family,
            "givenName": a.given, **({"sameAs": a.orcid} if a.orcid else {})}  # fmt: skip
