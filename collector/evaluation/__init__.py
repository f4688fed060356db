"""Evaluating semantic models against a finished study: its gold ranking and votes as ``ranking``
reads them, submitting a model's scores or vectors, the background run and the leaderboard."""
