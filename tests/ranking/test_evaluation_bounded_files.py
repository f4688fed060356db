"""Model files are read within bounds: nothing is unpacked, a header's claim is checked against
the file's size, binary data and endless lines are refused as what they are, and only the
vectors (or scores) the gold can use are kept."""

from __future__ import annotations

import bz2
import gzip
import lzma
from pathlib import Path

import numpy as np
import pytest

from ranking import InputFileError, load_word_vectors
from ranking.files import (
    MAX_LINE_BYTES,
    GoldStandard,
    compression_of,
    detect_vector_format,
    read_model_scores,
    read_vector_file,
)

PLAIN = b"2 3\ncat 1 0 0\ntiger 0.9 0.1 0\n"


@pytest.mark.parametrize(
    ("packed", "name"),
    [
        (gzip.compress(PLAIN), "gzip"),
        (bz2.compress(PLAIN), "bzip2"),
        (lzma.compress(PLAIN), "xz"),
        (b"\x28\xb5\x2f\xfd" + b"\x00" * 20, "zstd"),
        (b"\x04\x22\x4d\x18" + b"\x00" * 20, "lz4"),
        (b"PK\x03\x04" + b"\x00" * 20, "zip"),
    ],
)
def test_a_compressed_file_is_refused_by_its_bytes_whatever_its_name(
    tmp_path: Path, packed: bytes, name: str
) -> None:
    path = tmp_path / "vectors.txt"  # a plain name: the bytes tell
    path.write_bytes(packed)
    assert compression_of(path) == name
    for fmt in (None, "word2vec", "word2vec-binary", "glove"):
        with pytest.raises(InputFileError, match=f"compressed \\({name}\\): unpack it"):
            load_word_vectors(path, fmt)  # type: ignore[arg-type]
    with pytest.raises(InputFileError, match="compressed"):
        read_model_scores(path)


def test_a_plain_file_named_like_an_archive_is_read_as_plain_text(tmp_path: Path) -> None:
    path = tmp_path / "vectors.txt.gz"
    path.write_bytes(PLAIN)
    vectors = load_word_vectors(path)
    assert vectors.score_pairs(["cat"], ["tiger"])[0] == pytest.approx(0.9 / np.sqrt(0.82))


@pytest.mark.parametrize(
    ("header", "fmt", "claim"),
    [
        (b"4000000000 3", "word2vec", "claims 4,000,000,000 vectors of 3 numbers"),
        (b"2 4000000000", "word2vec", "dimension of 4,000,000,000"),
        (b"3 9000000000", "fasttext", "dimension of 9,000,000,000"),
        (b"4000000000 3", "word2vec-binary", "claims 4,000,000,000 vectors of 3 numbers"),
        (b"300 300", "word2vec-binary", "take at least 360,600 bytes"),
    ],
)
def test_a_header_claiming_more_than_the_file_holds_is_refused_naming_it(
    tmp_path: Path, header: bytes, fmt: str, claim: str
) -> None:
    path = tmp_path / "v.txt"
    path.write_bytes(header + b"\ncat 1 0 0\n")
    with pytest.raises(InputFileError, match=claim) as caught:
        load_word_vectors(path, fmt)  # type: ignore[arg-type]
    assert f"the header '{header.decode()}'" in str(caught.value) and caught.value.line == 1


def test_random_bytes_given_as_glove_are_called_binary_data(tmp_path: Path) -> None:
    path = tmp_path / "random.txt"
    path.write_bytes(np.random.default_rng(0).bytes(200_000))
    for fmt in ("glove", "word2vec", "fasttext"):
        with pytest.raises(InputFileError, match="not a text vectors file: it holds binary data"):
            read_vector_file(path, fmt)  # type: ignore[arg-type]


def test_a_line_of_words_without_numbers_says_how_many_fields_it_has(tmp_path: Path) -> None:
    path = tmp_path / "prose.txt"
    path.write_text("Dear committee,\nplease find attached\n")
    with pytest.raises(InputFileError, match="line 1: the line has 2 fields and 'committee,' is"):
        load_word_vectors(path, "glove")
    path.write_text("hello\n")
    with pytest.raises(InputFileError, match="line 1: the line has 1 field: a vectors line is a"):
        load_word_vectors(path, "glove")


def test_a_line_longer_than_the_bound_is_refused_without_reading_it_whole(tmp_path: Path) -> None:
    path = tmp_path / "one-line.txt"
    path.write_bytes(b"a" * (MAX_LINE_BYTES + 10))
    with pytest.raises(InputFileError, match=f"line 1 is over {MAX_LINE_BYTES:,} bytes") as caught:
        load_word_vectors(path, "glove")
    assert caught.value.line == 1


def test_a_header_claiming_more_vectors_than_follow_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "short.txt"
    path.write_bytes(b"3 2\ncat 1 0\ntiger 1 1\n")
    with pytest.raises(InputFileError, match="claims 3 vectors but the file ends after 2"):
        load_word_vectors(path, "word2vec")


def test_binary_vectors_are_detected_by_content_and_read_as_gensim_writes_them(
    tmp_path: Path,
) -> None:
    from gensim.models import KeyedVectors

    rng = np.random.default_rng(1)
    words = ["cat", "tiger", "New_York", "straße"]
    matrix = rng.standard_normal((4, 5)).astype(np.float32)
    kv = KeyedVectors(5)
    kv.add_vectors(words, matrix)
    path = tmp_path / "stored-upload"  # no .bin name: the bytes after the header tell
    kv.save_word2vec_format(str(path), binary=True)
    assert detect_vector_format(path) == "word2vec-binary"
    read_words, read_matrix = read_vector_file(path, "word2vec-binary")
    assert read_words == words and np.array_equal(read_matrix, matrix)
    text = tmp_path / "v.txt"
    kv.save_word2vec_format(str(text), binary=False)
    assert detect_vector_format(text) == "word2vec"


@pytest.mark.parametrize("case", ["lower", "exact", "fold"])
def test_keeping_only_the_gold_tokens_vectors_scores_exactly_as_keeping_all(
    tmp_path: Path, case: str
) -> None:
    rng = np.random.default_rng(2)
    vocabulary = ["Paris", "paris", "PARIS", "city", "new_york", "New", "york", "sales", "lead"]
    vocabulary += [f"filler{k}" for k in range(200)]
    lines = [f"{w} {' '.join(f'{v:.6f}' for v in rng.standard_normal(8))}" for w in vocabulary]
    path = tmp_path / "g.txt"
    path.write_text("\n".join(lines) + "\n")
    token_a = ["PaRiS", "new york", "sales lead", "paris", "Lead"]
    token_b = ["city", "city", "paris", "unknown", "New York"]
    every = load_word_vectors(path, "glove", case=case)  # type: ignore[arg-type]
    kept = load_word_vectors(path, "glove", case=case, only_for=token_a + token_b)  # type: ignore[arg-type]
    assert len(kept.words) < 12 < len(every.words)
    np.testing.assert_array_equal(
        kept.score_pairs(token_a, token_b), every.score_pairs(token_a, token_b)
    )


def test_a_file_without_any_of_the_tokens_scores_no_pair(tmp_path: Path) -> None:
    path = tmp_path / "other.txt"
    path.write_text("apple 1 0\npear 0 1\n")
    vectors = load_word_vectors(path, "glove", only_for=["cat", "tiger"])
    assert vectors.words == [] and np.isnan(vectors.score_pairs(["cat"], ["tiger"])).all()


def test_cosines_scored_in_chunks_equal_a_direct_numpy_cosine(monkeypatch) -> None:
    from ranking.files import word_vectors

    rng = np.random.default_rng(4)
    words = [f"w{k}" for k in range(30)]
    matrix = rng.standard_normal((30, 7))
    vectors = word_vectors.WordVectors(words, matrix)
    a, b = rng.integers(0, 30, 500), rng.integers(0, 30, 500)
    unit = matrix / np.linalg.norm(matrix, axis=1, keepdims=True)
    expected = np.sum(unit[a] * unit[b], axis=1)
    monkeypatch.setattr(word_vectors, "_PAIRS_BYTES", 16 * 7 * 3)  # three pairs a chunk
    scores = vectors.score_pairs([words[i] for i in a], [words[i] for i in b])
    np.testing.assert_allclose(scores, expected, rtol=0, atol=1e-12)


def test_scores_of_pairs_outside_the_gold_are_checked_but_not_kept(tmp_path: Path) -> None:
    gold = GoldStandard.from_scores(["a", "c"], ["b", "d"], [2.0, 1.0])
    path = tmp_path / "m.csv"
    path.write_text("token_a,token_b,score\nb,a,0.5\nx,y,0.1\nd,c,0.2\nz,w,0.3\n")
    table = read_model_scores(path, only=gold)
    assert dict(table.by_pair) == {("a", "b"): 0.5, ("c", "d"): 0.2}
    path.write_text("token_a,token_b,score\nb,a,0.5\nx,y,nan\n")
    with pytest.raises(InputFileError, match="finite") as caught:
        read_model_scores(path, only=gold)
    assert caught.value.line == 3


def _area_gold() -> GoldStandard:
    """Two areas of four tokens, each with four of its six pairs as gold items."""
    token_a, token_b, areas = [], [], []
    for area in ("x", "y"):
        t = [f"{area}{k}" for k in range(4)]
        for a, b in ((0, 1), (0, 2), (1, 3), (2, 3)):
            token_a.append(t[a])
            token_b.append(t[b])
            areas.append(area)
    return GoldStandard(
        format="study",
        token_a=tuple(token_a),
        token_b=tuple(token_b),
        ranks=np.arange(1.0, 9.0),
        item_ids=np.arange(8),
        areas=tuple(areas),
    )


def test_keeping_only_what_the_gold_reads_gives_the_figures_of_the_whole_file(
    tmp_path: Path,
) -> None:
    from ranking.evaluation import evaluate

    gold = _area_gold()
    tokens = [f"{area}{k}" for area in ("x", "y") for k in range(4)] + ["outsider"]
    rng = np.random.default_rng(11)
    path = tmp_path / "m.csv"
    lines = [f"{a},{b},{rng.normal():.6f}" for i, a in enumerate(tokens) for b in tokens[i + 1 :]]
    path.write_text("token_a,token_b,score\n" + "\n".join(lines) + "\n")
    whole, kept = read_model_scores(path), read_model_scores(path, only=gold)

    def figures(model: object) -> dict:
        return evaluate(gold, model, rng=np.random.default_rng(3), retrieval_alpha=0.5)

    assert figures(kept) == figures(whole)
    assert figures(kept)["retrieval"]["queries"] == 8
    assert set(kept.by_pair) == {
        (a, b) for a, b in whole.by_pair if a[0] == b[0] and "outsider" not in (a, b)
    }
    items = set(zip(gold.token_a, gold.token_b, strict=True))
    gold_pairs_only = {pair: v for pair, v in whole.by_pair.items() if pair in items}
    narrowed = figures(type(whole)(name=whole.name, by_pair=gold_pairs_only))
    assert narrowed["retrieval"] != figures(whole)["retrieval"]
