"""A small OpenID Connect provider for the SessionPolicy server's tests. TEST-ONLY.

It signs whatever it is asked to (expired, invented kids, HMAC with a given
secret), keeps everything in memory, and its /control/ API has no authentication:
never expose it or use it for anything real. It serves discovery, a JWKS,
client-credentials tokens (RFC 6749 §4.4) and introspection (RFC 7662), plus a
JSON control API that tests use to mint tokens, rotate keys, register clients,
simulate outages and read counters. Usage (see README.md):

    python3 oidc_provider.py [--port 0] [--tls-dir DIR] [--host 127.0.0.1]

The first stdout line is `listening on http(s)://HOST:PORT`, the issuer. The
process exits when its stdin reaches EOF, and on SIGTERM.
"""
import argparse
import base64
import datetime
import ipaddress
import json
import os
import secrets
import signal
import ssl
import sys
import threading
import time
import warnings
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qsl, unquote_plus, urlsplit

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID
from joserfc import jwt
from joserfc.errors import SecurityWarning
from joserfc.jwk import ECKey, OctKey, OKPKey, RSAKey

warnings.filterwarnings("ignore", category=SecurityWarning)  # odd tokens are the point

# Key family -> (kid prefix, key generator, "alg" published in its JWK).
FAMILIES = {
    "RSA": ("rsa", lambda params: RSAKey.generate_key(2048, params), None),
    "EC": ("ec", lambda params: ECKey.generate_key("P-256", params), "ES256"),
    "EC384": ("ec384", lambda params: ECKey.generate_key("P-384", params), "ES384"),
    "OKP": ("ed", lambda params: OKPKey.generate_key("Ed25519", params), "EdDSA"),
}
# Signing algorithm -> the key family whose current key signs it.
ALG_FAMILY = dict.fromkeys(("RS256", "RS384", "RS512", "PS256", "PS384", "PS512"), "RSA")
ALG_FAMILY.update({"ES256": "EC", "ES384": "EC384", "EdDSA": "OKP"})
HMAC_ALGS = ("HS256", "HS384", "HS512")
STATS = {"/jwks": "jwks_fetches", "/.well-known/openid-configuration": "discovery_fetches",
         "/token": "token_requests", "/introspect": "introspections"}  # path -> counter
LIFETIME = 300  # seconds, for /token answers and the default mint exp


class BadRequest(Exception):
    """A client error, answered 400 with its message."""


class State:
    """All mutable provider state; every access holds self.lock."""

    def __init__(self, issuer, max_age, rsa_alg):
        self.lock = threading.Lock()
        self.issuer = issuer
        self.max_age = max_age              # JWKS Cache-Control max-age; None: no header
        self.rsa_alg = rsa_alg              # "alg" published on RSA JWKs; None: absent
        self.keys = {f: [] for f in FAMILIES}  # published keys; the last one is current
        self.counters = dict.fromkeys(FAMILIES, 0)
        self.clients = {}                   # client_id -> registration
        self.opaque = {}                    # opaque token -> claims
        self.outage = None                  # None, or (mode, hang seconds)
        self.stats = dict.fromkeys(STATS.values(), 0)
        for family in FAMILIES:
            self.rotate(family, drop_old=False)

    def rotate(self, family, drop_old):
        """Adds a new current key (kid prefix-N) to a family; returns its kid."""
        prefix, generate, _ = FAMILIES[family]
        with self.lock:
            self.counters[family] += 1
            kid = f"{prefix}-{self.counters[family]}"
        key = generate({"kid": kid, "use": "sig"})  # slow for RSA: outside the lock
        with self.lock:
            if drop_old:
                self.keys[family].clear()
            self.keys[family].append(key)
        return kid

    def jwks(self):
        """The public JWK set: kty, kid, use, alg (RSA: only if rsa_alg is set)."""
        with self.lock:
            out = []
            for family, keys in self.keys.items():
                alg = self.rsa_alg if family == "RSA" else FAMILIES[family][2]
                for key in keys:
                    out.append(key.as_dict(private=False) | ({"alg": alg} if alg else {}))
            return {"keys": out}


S: State = None  # the provider's state, set in main()


# ---------------------------------------------------------------- tokens ---

def build_claims(body, now):
    """JWT claims from a /control/mint body (fields in README.md); None drops a claim."""
    claims = {"iss": body.get("iss", S.issuer)}
    for name, claim, default in (("iat_in", "iat", 0), ("exp_in", "exp", LIFETIME),
                                 ("nbf_in", "nbf", None), ("auth_time_in", "auth_time", None)):
        if body.get(name, default) is not None:
            claims[claim] = int(now + body.get(name, default))
    for name in ("sub", "aud", "azp", "client_id", "cid", "nonce", "amr", "scope"):
        claims[name] = body.get(name)
    claims["jti"] = body.get("jti", secrets.token_urlsafe(12))
    claims.update(body.get("claims") or {})
    return {k: v for k, v in claims.items() if v is not None}

def signing_key(body, alg):
    """The key that signs alg: the family's current key, or an HMAC key."""
    if alg in HMAC_ALGS:
        if not isinstance(body.get("hs256_secret"), str):
            raise BadRequest("HMAC algorithms need hs256_secret")
        return OctKey.import_key(body["hs256_secret"].encode())
    if alg not in ALG_FAMILY:
        raise BadRequest(f"unsupported alg {alg!r}")
    with S.lock:
        return S.keys[ALG_FAMILY[alg]][-1]

def mint_one(body, key, kid=None):
    """A token from a mint body: a JWT, or an opaque string remembered for /introspect."""
    claims = build_claims(body, time.time())
    if body.get("opaque"):
        token = secrets.token_urlsafe(32)
        with S.lock:
            S.opaque[token] = claims
        return token
    alg = body.get("alg", "RS256")
    kid = kid or body.get("kid", getattr(key, "kid", None) if alg in ALG_FAMILY else None)
    header = {"alg": alg, "kid": kid, "typ": body.get("typ", "JWT")}
    header = {k: v for k, v in header.items() if v is not None}
    return jwt.encode(header, claims, key, algorithms=[alg], default_type=None)

def access_token(client):
    """The client-credentials access token: RS256, typ at+jwt, Keycloak-like claims."""
    now, cid = int(time.time()), client["client_id"]
    claims = {"iss": S.issuer, "sub": "service-account-" + cid, "aud": client["audience"],
              "azp": cid, "client_id": cid, "iat": now, "exp": now + LIFETIME,
              "jti": secrets.token_urlsafe(12), "scope": client["scope"]}
    key = signing_key({}, "RS256")
    header = {"alg": "RS256", "kid": key.kid, "typ": "at+jwt"}
    claims = {k: v for k, v in claims.items() if v is not None}
    return jwt.encode(header, claims, key, algorithms=["RS256"], default_type=None)


# ------------------------------------------------------------------ HTTP ---

class Handler(BaseHTTPRequestHandler):
    """Dispatches requests to ROUTES/CONTROL; HTTP/1.1 keep-alive, no logging."""
    protocol_version = "HTTP/1.1"
    server_version = "test-oidc-provider/1"
    timeout = 300  # idle keep-alive connections are dropped after this

    def log_message(self, *args):
        """No per-request stderr lines."""

    def dispatch(self):
        """Reads the body, runs the route, maps errors to JSON answers."""
        path = urlsplit(self.path).path
        with S.lock:
            if path in STATS:
                S.stats[STATS[path]] += 1
        try:
            if self.headers.get("Transfer-Encoding"):
                self.close_connection = True  # its unread body would break keep-alive
                raise BadRequest("send a Content-Length, not Transfer-Encoding")
            self.body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            if (self.command, path) in ROUTES:
                ROUTES[(self.command, path)](self)
            elif path in CONTROL:
                self.send_json(200, CONTROL[path](dict(json.loads(self.body or b"{}"))))
            else:
                self.send_json(404, {"error": "not_found"})
        except (BadRequest, ValueError, TypeError) as e:  # also bad JSON or numbers
            self.send_json(400, {"error": "invalid_request", "error_description": str(e)})
        except Exception as e:  # a bug here should still answer, visibly
            self.send_json(500, {"error": "server_error", "error_description": repr(e)})

    do_GET = do_POST = dispatch

    def form(self):
        """The application/x-www-form-urlencoded body as a dict (first value wins)."""
        pairs = parse_qsl(self.body.decode("utf-8", "replace"), keep_blank_values=True)
        return dict(reversed(pairs))

    def send_json(self, status, value, headers=()):
        """Answers JSON with a correct Content-Length."""
        data = json.dumps(value).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for name, val in headers:
            self.send_header(name, val)
        self.end_headers()
        self.wfile.write(data)

    def outage_answered(self):
        """During an outage, answers the request (503, close or hang) and returns True."""
        with S.lock:
            mode, hang = S.outage or (None, 0)
        if mode == "503":
            self.send_json(503, {"error": "temporarily_unavailable"}, [("Retry-After", "1")])
        elif mode in ("close", "hang"):
            deadline = time.monotonic() + (hang if mode == "hang" else 0)
            while time.monotonic() < deadline and S.outage is not None:
                time.sleep(0.05)  # a hang ends early when the outage is lifted
            self.close_connection = True  # close without writing a response
        return mode is not None

    def client_auth(self, form):
        """The registered client named by HTTP Basic or form credentials, or None."""
        cid, secret = form.get("client_id"), form.get("client_secret")
        auth = self.headers.get("Authorization", "")
        if auth[:6].lower() == "basic ":
            try:
                raw = base64.b64decode(auth[6:].strip(), validate=True).decode()
            except ValueError:
                return None
            cid, _, secret = (unquote_plus(p) for p in raw.partition(":"))  # RFC 6749 §2.3.1
        with S.lock:
            client = S.clients.get(cid)
        ok = client and secret and secrets.compare_digest(client["client_secret"].encode(),
                                                       secret.encode())
        return client if ok else None

    def invalid_client(self):
        """RFC 6749 §5.2 answer to a failed client authentication."""
        self.send_json(401, {"error": "invalid_client"},
                       [("WWW-Authenticate", 'Basic realm="test-oidc"')])


def discovery(h):
    """The OIDC discovery document."""
    if h.outage_answered():
        return
    i = S.issuer
    doc = {"issuer": i, "jwks_uri": i + "/jwks", "token_endpoint": i + "/token",
           "introspection_endpoint": i + "/introspect",
           "authorization_endpoint": i + "/authorize",  # required by the spec; not served
           "id_token_signing_alg_values_supported": list(ALG_FAMILY),
           "grant_types_supported": ["client_credentials"],
           "response_types_supported": ["code"], "subject_types_supported": ["public"],
           "token_endpoint_auth_methods_supported": ["client_secret_basic", "client_secret_post"]}
    h.send_json(200, doc)

def jwks(h):
    """The public JWK set, with Cache-Control: public, max-age=N unless disabled."""
    if h.outage_answered():
        return
    max_age = S.max_age
    h.send_json(200, S.jwks(), [("Cache-Control", f"public, max-age={max_age}")]
                if max_age is not None else [])

def token(h):
    """Client credentials grant (RFC 6749 §4.4)."""
    form = h.form()
    client = h.client_auth(form)
    if client is None:
        return h.invalid_client()
    if form.get("grant_type") != "client_credentials":
        return h.send_json(400, {"error": "unsupported_grant_type"})
    answer = {"access_token": access_token(client), "token_type": "Bearer",
              "expires_in": LIFETIME}
    h.send_json(200, answer, [("Cache-Control", "no-store"), ("Pragma", "no-cache")])

def introspect(h):
    """RFC 7662: active only for an opaque token minted here, before exp, after nbf."""
    form = h.form()
    if h.client_auth(form) is None:
        return h.invalid_client()
    if not form.get("token"):
        raise BadRequest("token is required")
    with S.lock:
        claims = S.opaque.get(form["token"])
    now = time.time()
    active = claims is not None and claims.get("exp", now + 1) > now >= claims.get("nbf", now)
    h.send_json(200, {"active": True, **claims} if active else {"active": False})


# ----------------------------------------------------------- control API ---

def control_mint(body):
    """One token (JWT or opaque) from the claim and header options in body."""
    return {"token": mint_one(body, signing_key(body, body.get("alg", "RS256")))}

def control_mint_batch(body):
    """count tokens like /control/mint; random_kid puts an invented kid in each;
    sub_prefix names the users PREFIX0 ... PREFIX<count-1> (load runs)."""
    count = int(body.get("count", 1))
    if not 0 <= count <= 100_000:
        raise BadRequest("count must be 0..100000")
    key, rand = signing_key(body, body.get("alg", "RS256")), body.get("random_kid")
    prefix = body.get("sub_prefix")
    def one(i):
        b = dict(body, sub=f"{prefix}{i}") if prefix is not None else body
        return mint_one(b, key, rand and "x-" + secrets.token_hex(8))
    return {"tokens": [one(i) for i in range(count)]}

def control_rotate(body):
    """A new current key for type RSA, EC (crv P-256 or P-384) or OKP."""
    family = "EC384" if body.get("crv") == "P-384" else body.get("type", "RSA")
    if family not in FAMILIES or family == "EC384" and body.get("type") != "EC":
        raise BadRequest("type must be RSA, EC or OKP (crv P-384 only with EC)")
    kid = S.rotate(family, bool(body.get("drop_old")))
    return {"kid": kid, "published": [k["kid"] for k in S.jwks()["keys"]]}

def control_outage(body):
    """/jwks and discovery answer 503, close, or hang (hang_seconds, default 30)."""
    mode = str(body.get("mode", "503"))
    if mode not in ("503", "close", "hang"):
        raise BadRequest("mode must be 503, close or hang")
    with S.lock:
        S.outage = (mode, float(body.get("hang_seconds", 30))) if body.get("down") else None
        return {"down": S.outage is not None, "mode": mode}

def control_cache(body):
    """Sets the JWKS max-age; null sends no Cache-Control."""
    with S.lock:
        S.max_age = None if body.get("max_age") is None else int(body["max_age"])
        return {"max_age": S.max_age}

def control_client(body):
    """Registers (or replaces) a client for /token and /introspect."""
    if not body.get("client_id") or not isinstance(body.get("client_secret"), str):
        raise BadRequest("client_id and client_secret (strings) are required")
    with S.lock:
        S.clients[body["client_id"]] = {k: body.get(k) for k in
                                        ("client_id", "client_secret", "audience", "scope")}
    return {"client_id": body["client_id"]}

def control_stats(body):
    """Request counters (requests failed by an outage included)."""
    with S.lock:
        return dict(S.stats)

def control_reset_stats(body):
    """Zeroes the request counters."""
    with S.lock:
        S.stats = dict.fromkeys(STATS.values(), 0)
        return dict(S.stats)


# OIDC/OAuth endpoints: (method, path) -> function(handler).
ROUTES = {("GET", "/.well-known/openid-configuration"): discovery, ("GET", "/jwks"): jwks,
          ("POST", "/token"): token, ("POST", "/introspect"): introspect}
# Control API (GET or POST): path -> function(JSON body) -> JSON answer.
CONTROL = {"/control/mint": control_mint, "/control/mint-batch": control_mint_batch,
           "/control/rotate": control_rotate, "/control/outage": control_outage,
           "/control/cache": control_cache, "/control/client": control_client,
           "/control/stats": control_stats, "/control/reset-stats": control_reset_stats}


# ------------------------------------------------------------- TLS, main ---

def certificate(subject, issuer, public_key, signer, extensions):
    """An X.509 certificate valid from an hour ago for 30 days."""
    now = datetime.datetime.now(datetime.timezone.utc)
    builder = (x509.CertificateBuilder().subject_name(subject).issuer_name(issuer)
               .public_key(public_key).serial_number(x509.random_serial_number())
               .not_valid_before(now - datetime.timedelta(hours=1))
               .not_valid_after(now + datetime.timedelta(days=30)))
    for extension, critical in extensions:
        builder = builder.add_extension(extension, critical)
    return builder.sign(signer, hashes.SHA256())

def make_tls(directory):
    """Writes ca.pem (test CA), server.pem and server-key.pem; returns the last two."""
    d = Path(directory)
    d.mkdir(parents=True, exist_ok=True)
    ca_key, key = ec.generate_private_key(ec.SECP256R1()), ec.generate_private_key(ec.SECP256R1())
    name = lambda cn: x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, cn)])
    usage = lambda sign, certs: x509.KeyUsage(sign, False, False, False, False, certs, certs,
                                              False, False)
    ca = certificate(name("oidc_provider test CA"), name("oidc_provider test CA"),
                     ca_key.public_key(), ca_key, [
                         (x509.BasicConstraints(ca=True, path_length=0), True),
                         (usage(False, True), True),
                         (x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()), False)])
    sans = [x509.IPAddress(ipaddress.ip_address("127.0.0.1")), x509.DNSName("localhost")]
    leaf = certificate(name("localhost"), ca.subject, key.public_key(), ca_key, [
        (x509.SubjectAlternativeName(sans), False),
        (x509.BasicConstraints(ca=False, path_length=None), True), (usage(True, False), True),
        (x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), False),
        (x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), False)])
    pem = serialization.Encoding.PEM
    (d / "ca.pem").write_bytes(ca.public_bytes(pem))
    (d / "server.pem").write_bytes(leaf.public_bytes(pem))
    (d / "server-key.pem").write_bytes(key.private_bytes(
        pem, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()))
    return d / "server.pem", d / "server-key.pem"


class Server(ThreadingHTTPServer):
    """Threaded HTTP server: daemon threads, a deep backlog, no error traces."""
    daemon_threads = True
    request_queue_size = 128

    def handle_error(self, request, client_address):
        """Quiet: TLS handshake failures and resets are normal in tests."""


def exit_on_stdin_eof():
    """Exits the process when stdin closes: the test that started us is gone."""
    try:
        while sys.stdin.buffer.read1(65536):
            pass
    finally:
        os._exit(0)

def main():
    """Parses arguments, binds, prints the issuer line, serves until killed."""
    global S
    p = argparse.ArgumentParser(description="Test-only OpenID Connect provider.")
    p.add_argument("--port", type=int, default=0)
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--tls-dir", help="write a test CA and server cert here, serve HTTPS")
    p.add_argument("--max-age", type=int, default=300, help="JWKS Cache-Control max-age")
    p.add_argument("--rsa-alg", help="publish this alg on RSA JWKs (default: no alg)")
    p.add_argument("--ignore-stdin", action="store_true", help="don't exit on stdin EOF")
    args = p.parse_args()
    signal.signal(signal.SIGTERM, lambda *_: os._exit(0))
    if not args.ignore_stdin and sys.stdin is not None:
        threading.Thread(target=exit_on_stdin_eof, daemon=True).start()
    server = Server((args.host, args.port), Handler)
    if args.tls_dir:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(*make_tls(args.tls_dir))
        # The handshake then happens in the worker thread, not in the accept loop.
        server.socket = ctx.wrap_socket(server.socket, server_side=True,
                                        do_handshake_on_connect=False)
    scheme = "https" if args.tls_dir else "http"
    S = State(f"{scheme}://{args.host}:{server.server_address[1]}", args.max_age, args.rsa_alg)
    print(f"listening on {S.issuer}", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
