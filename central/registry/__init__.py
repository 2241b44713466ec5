"""The office registry: workers, cards and badges, inspectors, penalties (R4), confiscation cases."""
