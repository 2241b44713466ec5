BEGIN TRANSACTION;
CREATE TABLE blocklist (
	uid VARCHAR NOT NULL, 
	reason VARCHAR NOT NULL, 
	at VARCHAR NOT NULL, 
	PRIMARY KEY (uid)
);
CREATE TABLE cards (
	uid VARCHAR NOT NULL, 
	kind VARCHAR NOT NULL, 
	registration VARCHAR NOT NULL, 
	status VARCHAR NOT NULL, 
	PRIMARY KEY (uid)
);
INSERT INTO "cards" VALUES('0A04A10001','control','V001','active');
INSERT INTO "cards" VALUES('0A04A10003','control','V002','confiscated');
CREATE TABLE escala (
	id INTEGER NOT NULL, 
	date VARCHAR NOT NULL, 
	period VARCHAR NOT NULL, 
	ship VARCHAR NOT NULL, 
	ship_name VARCHAR NOT NULL, 
	voyage VARCHAR NOT NULL, 
	berth VARCHAR NOT NULL, 
	gate_id VARCHAR NOT NULL, 
	post VARCHAR NOT NULL, 
	function VARCHAR NOT NULL, 
	registration VARCHAR NOT NULL, 
	PRIMARY KEY (id)
);
INSERT INTO "escala" VALUES(1,'2026-03-15','01-07','9300001','MSC Aurora','long_haul','berthed','g-aurora','porao','vigia','V002');
INSERT INTO "escala" VALUES(2,'2026-03-15','01-07','9300002','Nordic Star','long_haul','anchored','g-nordic','portalo','vigia','V003');
INSERT INTO "escala" VALUES(3,'2026-03-15','01-07','9300003','Lagoa Azul','cabotage','berthed','g-lagoa','portalo','vigia','V004');
INSERT INTO "escala" VALUES(4,'2026-03-15','07-13','9300001','MSC Aurora','long_haul','berthed','g-aurora','portalo','vigia','V005');
INSERT INTO "escala" VALUES(5,'2026-03-15','07-13','9300001','MSC Aurora','long_haul','berthed','g-aurora','porao','vigia','V008');
INSERT INTO "escala" VALUES(6,'2026-03-15','07-13','9300002','Nordic Star','long_haul','anchored','g-nordic','portalo','vigia','V007');
INSERT INTO "escala" VALUES(7,'2026-03-15','07-13','9300003','Lagoa Azul','cabotage','berthed','g-lagoa','portalo','vigia','V006');
INSERT INTO "escala" VALUES(8,'2026-03-15','13-19','9300001','MSC Aurora','long_haul','berthed','g-aurora','portalo','vigia','V011');
INSERT INTO "escala" VALUES(9,'2026-03-15','13-19','9300001','MSC Aurora','long_haul','berthed','g-aurora','porao','vigia','V012');
INSERT INTO "escala" VALUES(10,'2026-03-15','13-19','9300002','Nordic Star','long_haul','anchored','g-nordic','portalo','vigia','V013');
INSERT INTO "escala" VALUES(11,'2026-03-15','13-19','9300003','Lagoa Azul','cabotage','berthed','g-lagoa','portalo','vigia','V010');
INSERT INTO "escala" VALUES(12,'2026-03-15','19-01','9300001','MSC Aurora','long_haul','berthed','g-aurora','portalo','vigia','V015');
INSERT INTO "escala" VALUES(13,'2026-03-15','19-01','9300001','MSC Aurora','long_haul','berthed','g-aurora','porao','vigia','V016');
INSERT INTO "escala" VALUES(14,'2026-03-15','19-01','9300002','Nordic Star','long_haul','anchored','g-nordic','chefe','vigia_chefe','V017');
INSERT INTO "escala" VALUES(15,'2026-03-15','19-01','9300002','Nordic Star','long_haul','anchored','g-nordic','portalo','vigia','V018');
INSERT INTO "escala" VALUES(16,'2026-03-15','19-01','9300003','Lagoa Azul','cabotage','berthed','g-lagoa','portalo','vigia','V019');
INSERT INTO "escala" VALUES(17,'2026-03-15','01-07','9300001','MSC Aurora','long_haul','berthed','g-aurora','portalo','vigia','V030');
CREATE TABLE inspector_session (
	id INTEGER NOT NULL, 
	boot_id VARCHAR NOT NULL, 
	inspector_uid VARCHAR NOT NULL, 
	inspector_registration VARCHAR NOT NULL, 
	until_mono_ns INTEGER NOT NULL, 
	PRIMARY KEY (id)
);
INSERT INTO "inspector_session" VALUES(1,'boot-1','0A04A10005','V005',123456789);
CREATE TABLE last_shift_end (
	registration VARCHAR NOT NULL, 
	ended_at VARCHAR NOT NULL, 
	PRIMARY KEY (registration)
);
INSERT INTO "last_shift_end" VALUES('V001','2026-03-15T05:20:00+00:00');
CREATE TABLE meta (
	"key" VARCHAR NOT NULL, 
	value VARCHAR NOT NULL, 
	PRIMARY KEY ("key")
);
INSERT INTO "meta" VALUES('applied_seq','3');
CREATE TABLE office_blocks (
	uid VARCHAR NOT NULL, 
	reason VARCHAR NOT NULL, 
	at VARCHAR NOT NULL, 
	PRIMARY KEY (uid)
);
INSERT INTO "office_blocks" VALUES('0A04A10002','lost','2026-03-15T04:20:00+00:00');
INSERT INTO "office_blocks" VALUES('0A04A10004','confiscated','2026-03-15T05:20:00+00:00');
CREATE TABLE open_shifts (
	registration VARCHAR NOT NULL, 
	origin VARCHAR NOT NULL, 
	gate_id VARCHAR NOT NULL, 
	ship VARCHAR NOT NULL, 
	admitted_at VARCHAR NOT NULL, 
	dispatch TEXT, 
	PRIMARY KEY (registration, origin)
);
INSERT INTO "open_shifts" VALUES('V003','presence','g-nordic','9300002','2026-03-15T04:20:00+00:00',NULL);
CREATE TABLE pending_flags (
	uid VARCHAR NOT NULL, 
	flag VARCHAR NOT NULL, 
	at VARCHAR NOT NULL, 
	PRIMARY KEY (uid, flag)
);
INSERT INTO "pending_flags" VALUES('0A04A10001','BORROWED_CARD','2026-03-15T04:20:00+00:00');
INSERT INTO "pending_flags" VALUES('0A04A10002','ROTATION_JUMP','2026-03-15T05:20:00+00:00');
CREATE TABLE versions (
	name VARCHAR NOT NULL, 
	version INTEGER NOT NULL, 
	updated_at VARCHAR, 
	PRIMARY KEY (name)
);
INSERT INTO "versions" VALUES('escala',2,'2026-03-15T05:20:00+00:00');
INSERT INTO "versions" VALUES('roster',3,'2026-03-15T06:20:00+00:00');
INSERT INTO "versions" VALUES('cards',3,'2026-03-15T06:20:00+00:00');
INSERT INTO "versions" VALUES('presence',9,'2026-03-15T06:20:00+00:00');
CREATE TABLE workers (
	registration VARCHAR NOT NULL, 
	name VARCHAR NOT NULL, 
	category VARCHAR NOT NULL, 
	status VARCHAR NOT NULL, 
	suspended_from VARCHAR, 
	suspended_until VARCHAR, 
	health_exam_date VARCHAR, 
	booklet_revalidated_year INTEGER, 
	rotation_number INTEGER, 
	PRIMARY KEY (registration)
);
INSERT INTO "workers" VALUES('V001','Ana Lima','vigia','active',NULL,NULL,'2025-06-01',NULL,1);
INSERT INTO "workers" VALUES('V002','Bruno Santos','vigia','active',NULL,NULL,'2025-06-01',NULL,2);
CREATE INDEX ix_cards_registration ON cards (registration);
CREATE INDEX ix_escala_registration ON escala (registration, date);
CREATE INDEX ix_escala_gate ON escala (gate_id, date);
CREATE UNIQUE INDEX ux_escala_key ON escala (date, period, ship, post, registration);
CREATE INDEX ix_cards_low24 ON cards (substr(uid, -6));
CREATE INDEX ix_cards_low32 ON cards (substr(uid, -8));
CREATE INDEX ix_pending_flags_at ON pending_flags (at);
COMMIT;
