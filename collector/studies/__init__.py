"""Studies: importing token lists, creating a study, the ballot lifecycle, bulk SQL."""
