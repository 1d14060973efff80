"""Evaluation: IR metrics (ir-measures), R_n@k, significance, calibration, the experiment grid, the report."""
