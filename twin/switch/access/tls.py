"""A self-signed certificate for a lab's gNMI endpoints (clients connect with skip_verify), and the
way a lab's secret files are written (0600 from creation)."""

from __future__ import annotations

import datetime
import os
from ipaddress import ip_address
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID


def write_private(path: Path, data: bytes) -> None:
    """A secret file (a key, the agent's settings with the password), mode 0600 from its creation:
    written to a new file opened with that mode, then renamed over any older one."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_TRUNC, 0o600)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def make_cert(directory: Path, common_name: str, addresses: list[str]) -> tuple[Path, Path]:
    """Write tls.key and tls.crt (valid for every management address) and return their paths."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])
    now = datetime.datetime.now(datetime.UTC)
    san = x509.SubjectAlternativeName([x509.DNSName(common_name)] +
                                      [x509.IPAddress(ip_address(a)) for a in addresses])
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + datetime.timedelta(days=365)).add_extension(san, critical=False)
            .sign(key, hashes.SHA256()))
    key_path, cert_path = directory / "tls.key", directory / "tls.crt"
    write_private(key_path, key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                              serialization.NoEncryption()))
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    return key_path, cert_path
