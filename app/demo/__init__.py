"""``portgate demo``: a whole port day on this one machine, on real protocols (issue 2)."""
