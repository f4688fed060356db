"""Staff: study pages, the new-study form, exports and the staff API."""
