"""The simulator's serving certificate, made in-process for each run (no `openssl` program, no fallback to plain HTTP).

The certificate is self-signed and marked as a CA, so the kubeconfig the simulator writes can carry it as
`certificate-authority-data` and clients verify the server as they would a real cluster (no
`insecure-skip-tls-verify`). The private key exists on disk only for the instant `ssl` needs to read it.
"""

from __future__ import annotations

import dataclasses
import datetime
import ipaddress
import os
import ssl
import tempfile

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

# The names a loopback simulator answers to: what `sim serve --host` accepts (sim/server.py:_is_loopback).
SUBJECT_ALT_NAMES = ("127.0.0.1", "::1", "localhost")


@dataclasses.dataclass(frozen=True)
class ServingCertificate:
    cert_pem: bytes
    key_pem: bytes

    def server_context(self) -> ssl.SSLContext:
        """A TLS server context holding this certificate and key."""
        # A bare server context: create_default_context would also load the system's CA bundle (80 ms) for
        # client certificates the simulator never asks for.
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.minimum_version = ssl.TLSVersion.TLSv1_2
        # ssl reads a key only from a file: write both to a private folder, load, remove on every path.
        with tempfile.TemporaryDirectory(prefix="dragoman-sim-tls-") as d:
            cert_path, key_path = os.path.join(d, "tls.crt"), os.path.join(d, "tls.key")
            for path, data in ((cert_path, self.cert_pem), (key_path, self.key_pem)):
                fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
                try:
                    os.write(fd, data)
                finally:
                    os.close(fd)
            ctx.load_cert_chain(cert_path, key_path)
        return ctx


def make_serving_certificate(common_name: str = "dragoman-sim", days: int = 365) -> ServingCertificate:
    """A fresh P-256 key and a self-signed certificate for the loopback names (serverAuth, CA so it can be trusted)."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])
    now = datetime.datetime.now(datetime.UTC)
    sans: list[x509.GeneralName] = []
    for n in SUBJECT_ALT_NAMES:
        try:
            sans.append(x509.IPAddress(ipaddress.ip_address(n)))
        except ValueError:
            sans.append(x509.DNSName(n))
    public = key.public_key()
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(public)
        .serial_number(x509.random_serial_number())
        # A little slack backwards: a client whose clock is a minute behind still accepts it.
        .not_valid_before(now - datetime.timedelta(hours=1))
        .not_valid_after(now + datetime.timedelta(days=days))
        .add_extension(x509.SubjectAlternativeName(sans), critical=False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True,
                key_cert_sign=True,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                crl_sign=False,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(public), critical=False)
        .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(public), critical=False)
        .sign(key, hashes.SHA256())
    )
    return ServingCertificate(
        cert.public_bytes(serialization.Encoding.PEM),
        key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()),
    )
