"""Voting: the rules (one SQL function), who votes, rate limits, the voting API and pages."""
