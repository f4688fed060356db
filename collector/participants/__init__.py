"""A participant's rights: what is stored about them (:mod:`.data`), deleting it
(:mod:`.forgetting`), and removing every study's identifiers after ``DATA_RETENTION_DAYS``
(:mod:`.retention`). A participant is found by their platform id's keyed hash
(:mod:`collector.voting.participant_ids`), among the studies the asking staff member may see."""
