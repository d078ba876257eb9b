"""Agreement statistics, one module per statistic: votes and majority (votes), Fleiss' kappa (fleiss),
Krippendorff's alpha (alpha), bootstrap intervals (bootstrap), majority accuracy (accuracy), participants,
triple vs quadruple (setups); `summary.agreement_compute` runs them all, `runs` stores the result."""
