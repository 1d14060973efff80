"""Measuring rankings: IR metrics (ir-measures), R_n@k, significance, ranking calibration, result tables, run checks;
from a judged sample, MAP estimated without bias (:mod:`.sampled_map`) and a confidence sequence
(:mod:`.confidence_sequence`)."""
