"""The cluster demo's checks after the day (``app.demo.cluster._checks``) print each port's part in
the one-port demo's order (``app.demo.run._play``): its reconciliation table, its office totals
line, pay, billing, evidence, one port after the other; the tables are still taken before the
gates stop. The ports here are stand-ins that print what each step would (the real day: the
PORTGATE_FULL test of test_demo_cluster.py)."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

from app.demo.cluster import _checks
from app.demo.run import office_totals_line


class _Port:
    def __init__(self, port: str, printed: list[tuple[str, str]], steps: list[str]) -> None:
        self.scenario = SimpleNamespace(spec=SimpleNamespace(port=port), dir=Path("scenarios") / port)
        self.out = lambda line: printed.append((port, line))
        self.problems: list[str] = []
        self.steps, self.port = steps, port

    def reconcile(self) -> bool:
        self.steps.append(f"reconcile {self.port}")
        self.out("reconciliation table")
        return True

    def stop(self) -> None:
        self.steps.append(f"stop {self.port}")

    def office_totals(self) -> dict:
        return {"inserted": 43}

    def pay(self) -> None:
        self.out("pay")

    def billing(self) -> None:
        self.out("billing")

    def evidence(self) -> None:
        self.out("evidence")


def test_each_port_prints_table_totals_pay_billing_evidence_in_the_one_port_order():
    printed: list[tuple[str, str]] = []
    steps: list[str] = []
    runs = [_Port("santos", printed, steps), _Port("paranagua", printed, steps)]
    assert _checks(runs, lambda line: printed.append(("", line))) == 0
    part = ["reconciliation table", office_totals_line({"inserted": 43}), "pay", "billing", "evidence"]
    assert [p for p in printed if p[0]] == [("santos", x) for x in part] + [("paranagua", x) for x in part]
    balanced = [line for who, line in printed if not who and line.startswith("[")]
    assert [line.split("]")[0] for line in balanced] == ["[santos", "[paranagua"]
    assert all(str(Path("scenarios") / port / "scenario.toml") in line
               for port, line in zip(("santos", "paranagua"), balanced))  # the file its pay was checked against
    assert steps == ["reconcile santos", "reconcile paranagua", "stop santos", "stop paranagua"]
    assert runs[0].out("x") is None and printed[-1] == ("santos", "x")  # each port's own output again
