"""How good the pre-labels are against gold: scores (P/R/F1 by words, baselines), calibration, rater agreement, the comparison of two jobs, and the evaluation page's rows."""
