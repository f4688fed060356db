"""Every bad input names its line and its problem, and creates nothing (command and form)."""

from __future__ import annotations

import gzip

import pytest
from django.core.management import CommandError
from django.test import override_settings

from collector.models import Area, Ballot, Item, Study, Token
from collector.studies import importing
from tests.collector.helpers import create_study_cmd

pytestmark = pytest.mark.django_db

BAD_TOKENS = [
    (
        "area,token\nSales,crm\nSales,seo\nSales,CRM\n",
        "tokens, line 4: duplicate token 'CRM' in area 'Sales' (first on line 2)",
    ),
    (
        "area,token\nSales,crm\nSales,seo\nLegal,contract\n",
        "tokens, line 4: area 'Legal' has only one token",
    ),
    ("", "tokens: the file is empty"),
    ("  \n\n", "tokens: the file is empty"),
    ("area,token\n", "tokens: the file has a header but no rows"),
    (
        "area,token\nSales,crm\nSales,seo,extra\n",
        "tokens, line 3: expected 2 columns (area,token), found 3",
    ),
    ("area,token\nSales,crm\nSales\n", "tokens, line 3: expected 2 columns (area,token), found 1"),
    ("area,token\nSales,crm\n,seo\n", "tokens, line 3: the area is empty"),
    (b"area,token\nSales,crm\nSales,caf\xe9\n", "tokens, line 3: undecodable byte 0xe9"),
    (
        gzip.compress(b"area,token\nSales,crm\nSales,seo\n"),
        "tokens: the file is compressed (gzip): unpack it and upload the plain file",
    ),
]


def _nothing_created() -> None:
    for model in (Study, Area, Token, Item, Ballot):
        assert not model.objects.exists(), model.__name__


@pytest.mark.parametrize(("data", "message"), BAD_TOKENS)
def test_create_study_refuses_bad_token_files_naming_the_line(tmp_path, data, message):
    with pytest.raises(CommandError) as info:
        create_study_cmd(tmp_path, data)
    assert message in str(info.value)
    _nothing_created()


@override_settings(MAX_UPLOAD_BYTES=100)
def test_create_study_refuses_a_file_over_the_size_limit(tmp_path):
    with pytest.raises(CommandError, match="over the limit of 100 bytes"):
        create_study_cmd(tmp_path, "area,token\n" + "Sales,term\n" * 20)
    _nothing_created()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--alpha", "1.5"], "alpha must lie strictly between 0 and 1, got 1.5"),
        (["--alpha", "0"], "alpha must lie strictly between 0 and 1, got 0.0"),
        (["--m", "0"], "M must be between 1 and 1000, got 0"),
        (["--m", "5000"], "M must be between 1 and 1000, got 5000"),
        (["--ballots", "0"], "n_b must be between 1 and 20, got 0"),
        (["--ballots", "9"], "ballot 6 would hold 1 item(s)"),
    ],
)
def test_create_study_refuses_parameters_out_of_range(tmp_path, args, message):
    with pytest.raises(CommandError) as info:
        create_study_cmd(tmp_path, importing_tokens(), *args)
    assert message in str(info.value)
    _nothing_created()


def importing_tokens() -> str:
    return "area,token\n" + "".join(f"Sales,t{i}\n" for i in range(8))


def test_create_study_prints_the_slug_alone_on_its_last_line(tmp_path):
    out = create_study_cmd(tmp_path, importing_tokens())
    study = Study.objects.get()
    assert out.rstrip("\n").splitlines()[-1] == study.slug
    assert "Comparisons in all (Eq. 3):" in out
    assert study.items.count() == 28


def test_it_reads_tsv_without_a_header_and_items_lists():
    areas = importing.parse_tokens("Sales\tcrm\nSales\tseo\nSales\tb2b\n", max_bytes=1000)
    assert [(a.name, a.tokens, a.pairs) for a in areas] == [
        ("Sales", ["crm", "seo", "b2b"], [(0, 1), (0, 2), (1, 2)])
    ]
    items = importing.parse_items(
        "area,token_a,token_b\nSales,crm,seo\nLegal,tort,contract\n", max_bytes=1000
    )
    assert [(a.name, a.tokens, a.pairs) for a in items] == [
        ("Sales", ["crm", "seo"], [(0, 1)]),
        ("Legal", ["tort", "contract"], [(0, 1)]),
    ]


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ("area,token_a,token_b\nSales,crm,seo\nSales,seo,crm\n", "line 3: duplicate item"),
        ("area,token_a,token_b\nSales,crm,crm\n", "line 2: an item needs two different tokens"),
        ("area,token_a,token_b\nSales,crm\n", "line 2: expected 3 columns"),
    ],
)
def test_item_lists_are_checked_too(data, message):
    with pytest.raises(importing.ImportFailed) as info:
        importing.parse_items(data, max_bytes=1000)
    assert message in str(info.value)


def test_items_must_use_tokens_of_the_token_list():
    tokens = importing.parse_tokens("Sales,crm\nSales,seo\n", max_bytes=1000)
    with pytest.raises(importing.ImportFailed, match="line 1: token 'b2b' is not in area 'Sales'"):
        importing.parse_items("Sales,crm,b2b\n", max_bytes=1000, tokens=tokens)


def test_a_seeded_sample_keeps_at_most_k_items_per_area_in_order():
    import numpy as np

    areas = importing.parse_tokens(importing_tokens(), max_bytes=1000)
    a = importing.sample_items(areas, 5, np.random.default_rng(1))
    b = importing.sample_items(areas, 5, np.random.default_rng(1))
    assert a[0].pairs == b[0].pairs and len(a[0].pairs) == 5
    assert a[0].pairs == sorted(a[0].pairs)


def test_a_gzipped_target_list_is_refused_as_compressed():
    packed = gzip.compress(b"target,candidate\ncat,kitten\ncat,dog\n")
    with pytest.raises(importing.ImportFailed) as info:
        importing.parse_targets(packed, max_bytes=10**6)
    assert str(info.value) == (
        "targets: the file is compressed (gzip): unpack it and upload the plain file"
    )
