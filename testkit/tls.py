"""Throw-away TLS material for tests, made with the ``openssl`` command line: a CA, a broker
certificate it signs (CN and SAN ``127.0.0.1``, no DNS name, so ``localhost`` does not match) and a
second, unrelated CA (the "wrong CA")."""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class TlsFiles:
    ca: Path  # signs the broker certificate
    other_ca: Path  # does not
    cert: Path  # the broker's certificate (SAN IP:127.0.0.1)
    key: Path  # its private key

    def mosquitto_listener(self, port: int) -> str:
        """mosquitto.conf lines for a TLS listener on ``127.0.0.1:port`` with these files."""
        return f"listener {port} 127.0.0.1\ncafile {self.ca}\ncertfile {self.cert}\nkeyfile {self.key}\n"


def _openssl(*args: str, cwd: Path) -> None:
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True)


def make_tls_files(directory: Path) -> TlsFiles:
    """Write the CA, the other CA and the broker's key and certificate under ``directory``."""
    directory.mkdir(parents=True, exist_ok=True)
    for name, cn in (("ca", "portgate-test-ca"), ("other-ca", "unrelated-ca")):
        _openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", f"{name}.key", "-out",
                 f"{name}.crt", "-days", "2", "-subj", f"/CN={cn}", cwd=directory)
    _openssl("req", "-newkey", "rsa:2048", "-nodes", "-keyout", "broker.key", "-out", "broker.csr",
             "-subj", "/CN=127.0.0.1", cwd=directory)
    (directory / "san.ext").write_text("subjectAltName=IP:127.0.0.1\n")
    _openssl("x509", "-req", "-in", "broker.csr", "-CA", "ca.crt", "-CAkey", "ca.key", "-CAcreateserial",
             "-out", "broker.crt", "-days", "2", "-extfile", "san.ext", cwd=directory)
    (directory / "broker.key").chmod(0o600)
    return TlsFiles(directory / "ca.crt", directory / "other-ca.crt", directory / "broker.crt",
                    directory / "broker.key")
