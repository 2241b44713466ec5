"""R2 uses G3 as amended: the health exam's validity is per category (12 months for estivador,
DL 2.032 art. 28 §1; 24 otherwise)."""

from __future__ import annotations

import datetime as dt

import pytest

from central.rotation.eligibility import Ineligible, ValiditySettings, registration_problems
from portgate.records import Worker, WorkerStatus

ON = dt.date(2026, 4, 10)


def _worker(category: str, exam: dt.date) -> Worker:
    return Worker(registration="1", name="W", category=category, status=WorkerStatus.ACTIVE,
                  health_exam_date=exam, booklet_revalidated_year=2026)


@pytest.mark.parametrize("category,exam,ok", [
    ("estivador", dt.date(2025, 4, 10), True), ("estivador", dt.date(2025, 4, 9), False),
    ("vigia", dt.date(2025, 4, 9), True), ("vigia", dt.date(2024, 4, 9), False),
])
def test_g3_r2_health_exam_validity_per_category(category, exam, ok):
    problems = registration_problems(_worker(category, exam), ON)
    assert (Ineligible.HEALTH_EXAM not in problems) is ok


def test_g3_r2_per_category_months_are_a_setting():
    settings = ValiditySettings(health_exam_months_by_category=(("vigia", 6),))
    assert registration_problems(_worker("vigia", dt.date(2025, 9, 1)), ON, settings) == [
        Ineligible.HEALTH_EXAM]
