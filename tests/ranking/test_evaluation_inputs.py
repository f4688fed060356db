"""Reading gold rankings, model scores, word vectors and votes; clear errors for bad files."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from ranking import InputFileError, load_word_vectors, read_gold, read_votes
from ranking.files import (
    PairScorer,
    ScoreTable,
    WordVectors,
    detect_gold_format,
    item_scores,
    read_model_scores,
)


def write(path: Path, text: str | bytes) -> Path:
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


STUDY = (
    "rank,item_id,area,token_a,token_b,score,last_ballot,appearances,wins,ties,x_1,x_2\n"
    "1,2,sales,lead,prospect,0.9,2,40,30,2,0.8,0.9\n"
    "2,0,sales,lead,invoice,0.6,2,40,20,0,0.6,0.5\n"
    "3,1,sales,invoice,prospect,0.2,1,20,4,0,0.2,\n"
)


def test_a_study_ranking_export_is_read_with_its_areas_ranks_and_ballots(tmp_path: Path) -> None:
    gold = read_gold(write(tmp_path / "ranking.csv", STUDY))
    assert gold.format == "study"
    # Held in item_id order, as the web application holds the study's gold.
    assert gold.item_ids.tolist() == [0, 1, 2]
    assert gold.ranks.tolist() == [2.0, 3.0, 1.0]
    assert gold.areas == ("sales", "sales", "sales")
    assert gold.last_ballot is not None and gold.last_ballot.tolist() == [2, 1, 2]
    assert gold.scores is not None and gold.scores.tolist() == [0.6, 0.2, 0.9]


def test_rated_pairs_with_comments_and_a_header_are_read_as_gensim_reads_them(
    tmp_path: Path,
) -> None:
    path = write(
        tmp_path / "pairs.tsv",
        "# a comment\nWord 1\tWord 2\tHuman (mean)\ntiger\tcat\t7.35\nnew york\tcity\t8\n"
        "book\tpaper\t7.35\n\n",
    )
    gold = read_gold(path)
    assert detect_gold_format(path) == "pairs"
    assert gold.token_a == ("tiger", "new york", "book")
    assert gold.ranks.tolist() == [2.5, 1.0, 2.5]  # equal scores share their mid-rank
    assert gold.item_ids.tolist() == [0, 1, 2]


def test_whitespace_separated_pairs_and_a_grouped_file_are_detected(tmp_path: Path) -> None:
    pairs = read_gold(write(tmp_path / "p.txt", "old new 1.58\nsmart  intelligent 9.2\n"))
    assert pairs.token_b == ("new", "intelligent")
    grouped_path = write(
        tmp_path / "g.csv",
        "query,candidate,score\ncar,auto,3\ncar,tree,0\nsun,star,2\nsun,moon,1\n",
    )
    assert detect_gold_format(grouped_path) == "grouped"
    grouped = read_gold(grouped_path)
    assert grouped.format == "grouped"
    assert grouped.token_a == ("car", "car", "sun", "sun")


@pytest.mark.parametrize(
    ("text", "line", "message"),
    [
        ("a\tb\t1\nc\td\n", 2, "expected 3 columns"),
        ("a\tb\t1\nc\td\tnan\n", 2, "finite"),
        ("a\tb\t1\nc\td\tinf\n", 2, "finite"),
        ("a\tb\t1\nc\td\t1\ne\tf\tmany\n", 3, "not a number"),
        (b"a\tb\t1\nc\td\t2\n\xff\tx\t3\n", 3, "not UTF-8"),
    ],
)
def test_a_bad_rated_pairs_file_names_its_line(
    tmp_path: Path, text: str | bytes, line: int, message: str
) -> None:
    path = write(tmp_path / "bad.tsv", text)
    with pytest.raises(InputFileError, match=message) as caught:
        read_gold(path)
    assert caught.value.line == line
    assert f"line {line}" in str(caught.value)
    assert isinstance(caught.value, ValueError)


def test_a_study_export_with_a_repeated_rank_or_a_short_row_names_its_line(
    tmp_path: Path,
) -> None:
    repeated = STUDY.replace("3,1,sales", "2,1,sales")
    with pytest.raises(InputFileError, match="rank 2 appears twice") as caught:
        read_gold(write(tmp_path / "r.csv", repeated))
    assert caught.value.line == 4
    short = STUDY.replace("2,0,sales,lead,invoice,0.6,2,40,20,0,0.6,0.5", "2,0,sales")
    with pytest.raises(InputFileError, match="expected 12 columns") as caught:
        read_gold(write(tmp_path / "s.csv", short))
    assert caught.value.line == 3


def test_model_scores_match_token_pairs_in_either_order(tmp_path: Path) -> None:
    gold = read_gold(write(tmp_path / "pairs.tsv", "tiger\tcat\t7\nbook\tpaper\t5\nsun\tsky\t1\n"))
    table = read_model_scores(write(tmp_path / "m.csv", "token_a,token_b,score\ncat,tiger,0.8\n"
                                                       "book,paper,0.3\n"))  # fmt: skip
    assert np.isnan(item_scores(table, gold)[2])
    assert item_scores(table, gold)[:2].tolist() == [0.8, 0.3]
    tsv = read_model_scores(write(tmp_path / "m.tsv", "paper\tbook\t0.25\n"))
    assert tsv.by_pair == {("book", "paper"): 0.25}


def test_model_scores_by_item_id_use_the_golds_ids(tmp_path: Path) -> None:
    gold = read_gold(write(tmp_path / "ranking.csv", STUDY))
    table = read_model_scores(write(tmp_path / "m.csv", "item_id,score\n0,0.5\n2,0.7\n"))
    scores = item_scores(table, gold)
    assert gold.item_ids.tolist() == [0, 1, 2]
    assert scores[[0, 2]].tolist() == [0.5, 0.7] and np.isnan(scores[1])


@pytest.mark.parametrize(
    ("text", "line", "message"),
    [
        ("a,b,0.1\nc,d\n", 2, "expected 3 columns"),
        ("a,b,0.1\nc,d,nan\n", 2, "finite"),
        ("a,b,0.1\nb,a,0.2\n", 2, "scored 0.1 on line 1"),
        ("item_id,score\nx,0.2\n", 2, "item_id is not a whole number"),
    ],
)
def test_a_bad_scores_file_names_its_line(
    tmp_path: Path, text: str, line: int, message: str
) -> None:
    with pytest.raises(InputFileError, match=message) as caught:
        read_model_scores(write(tmp_path / "bad.csv", text))
    assert caught.value.line == line


def test_in_memory_per_item_scores_must_fit_the_gold(tmp_path: Path) -> None:
    gold = read_gold(write(tmp_path / "pairs.tsv", "a\tb\t1\nc\td\t2\n"))
    with pytest.raises(ValueError, match="one entry per gold item"):
        item_scores(np.array([1.0]), gold)


def test_an_empty_score_table_is_a_pair_scorer_that_scores_nothing(tmp_path: Path) -> None:
    gold = read_gold(write(tmp_path / "pairs.tsv", "a\tb\t1\nc\td\t2\n"))
    empty = ScoreTable(name="x")
    assert isinstance(empty, PairScorer)  # a table without item ids scores pairs
    assert np.isnan(item_scores(empty, gold)).all()
    scores = item_scores(ScoreTable(name="z", by_pair={("a", "b"): 0.5}), gold)
    assert scores[0] == 0.5 and np.isnan(scores[1])


def vectors_text(header: bool) -> str:
    rows = ["cat 1 0 0", "tiger 0.9 0.1 0", "New_York 0 1 0", "york 0 0.5 0.5", "new 0 1 1"]
    return ("5 3\n" if header else "") + "\n".join(rows) + "\n"


@pytest.mark.parametrize(
    ("name", "header", "format"),
    [("v.txt", True, "word2vec"), ("v.vec", True, "fasttext"), ("g.txt", False, "glove")],
)
def test_text_vectors_of_each_format_score_pairs_by_cosine(
    tmp_path: Path, name: str, header: bool, format: str
) -> None:
    path = write(tmp_path / name, vectors_text(header))
    for chosen in (format, None):  # named, and detected
        vectors = load_word_vectors(path, chosen)  # type: ignore[arg-type]
        scores = vectors.score_pairs(
            ["cat", "Tiger", "new york", "cat"], ["tiger", "cat", "cat", "dog"]
        )
        expected = 0.9 / np.sqrt(0.82)
        assert scores[:2] == pytest.approx([expected, expected])  # "Tiger" found lowercased
        assert scores[2] == pytest.approx(0.0)  # the phrase New_York, found lowercased
        assert np.isnan(scores[3])  # dog is out of vocabulary


def test_binary_word2vec_vectors_are_read_through_gensim(tmp_path: Path) -> None:
    from gensim.models import KeyedVectors

    kv = KeyedVectors(3)
    kv.add_vectors(["cat", "tiger"], np.array([[1, 0, 0], [0.9, 0.1, 0]], dtype=np.float32))
    path = tmp_path / "v.bin"
    kv.save_word2vec_format(str(path), binary=True)
    vectors = load_word_vectors(path)
    assert vectors.score_pairs(["cat"], ["tiger"])[0] == pytest.approx(0.9 / np.sqrt(0.82))


def test_a_multi_word_token_missing_as_a_phrase_is_the_mean_of_its_words() -> None:
    vectors = WordVectors(["sales", "lead", "x"], np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]))
    assert vectors.score_pairs(["sales lead"], ["x"])[0] == pytest.approx(1.0)
    assert np.isnan(vectors.score_pairs(["sales pitch"], ["x"])[0])
    assert vectors.out_of_vocabulary(["sales pitch", "lead"]) == ["sales pitch"]


def test_case_policies_exact_lower_and_gensims_fold() -> None:
    words = ["Paris", "paris", "PARIS", "city"]
    matrix = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0], [1.0, 0.0]])
    exact = WordVectors(words, matrix, case="exact")
    lower = WordVectors(words, matrix, case="lower")
    fold = WordVectors(words, matrix, case="fold")
    assert np.isnan(exact.score_pairs(["PaRiS"], ["city"])[0])
    assert lower.score_pairs(["PaRiS"], ["city"])[0] == pytest.approx(0.0)  # "paris"
    assert fold.score_pairs(["PaRiS"], ["city"])[0] == pytest.approx(1.0)  # first: "Paris"
    limited = WordVectors(words, matrix, restrict_vocab=3)
    assert np.isnan(limited.score_pairs(["paris"], ["city"])[0])


@pytest.mark.parametrize(
    ("text", "line", "message"),
    [
        ("3 2\na 1 2\nb 3 4\nc 5\n", 4, "expected a word and 2 numbers"),
        ("a 1 2\nb 3 4 5\n", 2, "expected a word and 2 numbers"),
        ("2 2\na 1 nan\nb 3 4\n", 2, "NaN or infinite"),
        ("2 2\na 1 2\nb -inf 4\n", 3, "NaN or infinite"),
        (b"2 2\na 1 2\nb\xff 3 4\n", 3, "not UTF-8"),
        ("two 2\na 1 2\n", 1, "count dimension"),
    ],
)
def test_a_bad_vectors_file_names_its_line(
    tmp_path: Path, text: str | bytes, line: int, message: str
) -> None:
    fmt = "glove" if isinstance(text, str) and text.startswith("a ") else "word2vec"
    with pytest.raises(InputFileError, match=message) as caught:
        load_word_vectors(write(tmp_path / "bad.txt", text), fmt)  # type: ignore[arg-type]
    assert caught.value.line == line


def test_a_word2vec_text_file_read_as_glove_is_named_for_what_it_looks_like(
    tmp_path: Path,
) -> None:
    path = write(tmp_path / "vectors.txt", "2 3\ncat 1 2 3\ndog 4 5 6\n")
    with pytest.raises(InputFileError) as caught:
        load_word_vectors(path, "glove")
    assert caught.value.line == 1
    assert "line 1 (2 3) looks like a word2vec text header" in str(caught.value)
    assert "format word2vec" in str(caught.value) and "1 numbers" not in str(caught.value)
    read = load_word_vectors(path, "word2vec")  # what the message offers: it reads
    assert read.words == ["cat", "dog"]


def test_a_glove_line_of_one_number_against_two_is_counted_in_words(tmp_path: Path) -> None:
    with pytest.raises(InputFileError, match="expected a word and 1 number, found 2 numbers"):
        load_word_vectors(write(tmp_path / "v.txt", "a 1\nb 2 3\n"), "glove")


VOTES_HEADER = "ballot,comparison_id,item_left,item_right,choice,voter,created_at,response_ms\n"


def test_votes_are_matched_to_the_rankings_item_ids_and_ballots(tmp_path: Path) -> None:
    gold = read_gold(write(tmp_path / "ranking.csv", STUDY))
    votes = read_votes(
        write(
            tmp_path / "votes.csv",
            VOTES_HEADER + "1,1,2,0,left,v1,t,100\n1,2,1,2,tie,v2,t,90\n2,3,0,2,right,v1,t,80\n",
        ),
        gold,
    )
    # Positions in the gold's order (item_id order: here the positions are the ids).
    assert votes.pairs.tolist() == [[2, 0], [1, 2], [0, 2]]
    assert votes.first_score.tolist() == [1.0, 0.5, 0.0]
    assert votes.voter.tolist() == [0, 1, 0]
    assert [b.tolist() for b in votes.ballot_items] == [[0, 1, 2], [0, 2]]


def test_votes_marked_voter_excluded_are_left_out(tmp_path: Path) -> None:
    gold = read_gold(write(tmp_path / "ranking.csv", STUDY))
    votes = read_votes(
        write(
            tmp_path / "votes.csv",
            VOTES_HEADER.rstrip("\n") + ",voter_excluded\n"
            "1,1,2,0,left,v1,t,100,false\n"
            "1,2,1,2,tie,v2,t,90,True\n"
            "1,3,1,0,right,v3,t,70,\n"
            "2,4,0,2,right,v1,t,80,1\n",
        ),
        gold,
    )
    # v2's vote and v1's second vote are marked excluded; v2 then never appears.
    assert votes.pairs.tolist() == [[2, 0], [1, 0]]
    assert votes.first_score.tolist() == [1.0, 0.0]
    assert votes.voter_names == ("v1", "v3") and votes.voter.tolist() == [0, 1]


@pytest.mark.parametrize(
    ("row", "message"),
    [
        ("1,1,2,0,maybe,v1,t,1", "choice must be left, right or tie"),
        ("1,1,2,7,left,v1,t,1", "item ids must be integers of the ranking"),
        ("1,1,2,2,left,v1,t,1", "itself"),
        ("0,1,2,0,left,v1,t,1", "start at 1"),
    ],
)
def test_a_bad_votes_file_names_its_line(tmp_path: Path, row: str, message: str) -> None:
    gold = read_gold(write(tmp_path / "ranking.csv", STUDY))
    path = write(tmp_path / "votes.csv", VOTES_HEADER + "1,9,2,0,left,v1,t,1\n" + row + "\n")
    with pytest.raises(InputFileError, match=message) as caught:
        read_votes(path, gold)
    assert caught.value.line == 3
