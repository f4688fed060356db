"""Citable releases of a finished study: an immutable, versioned bundle of its data files (from
the export registry), a dataset card, Croissant metadata, a citation file and checksums
(:mod:`~collector.releases.releasing`, :mod:`~collector.releases.card`,
:mod:`~collector.releases.croissant`, :mod:`~collector.releases.citation`), and a public page
per release (:mod:`~collector.releases.public`)."""
