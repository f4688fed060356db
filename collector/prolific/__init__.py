"""Prolific through its API: the client (:mod:`.client`), the study the product creates or links
(:mod:`.linking`), the waves that follow the ballots (:mod:`.waves`), the reconciliation that pays
what was earned (:mod:`.paying`), and a Prolific of its own for the tests and the rehearsal
(:mod:`.fake`)."""
