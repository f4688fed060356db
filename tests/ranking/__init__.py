"""Tests of the ranking library: protocol, designs, crowd, simulation, metrics (no database)."""
