"""Tests that the product holds against misuse and failure: access and roles over the API, rate
limits, participant privacy in every export, fuzzed pages and schema, a database that goes down,
the deploy check."""
