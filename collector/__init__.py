"""The Django app that runs studies: creating them, voting, the ballot lifecycle, staff pages."""
