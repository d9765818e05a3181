s/"fp_target":/"target_fp":/g
s/^\{"messages": ([0-9]+), "two_phase_bits"/rbf plan: --messages is the old name of --capacity (kept for one release): use --capacity\n{"capacity": \1, "two_phase_bits"/
