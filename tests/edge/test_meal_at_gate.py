"""P6 recorded at a real gate (83.611 art. 26 d): a gate process with an EM4100 serial reader on a
pseudo-terminal, a real mosquitto and the office ingest (SQLite ledger). The inspector's card read
twice opens meal mode, the worker's control card records the meal interval worked; the ledger's
rebuilt shift has ``meal_worked`` and ``portgate pay`` adds P6.

Hand figure (demo rulebook, SD = R$ 180.00): V001 ``vigia`` 01-07 on Sunday 2026-03-15, berthed,
exit 06:58: P1 180.00 + P3 0.25 × 180 = 45.00 + P4 0.50 × 180 = 90.00 + P6 1.00 × 180 = 180.00;
no P7 (berthed). Total 495.00 (315.00 without the meal)."""

from __future__ import annotations

import time

from tests.edge.test_field_gate import V001_CARD, field, local  # noqa: F401  (field: the fixture)

INSPECTOR_CARD = "0F1F5CA001"  # F001, kind inspector (config/demo/cards.csv)
DEBOUNCE_S = 3.5  # past the debounce window of a card read again (G9, real monotonic time)


def test_P6_meal_worked_recorded_at_the_gate_reaches_the_ledger_and_is_paid(field):  # noqa: F811
    gate = field.gate()
    gate.start(local(0, 40))
    gate.show("control", V001_CARD, local(0, 40))
    assert gate.next_decision()["outcome"] == "admit"
    gate.show("control", INSPECTOR_CARD, local(3, 0))
    first = gate.next_decision()
    assert first["outcome"] == "inspector" and "MEAL_MODE" not in first["flags"], first
    time.sleep(DEBOUNCE_S)
    gate.show("control", INSPECTOR_CARD, local(3, 0, 5))
    mode = gate.next_decision()
    assert mode["outcome"] == "inspector" and mode["flags"] == ["MEAL_MODE"], mode
    assert "modo refeição" in mode["message"]
    gate.show("control", V001_CARD, local(3, 0, 10))
    meal = gate.next_decision()
    assert meal["outcome"] == "aboard" and meal["flags"] == ["MEAL_WORKED"], meal
    assert "intervalo de refeição trabalhado registrado" in meal["message"]
    time.sleep(DEBOUNCE_S)
    gate.show("control", V001_CARD, local(6, 58))
    assert gate.next_decision()["outcome"] == "exit"

    kinds = [e.payload.__struct_config__.tag for e in gate.journal()]
    assert kinds.count("meal_worked") == 1
    [rec] = [e.payload for e in gate.journal() if e.payload.__struct_config__.tag == "meal_worked"]
    assert (rec.registration, rec.inspector_registration, rec.dispatch.period, rec.rule) == (
        "V001", "F001", "01-07", "P6")
    field.wait_drained(gate)
    pay, shifts = field.pay_and_shifts()
    [v001] = [s for s in shifts if s["registration"] == "V001"]
    assert v001["meal_worked"] is True and not v001["held"]
    assert [f["flag"] for f in v001["flags"]] == ["MEAL_AT_GATE"]
    assert "F001" in v001["flags"][0]["detail"]
    lines = {r["rule"]: r["amount"] for r in pay if r.get("registration") == "V001"}
    assert lines["P6"] == "180.00" and "P7" not in lines
    assert lines["TOTAL"] == "495.00"
