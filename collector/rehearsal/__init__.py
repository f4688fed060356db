"""Rehearsing a study: a simulated crowd voting over HTTP against a real server."""
