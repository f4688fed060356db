"""The attention checks' CSV columns, shared by the Attention checks page
(:mod:`collector.staff.checks`) and its file (:mod:`collector.exports.staff_files`)."""

CSV_HEADER = ["id", "related", "unrelated", "shown", "passed", "failed"]
