"""Measuring rankings: IR metrics (ir-measures), R_n@k, significance, ranking calibration, result tables, run checks."""
