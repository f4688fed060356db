"""A study's files: their registry (:mod:`collector.exports.registry`) and their writers, the
study's data files (:mod:`~collector.exports.study_files`, :mod:`~collector.exports.target_files`,
:mod:`~collector.exports.dataset`) and the files of the staff's watching pages
(:mod:`~collector.exports.staff_files`)."""
