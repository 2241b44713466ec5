"""The rotation (rodízio): requisitions filled in rotation order, the daily escala (R1-R3, R5, R6)."""
