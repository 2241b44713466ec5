"""Office side of the photo downlink: workers' photos from a directory to the gates.

``DIR`` holds one file per worker named ``<registration>.<jpg|jpeg|png|webp>``. ``scan(DIR)``
hashes them (SHA-256) and refuses the whole directory, naming every bad file, when a file is over
the size cap, empty, or of another type (``BadInput``: exit 2). ``publish_photos`` compares the scan
with what was published last (the manifest ``DIR/.published.json``: version and registration ->
SHA-256) and publishes, at QoS 1, in this order:

1. first time (no manifest) or ``full=True``: the index as a ``PhotosSnapshot`` (retained) and
   every file as a ``PhotoFile`` on ``down/photos/file``;
2. otherwise, if anything changed: a ``PhotosDelta`` (changed and new rows, withdrawn
   registrations), the new files only, then the new index as the retained snapshot (so a gate that
   connects later starts from the newest index);
3. nothing changed: nothing is published.

The manifest is written only after the broker acknowledged everything. Gates keep the files on disk
(``edge.sync.photos``) and refuse a file whose hash is not its name or which is over their own cap.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import re
from pathlib import Path

import paho.mqtt.client as mqtt

from central.broadcast.publisher import Publisher
from portgate.errors import BadInput
from portgate.tables import one_line
from wire.topics import ID_PATTERN
from wire.downlink import PHOTO_MAX_BYTES, PhotoFile, PhotoRef, PhotosDelta, PhotosSnapshot, encode

MANIFEST = ".published.json"
SUFFIXES = {".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".png": "image/png", ".webp": "image/webp"}


MAGIC = {"image/jpeg": lambda b: b[:3] == b"\xff\xd8\xff", "image/png": lambda b: b[:8] == b"\x89PNG\r\n\x1a\n",
         "image/webp": lambda b: b[:4] == b"RIFF" and b[8:12] == b"WEBP"}
_REGISTRATION = re.compile(ID_PATTERN)


def _read_plain_file(path: Path, max_bytes: int) -> bytes:
    """The bytes of ``path``, refusing a symbolic link (``O_NOFOLLOW``: also one swapped in after
    the directory was listed). Raises ``OSError``."""
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    with os.fdopen(fd, "rb") as f:
        return f.read(max_bytes + 1)


def scan(directory: str | Path, *, max_bytes: int = PHOTO_MAX_BYTES) -> dict[str, tuple[PhotoRef, Path]]:
    """``{registration: (PhotoRef, file)}`` for every photo in ``directory``: files named
    ``<registration>.<jpg|jpeg|png|webp>`` (registration: letters, digits, ``._-``, up to 64).
    Raises ``BadInput`` naming every bad file: a symbolic link, a name that is not a registration,
    an unknown type, content that is not the image type its name says (magic bytes), over
    ``max_bytes`` or empty, two photos of one worker."""
    directory = Path(directory)
    if not directory.is_dir():
        raise BadInput(f"{directory}: not a directory of photos")
    out: dict[str, tuple[PhotoRef, Path]] = {}
    bad: list[str] = []
    for path in sorted(directory.iterdir()):
        if path.name.startswith("."):
            continue
        name = one_line(path.name)
        if path.is_symlink():
            bad.append(f"{name}: a symbolic link (give the photo file itself)")
            continue
        if not path.is_file():
            continue
        media = SUFFIXES.get(path.suffix.lower())
        reg = path.stem
        if media is None:
            bad.append(f"{name}: not .jpg, .jpeg, .png or .webp")
            continue
        if not _REGISTRATION.match(reg):
            bad.append(f"{name}: the name is not <registration>.<ext> (letters, digits, . _ -, up to 64)")
            continue
        try:
            data = _read_plain_file(path, max_bytes)
        except OSError as exc:
            bad.append(f"{name}: cannot read: {exc.strerror or exc}")
            continue
        if not data or len(data) > max_bytes:
            bad.append(f"{name}: {path.stat().st_size} bytes (1 to {max_bytes} allowed)")
            continue
        if not MAGIC[media](data):
            bad.append(f"{name}: the content is not a {media.split('/')[1].upper()} image")
            continue
        if reg in out:
            bad.append(f"{name}: a second photo of {reg}")
            continue
        out[reg] = (PhotoRef(registration=reg, sha256=hashlib.sha256(data).hexdigest(), size=len(data), media_type=media), path)
    if bad:
        raise BadInput(f"{directory}: " + "; ".join(bad))
    return out


PUBACK_WAIT_S = 30.0  # how long each photo message waits for the broker's PUBACK


def publish_photos(client: mqtt.Client, port: str, directory: str | Path, *, full: bool = False,
                   version: int | None = None, at: dt.datetime | None = None,
                   max_bytes: int = PHOTO_MAX_BYTES, signer=None) -> dict[str, int]:
    """Publish the photos of ``directory`` (see module doc). Returns ``{"version", "files",
    "removed", "delta"}`` (delta 0 for a snapshot). Raises ``BadInput`` and ``BrokerUnavailable``."""
    at = at or dt.datetime.now(dt.UTC)
    directory = Path(directory)
    photos = scan(directory, max_bytes=max_bytes)
    manifest_path = directory / MANIFEST
    old = None if full else _published(manifest_path)
    new_map = {reg: ref.sha256 for reg, (ref, _p) in photos.items()}
    refs = [ref for ref, _p in photos.values()]
    if old is not None and old[1] == new_map:
        return {"version": old[0], "files": 0, "removed": 0, "delta": 0}
    new_version = version if version is not None else int(at.timestamp() * 1000)
    if old is not None and new_version <= old[0]:
        new_version = old[0] + 1
    out = Publisher(client, port, signer)  # signer: the office's (central.broadcast.publisher.office_signer)

    def send(form: str, message) -> None:
        out.send("photos", form, message, wait=PUBACK_WAIT_S, what="photos")

    snapshot = encode(PhotosSnapshot(version=new_version, at=at, photos=refs))  # one encoding, sent last
    if old is None:
        send("snapshot", snapshot)
        files, removed, delta = _send_files(send, photos, photos, at), 0, 0
    else:
        old_version, old_map = old
        changed = [reg for reg, sha in new_map.items() if old_map.get(reg) != sha]
        gone = [reg for reg in old_map if reg not in new_map]
        send("delta", PhotosDelta(from_version=old_version, to_version=new_version, at=at,
                                  upsert=[photos[reg][0] for reg in changed], remove=gone))
        files, removed, delta = _send_files(send, photos, changed, at), len(gone), 1
        send("snapshot", snapshot)
    tmp = manifest_path.with_suffix(".tmp")
    tmp.write_text(json.dumps({"version": new_version, "photos": new_map}, sort_keys=True), encoding="utf-8")
    os.replace(tmp, manifest_path)
    return {"version": new_version, "files": files, "removed": removed, "delta": delta}


def _published(manifest_path: Path) -> tuple[int, dict[str, str]] | None:
    """``(version, {registration: sha256})`` of the last publication's manifest, None if there is
    none. An unreadable one is ``BadInput`` (the caller publishes with ``--full-photos``)."""
    if not manifest_path.exists():
        return None
    try:
        old = json.loads(manifest_path.read_text(encoding="utf-8"))
        return int(old["version"]), dict(old["photos"])
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise BadInput(f"{manifest_path}: unreadable manifest ({exc}); publish with --full-photos") from exc


def _send_files(send, photos: dict, regs, at: dt.datetime) -> int:
    """Send the photo file of each registration in ``regs`` once per content (a file shared by two
    registrations goes once); a file changed since ``scan`` is ``BadInput``. Returns the files sent."""
    sent: set[str] = set()
    for reg in regs:
        ref, path = photos[reg]
        if ref.sha256 in sent:
            continue
        data = _read_plain_file(path, PHOTO_MAX_BYTES)
        if hashlib.sha256(data).hexdigest() != ref.sha256:
            raise BadInput(f"{one_line(path.name)}: changed while being published; run it again")
        send("file", PhotoFile(sha256=ref.sha256, media_type=ref.media_type, data=data, at=at))
        sent.add(ref.sha256)
    return len(sent)
