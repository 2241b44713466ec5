"""After the demo day (``app.demo.run``): the reconciliation of the gates' journals with the
ledger, the office's own counts, and pay, billing and an evidence bundle computed from the ledger
by the real commands, each checked against the scenario. A mixin of ``app.demo.run.DemoRun``.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import os
import subprocess
from decimal import Decimal
from pathlib import Path

from app.demo.console import billing_words, reconciliation_line, texts
from app.demo.gate import PORTGATE
from app.demo.scenario import check_pay
from portgate.l10n import money


class DayChecks:
    """The checks after the day of ``app.demo.run.DemoRun`` (see there for the attributes they share)."""

    def _mine(self, *, registration: str | None = None, ship: str | None = None) -> bool:
        """Whether a pay row's worker or a billing line's ship is this run's port's (every one is,
        on the demo's own ledger; ``app.demo.cluster`` plays two ports on one)."""
        return True

    # -- after the day -------------------------------------------------------------------------
    def reconcile(self) -> bool:
        """Every event each gate journaled is in the ledger exactly once; no gaps remain."""
        ok = self.wait_drained(90)
        words = texts(self.lang)
        self.out(f"\n{words['reconciliation']}")
        self.out(reconciliation_line(words["columns"], self.lang))
        with self._ledger_reader() as db:
            for gid, gate in self.gates.items():
                journal = gate.journal_ids()
                ledger = self._ledger_ids(gid)
                missing = journal - ledger
                decided = sum(1 for _ in gate.decisions_file.open(encoding="utf-8"))
                rows, gaps = self._ledger_counts(db, gid)
                self.out(reconciliation_line((gid, len(journal), decided, rows, len(missing), gaps), self.lang))
                if missing or gaps or rows != len(journal):
                    ok = False
                    self.problems.append(f"{gid}: {len(missing)} event(s) missing from the ledger, {gaps} gap(s)")
        return ok

    def office_totals(self) -> dict:
        """The ingest's own counts, printed by ``portgate central run`` when it stops."""
        log = self.dir / "central.log"
        totals: dict = {}
        if log.exists():
            for text in log.read_text(encoding="utf-8", errors="replace").splitlines():
                if text.startswith("{") and '"ingest.totals"' in text:  # central runs with log_json
                    with contextlib.suppress(ValueError):
                        totals = json.loads(text)
        return totals

    def port_config(self) -> Path:
        """The port TOML pay and billing run with: the example port, its rulebook copied into the
        run directory with the scenario's P8 fare (``anchorage_transport_fare``) when it sets one
        (the shipped rulebook leaves it unset: billing a trip is then refused)."""
        from central.pay.loading import DEFAULT_PORT_CONFIG, load_port_config

        rulebook = Path(load_port_config(DEFAULT_PORT_CONFIG).rulebook)
        text = rulebook.read_text(encoding="utf-8")
        fare = self.scenario.spec.anchorage_transport_fare
        if fare is not None:  # a top-level key: before the first table
            text = f'anchorage_transport_fare = "{fare}"  # portgate demo: the port\'s launch fare\n' + text
        own = self.dir / "rulebook.toml"
        own.write_text(text, encoding="utf-8")
        port = self.dir / "port.toml"
        port.write_text(DEFAULT_PORT_CONFIG.read_text(encoding="utf-8").replace(
            'rulebook = "rulebooks/decreto-83611-1979.toml"', f'rulebook = "{own}"'), encoding="utf-8")
        return port

    def pay(self) -> dict[str, Decimal]:
        """Run ``portgate pay`` on the ledger for the day and print the statements."""
        sc = self.scenario
        day = sc.spec.day
        cmd = [*PORTGATE, "pay", "--db", self.ledger_url, "--from", day.isoformat(),
               "--to", (day + dt.timedelta(days=1)).isoformat(), "--port-config", str(self.port_config())]
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
        if done.returncode != 0:
            self.problems.append(f"portgate pay failed ({done.returncode}): {done.stderr.strip()[:500]}")
            return {}
        totals: dict[str, Decimal] = {}
        self.out(f"\n{texts(self.lang)['pay']}")
        for text in done.stdout.splitlines():
            row = json.loads(text)
            reg = row.get("registration")
            if not self._mine(registration=reg):
                continue  # another port's worker on a shared ledger (portgate demo --cluster)
            if row.get("rule") == "TOTAL":
                totals[reg] = totals.get(reg, Decimal(0)) + Decimal(row["amount"])
                hold = f"  {texts(self.lang)['on_hold']}: {row['hold']}" if row.get("hold") else ""
                self.out(f"  {reg} {row.get('work_day')}  {'TOTAL':5} {'':22} {money(row['amount'], self.lang):>11}{hold}")
            elif row.get("rule") == "HELD":  # not paid until reviewed (NO_ENTRY, ...)
                self.out(f"  {reg} {row.get('work_day')}  {texts(self.lang)['held']}  {'; '.join(row.get('flags') or [])}")
            elif row.get("rule"):
                self.out(f"  {reg} {row.get('work_day')}  {row['rule']:5} {row.get('article', ''):22} "
                         f"{money(row['amount'], self.lang):>11}")
            else:
                self.out(f"  {reg} held: {row}")
        self.problems.extend(check_pay(sc.expected_pay, totals))
        return totals

    def billing(self) -> list[dict]:
        """Run ``portgate pay billing`` for the day: the shipowner's statement of the watchmen's
        trips to the anchored ship (P8, 83.611 art. 27 sole paragraph: one round trip per stay, at
        the scenario's fare). A problem if it fails, an anchored ship of the escala has no P8 line,
        or a ship's total is not the scenario's ``expected_billing``."""
        sc = self.scenario
        day = sc.spec.day
        cmd = [*PORTGATE, "pay", "billing", "--db", self.ledger_url, "--from", day.isoformat(),
               "--to", (day + dt.timedelta(days=1)).isoformat(), "--port-config", str(self.port_config())]
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
        if done.returncode != 0:
            self.problems.append(f"portgate pay billing failed ({done.returncode}): {done.stderr.strip()[:500]}")
            return []
        found = [json.loads(text) for text in done.stdout.splitlines()]
        self.out(f"\n{texts(self.lang)['billing']}")
        found = [{**st, "lines": [line for line in st["lines"] if self._mine(ship=line["ship"])]} for st in found]
        found = [st for st in found if st["lines"]]  # another port's ships on a shared ledger
        for st in found:
            for line in st["lines"]:
                owner, said = billing_words(self.lang, st["shipowner"], line["ship"], line["description"])
                self.out(f"  {owner}  {line['rule']} {line['ref']}  {money(line['amount'], self.lang):>11}  {said}")
            owner = billing_words(self.lang, st["shipowner"], st["lines"][0]["ship"], "")[0]
            self.out(f"  {owner}  TOTAL {money(st['total'], self.lang):>11}")
        anchored = {ship for ship in sc.anchored_ships()}
        billed = {line["ship"] for st in found for line in st["lines"] if line["rule"] == "P8"}
        if anchored - billed:
            self.problems.append(f"no P8 billing line for anchored ship(s) {sorted(anchored - billed)}")
        per_ship: dict[str, Decimal] = {}
        for st in found:
            for line in st["lines"]:
                per_ship[line["ship"]] = per_ship.get(line["ship"], Decimal(0)) + Decimal(line["amount"])
        for ship, amount in sorted(sc.spec.expected_billing.items()):
            if per_ship.get(ship) != Decimal(amount):
                self.problems.append(f"billing {ship}: {per_ship.get(ship)} != expected {amount}")
        return found

    def evidence(self, registration: str = "V017") -> Path | None:
        """Export the evidence bundle of ``registration`` for the day (``portgate evidence export``)
        into the run directory and check it offline (``portgate evidence verify``)."""
        if registration not in self.scenario.expected_pay:
            return None
        day = self.scenario.spec.day.isoformat()
        bundle = self.dir / f"evidence-{registration}.zip"
        cmd = [*PORTGATE, "evidence", "export", "--db", self.ledger_url, "--keys-dir", str(self.dir / "keys"),
               "--registration", registration, "--from", day, "--to", day, "--out", str(bundle)]
        for gate in self.gates.values():
            cmd += ["--gate-rulebook", str(gate.dir / "gate-rules.toml")]
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
        if done.returncode != 0:
            self.problems.append(f"portgate evidence export failed ({done.returncode}): {done.stderr.strip()[:500]}")
            return None
        from central.evidence.enrolment import inspector_key
        from central.office_key import office_key
        from wire.chain import fingerprint

        pins = ["--office-key", fingerprint(office_key(self.dir / "keys").public_key()),  # the office's own
                "--inspector-key", fingerprint(inspector_key(self.dir / "inspector")[0].public_key())]  # the union's
        check = subprocess.run([*PORTGATE, "evidence", "verify", str(bundle), *pins], capture_output=True,
                               text=True, timeout=120, env={**os.environ, "PORTGATE_LANG": self.lang})  # the demo's --lang
        self.out("\n" + texts(self.lang)["evidence"].format(registration=registration, bundle=bundle.name))
        for line in check.stdout.splitlines():
            self.out(f"  {line}")
        if check.returncode != 0:
            self.problems.append(f"evidence bundle of {registration} does not verify")
        return bundle
