"""The certificates a loopback control plane needs, made in-process with `cryptography` (no openssl program).

One CA per run signs the API server's serving certificate, etcd's serving certificate and the API server's etcd
client certificate; a separate RSA key signs service-account tokens. Everything lives in the run's 0700 folder and
is removed with it.
"""

from __future__ import annotations

import datetime
import ipaddress
import os
import pathlib

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

_DAY = datetime.timedelta(days=1)


def _write(path: pathlib.Path, data: bytes) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as f:
        f.write(data)


def _key_pem(key) -> bytes:
    return key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )


class Pki:
    """Files: ca.crt, apiserver.{crt,key}, etcd.{crt,key}, etcd-client.{crt,key}, components.{crt,key},
    metrics-client.{crt,key}, sa.{key,pub}."""

    def __init__(self, directory: pathlib.Path) -> None:
        self.dir = directory
        now = datetime.datetime.now(datetime.UTC)
        self._not_before, self._not_after = now - _DAY, now + 30 * _DAY
        self._ca_key = ec.generate_private_key(ec.SECP256R1())
        name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "dragoman-controlplane-ca")])
        self._ca_name = name
        self.ca_cert = (
            x509.CertificateBuilder()
            .subject_name(name)
            .issuer_name(name)
            .public_key(self._ca_key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(self._not_before)
            .not_valid_after(self._not_after)
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .add_extension(x509.KeyUsage(True, False, False, False, False, True, True, False, False), critical=True)
            .sign(self._ca_key, hashes.SHA256())
        )
        self.ca_pem = self.ca_cert.public_bytes(serialization.Encoding.PEM)
        _write(self.path("ca.crt"), self.ca_pem)
        hosts = [
            "127.0.0.1",
            "::1",
            "localhost",
            "kubernetes",
            "kubernetes.default",
            "kubernetes.default.svc",
            "10.96.0.1",
        ]
        self._leaf("apiserver", "kube-apiserver", hosts, server=True)
        self._leaf("etcd", "etcd", ["127.0.0.1", "localhost"], server=True)
        self._leaf("etcd-client", "kube-apiserver-etcd-client", [], server=False)
        # kube-scheduler's and kube-controller-manager's secure ports (their /metrics), and the client certificate
        # Prometheus shows etcd when it scrapes etcd's /metrics.
        self._leaf("components", "dragoman-controlplane-components", ["127.0.0.1", "localhost"], server=True)
        self._leaf("metrics-client", "dragoman-prometheus", [], server=False)
        sa = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        _write(self.path("sa.key"), _key_pem(sa))
        _write(
            self.path("sa.pub"),
            sa.public_key().public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo),
        )

    def path(self, name: str) -> pathlib.Path:
        return self.dir / name

    def client(self, stem: str, cn: str, orgs: tuple[str, ...] = ()) -> tuple[pathlib.Path, pathlib.Path]:
        """A client certificate of the run's CA (`stem`.crt, `stem`.key): a kubelet's is CN=system:node:NAME,
        O=system:nodes, which the API server's Node authorizer knows as that node."""
        self._leaf(stem, cn, [], server=False, orgs=orgs)
        return self.path(f"{stem}.crt"), self.path(f"{stem}.key")

    def _leaf(self, stem: str, cn: str, hosts: list[str], *, server: bool, orgs: tuple[str, ...] = ()) -> None:
        key = ec.generate_private_key(ec.SECP256R1())
        sans: list[x509.GeneralName] = []
        for h in hosts:
            try:
                sans.append(x509.IPAddress(ipaddress.ip_address(h)))
            except ValueError:
                sans.append(x509.DNSName(h))
        usage = (
            [ExtendedKeyUsageOID.SERVER_AUTH, ExtendedKeyUsageOID.CLIENT_AUTH]
            if server
            else [ExtendedKeyUsageOID.CLIENT_AUTH]
        )
        builder = (
            x509.CertificateBuilder()
            .subject_name(
                x509.Name(
                    [
                        *(x509.NameAttribute(NameOID.ORGANIZATION_NAME, o) for o in orgs),
                        x509.NameAttribute(NameOID.COMMON_NAME, cn),
                    ]
                )
            )
            .issuer_name(self._ca_name)
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(self._not_before)
            .not_valid_after(self._not_after)
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(x509.ExtendedKeyUsage(usage), critical=False)
        )
        if sans:
            builder = builder.add_extension(x509.SubjectAlternativeName(sans), critical=False)
        cert = builder.sign(self._ca_key, hashes.SHA256())
        _write(self.path(f"{stem}.crt"), cert.public_bytes(serialization.Encoding.PEM))
        _write(self.path(f"{stem}.key"), _key_pem(key))
