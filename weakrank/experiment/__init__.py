"""Experiments over many trained rankers: the grid of training variants, the systems it compares, the report."""
