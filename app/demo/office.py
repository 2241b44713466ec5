"""The office's side of the demo's set-up (``app.demo.run``): the gates' signing keys enrolled and
countersigned, the roster, blocklist and escala snapshots published (and refreshed during the
day), the workers' photos sent, and the office web application started. A mixin of
``app.demo.run.DemoRun``.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path


class OfficeSide:
    """The office's set-up of ``app.demo.run.DemoRun`` (see there for the attributes it shares)."""

    def _register_signing_keys(self, keys: Path) -> None:
        """Each gate's Ed25519 key pair is made in its state dir (as ``portgate edge key`` does on
        a gate), its public key registered and enrolled at the office (``central add-gate
        --public-key``) and the enrolment record countersigned by the demo's union inspector
        (``evidence inspector-key``, ``evidence countersign-gate``; docs/evidence.md): the same
        functions as those commands, the enrolment dated at the start of the scripted day (the
        keys are enrolled before the day's first read, as the registry is stamped), not by the
        machine's clock."""
        import datetime as dt

        from central.evidence.enrolment import countersign, enrol, inspector_key
        from central.office_key import office_key
        from central.ingest.keys import register_public_key
        from edge.signing import load_or_create
        from wire.chain import fingerprint, public_pem

        office = office_key(keys)
        inspector, _made = inspector_key(self.dir / "inspector")
        for gid, gate in self.gates.items():
            pub = load_or_create(gate.dir / "state").public_key()
            register_public_key(keys, gid, public_pem(pub))
            record, _written = enrol(keys, gid, pub, office, self.day_start.astimezone(dt.UTC))
            countersign(record, inspector, fingerprint(pub), fingerprint(office.public_key()))

    def _downlink_client(self, client_id: str):
        """A paho client connected to the demo's broker (MQTT 5, mosquitto), its network loop
        running, for the office's downlinks; the caller disconnects it."""
        from app.demo.downlink_client import mosquitto_client

        return mosquitto_client(self.broker.port, client_id)

    def _publish_photos(self) -> int:
        """The office sends the workers' photos (generated pictures; two workers have none, so the
        screen shows its placeholder) through the photo downlink. Returns how many files."""
        from central.broadcast.csv_source import inspectors_csv
        from central.broadcast.photos import publish_photos
        from central.broadcast.publisher import office_signer
        from central.registry.photos import save_photo
        from portgate.records import Worker, load_csv
        from app.demo.photos import png

        photos = self.dir / "office-photos"  # the registry's photos, as the web app keeps them ([web] photos_dir)
        workers = load_csv(self.scenario.workers_csv, Worker)
        for n, w in enumerate(workers[:-2]):
            save_photo(photos, w.registration, png(n + 1, size=96))  # re-encoded: office and gate sizes
        for n, row in enumerate(inspectors_csv(self.scenario.cards_csv)):  # the inspectors' own (issue 33)
            save_photo(photos, row.registration, png(200 + n, size=96))
        client = self._downlink_client("office-photos-demo")
        try:
            return publish_photos(client, self.scenario.spec.port, photos,
                                  signer=office_signer(self.dir / "keys"))["files"]
        finally:
            client.disconnect()
            client.loop_stop()

    def _clock_files(self) -> list:
        """The scripted clocks the web application's time follows (the gates')."""
        return [g.clock_file for g in self.gates.values()]

    def _web_config(self):
        """The central.toml the web application runs on (``portgate office serve --config``)."""
        return self.dir / "central.toml"

    def _registry_dirs(self) -> list[Path]:
        """Keys dirs whose gate registrations (``add-gate --nats-users``) the web application reads
        besides its own central.toml's ``keys_dir`` and ``port_keys_dirs``: none (the cluster demo names
        the other ports' in its web central.toml, ``app.demo.cluster_office.web_config``)."""
        return []

    def _start_web(self) -> None:
        """The office web application on a free loopback port, on the scripted day's clock."""
        from app.demo.web import (DEMO_PASSWORD, DEMO_USER, OFFICE_USER, STEVEDORE_REGISTRATION,
                                  WORKER_REGISTRATION, DemoWeb)

        self.web = DemoWeb(self.ledger_url, self._clock_files(),
                           self.scenario.spec.timezone, self._web_config(), self._registry_dirs())
        self.web_url = self.web.start()
        from portgate.clitext import tr  # lazy: with the web application

        # "web <url>  login " starts the line in every language (testkit/demo_day.py reads the URL)
        self.out(tr("cli.demo.web", url=self.web_url, inspector=DEMO_USER, office=OFFICE_USER,
                    worker=WORKER_REGISTRATION, stevedore=STEVEDORE_REGISTRATION, password=DEMO_PASSWORD))

    def _publish_snapshots(self, at: dt.datetime | None = None) -> None:
        """The office publishes the roster, the blocklist base and the escala (retained
        snapshots, a new version each time). Later calls refresh roster and escala only, as the
        office does every period, so the gates' copies never go stale (G8)."""
        import msgspec
        from central.broadcast.csv_source import CsvSnapshots, publish_snapshot
        from central.broadcast.publisher import office_signer

        signer = office_signer(self.dir / "keys")  # the office key the gates verify downlinks with

        sc = self.scenario
        at = at or self.day_start
        self.published_version += 1
        kinds = ("roster", "cards", "escala") if self.published_version == 1 else ("roster", "escala")
        source = CsvSnapshots(sc.workers_csv, sc.cards_csv, sc.escala_csv)
        client = self._downlink_client("office-publisher-demo")
        try:
            for kind in kinds:
                msg = msgspec.structs.replace(source.snapshot(kind, at), version=self.published_version)
                publish_snapshot(client, sc.spec.port, kind, msg, signer=signer)
        finally:
            client.disconnect()
            client.loop_stop()
        self.published_at = at
