"""Every file the library reads: gold standards, a study's votes, models' scores and word
vectors, with errors by line.
"""

from __future__ import annotations

from .comparisons import (
    COMPARISONS_HEADER,
    BinaryComparisons,
    read_comparisons,
)
from .gold import (
    CANDIDATE_KINDS,
    GOLD_FORMATS,
    GoldFormat,
    GoldStandard,
    detect_gold_format,
    read_gold,
)
from .lines import (
    MAX_LINE_BYTES,
    InputFileError,
    compression_of,
    compression_of_bytes,
    is_number,
    iter_lines,
    number_at,
    read_lines,
    refuse_compressed,
    split_fields,
)
from .model_scores import (
    PairScorer,
    ScoreTable,
    item_scores,
    pair_scorer_for,
    read_model_scores,
)
from .vector_files import (
    MAX_DIMENSION,
    check_vector_file_start,
    detect_vector_format,
    read_vector_file,
)
from .votes import (
    read_votes,
)
from .word_vectors import (
    CASE_POLICIES,
    VECTOR_FORMATS,
    WordVectors,
    load_word_vectors,
)

__all__ = [
    "BinaryComparisons",
    "CANDIDATE_KINDS",
    "CASE_POLICIES",
    "COMPARISONS_HEADER",
    "check_vector_file_start",
    "compression_of",
    "compression_of_bytes",
    "detect_vector_format",
    "iter_lines",
    "MAX_DIMENSION",
    "MAX_LINE_BYTES",
    "read_vector_file",
    "refuse_compressed",
    "GOLD_FORMATS",
    "VECTOR_FORMATS",
    "detect_gold_format",
    "GoldFormat",
    "GoldStandard",
    "InputFileError",
    "is_number",
    "item_scores",
    "load_word_vectors",
    "number_at",
    "pair_scorer_for",
    "PairScorer",
    "read_comparisons",
    "read_gold",
    "read_lines",
    "read_model_scores",
    "read_votes",
    "ScoreTable",
    "split_fields",
    "WordVectors",
]
