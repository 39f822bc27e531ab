"""Self-test of oidc_provider.py (test-only helper). Run: python3 selftest.py

Starts the provider as a child process (stdin = a pipe), drives it over HTTP and
HTTPS, and checks every endpoint, every signing algorithm against the published
JWKS with joserfc, rotation, outages, caching, stats, keep-alive, concurrency,
TLS, and the stdin-EOF / SIGTERM exits. Prints one line per check; exit 1 on failure.
"""
import base64
import http.client
import json
import os
import signal
import socket
import ssl
import subprocess
import sys
import tempfile
import threading
import time
import warnings
from urllib.parse import urlsplit

from cryptography import x509
from cryptography.hazmat.primitives import serialization
from joserfc import jwt
from joserfc.errors import JoseError, SecurityWarning
from joserfc.jwk import KeySet, OctKey, RSAKey

warnings.filterwarnings("ignore", category=SecurityWarning)
HERE = os.path.dirname(os.path.abspath(__file__))
ASYM = ["RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "EdDSA"]
FAILURES = []


def check(name, cond, detail=""):
    """Records and prints one check."""
    print(("ok   " if cond else "FAIL ") + name + ("" if cond else f"  {detail}"), flush=True)
    if not cond:
        FAILURES.append(name)


def start(*args):
    """Starts the provider; returns (process, issuer)."""
    p = subprocess.Popen([sys.executable, os.path.join(HERE, "oidc_provider.py"), *args],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    line = p.stdout.readline().decode()
    assert line.startswith("listening on "), line
    return p, line.split()[-1]


class Client:
    """A keep-alive HTTP(S) client for one provider."""

    def __init__(self, issuer, ctx=None, timeout=10):
        u = urlsplit(issuer)
        cls = http.client.HTTPSConnection if u.scheme == "https" else http.client.HTTPConnection
        kw = {"context": ctx} if ctx else {}
        self.conn = cls(u.hostname, u.port, timeout=timeout, **kw)

    def req(self, method, path, body=None, headers=None, form=False):
        """Returns (status, headers, JSON or raw body)."""
        if isinstance(body, dict) and not form:
            body = json.dumps(body)
        h = dict(headers or {})
        if form:
            h["Content-Type"] = "application/x-www-form-urlencoded"
        self.conn.request(method, path, body=body, headers=h)
        r = self.conn.getresponse()
        data = r.read()
        try:
            data = json.loads(data)
        except ValueError:
            pass
        return r.status, r.headers, data

    def ctl(self, path, body=None):
        """POSTs to the control API; expects 200; returns the JSON answer."""
        status, _, data = self.req("POST", path, body or {})
        assert status == 200, (path, status, data)
        return data


def jwks_of(c):
    """The provider's JWKS as a joserfc KeySet, plus the raw JSON."""
    _, _, raw = c.req("GET", "/jwks")
    return KeySet.import_key_set(raw), raw


def verify(token, keyset, alg):
    """joserfc decode against a key set; returns the Token or the error."""
    try:
        return jwt.decode(token, keyset, algorithms=[alg])
    except (JoseError, ValueError) as e:
        return e


def header_of(token):
    """The decoded JOSE header of a compact token (unverified)."""
    part = token.split(".")[0]
    return json.loads(base64.urlsafe_b64decode(part + "=" * (-len(part) % 4)))


def test_discovery_and_jwks(c, iss):
    status, h, doc = c.req("GET", "/.well-known/openid-configuration")
    check("discovery 200 + fields", status == 200 and doc["issuer"] == iss
          and doc["jwks_uri"] == iss + "/jwks" and doc["token_endpoint"] == iss + "/token"
          and doc["introspection_endpoint"] == iss + "/introspect"
          and doc["grant_types_supported"] == ["client_credentials"]
          and doc["response_types_supported"] == ["code"]
          and doc["subject_types_supported"] == ["public"]
          and set(ASYM) <= set(doc["id_token_signing_alg_values_supported"]), doc)
    check("issuer has no trailing slash", not iss.endswith("/"))
    status, h, raw = c.req("GET", "/jwks")
    kids = [k["kid"] for k in raw["keys"]]
    check("jwks 200, 4 keys", status == 200 and kids == ["rsa-1", "ec-1", "ec384-1", "ed-1"], kids)
    check("jwks Cache-Control default", h["Cache-Control"] == "public, max-age=300", h)
    private = {"d", "p", "q", "dp", "dq", "qi", "k"}
    check("jwks public only", all(not (private & set(k)) for k in raw["keys"]))
    check("jwks use=sig", all(k["use"] == "sig" for k in raw["keys"]))
    algs = {k["kid"]: k.get("alg") for k in raw["keys"]}
    check("jwks alg: RSA none, ES256/ES384/EdDSA",
          algs == {"rsa-1": None, "ec-1": "ES256", "ec384-1": "ES384", "ed-1": "EdDSA"}, algs)
    crv = {k["kid"]: (k["kty"], k.get("crv")) for k in raw["keys"]}
    check("jwks kty/crv", crv == {"rsa-1": ("RSA", None), "ec-1": ("EC", "P-256"),
                                  "ec384-1": ("EC", "P-384"), "ed-1": ("OKP", "Ed25519")}, crv)
    n = base64.urlsafe_b64decode(raw["keys"][0]["n"] + "==")
    check("RSA key is 2048 bits", len(n) * 8 == 2048)


def test_algorithms(c, iss):
    keyset, _ = jwks_of(c)
    expect_kid = {"ES256": "ec-1", "ES384": "ec384-1", "EdDSA": "ed-1"}
    for alg in ASYM:
        tok = c.ctl("/control/mint", {"sub": "alice", "alg": alg, "aud": "api"})["token"]
        t = verify(tok, keyset, alg)
        ok = not isinstance(t, Exception) and t.header["alg"] == alg \
            and t.header["kid"] == expect_kid.get(alg, "rsa-1") and t.header["typ"] == "JWT" \
            and t.claims["sub"] == "alice" and t.claims["aud"] == "api" \
            and t.claims["iss"] == iss and t.claims["exp"] - t.claims["iat"] == 300 \
            and abs(t.claims["iat"] - time.time()) < 5 and "jti" in t.claims
        check(f"mint {alg} verifies against JWKS", ok, t)
        other = "ES256" if alg != "ES256" else "RS256"
        check(f"mint {alg} refused under alg {other}",
              isinstance(verify(tok, keyset, other), Exception))


def test_mint_options(c, iss):
    keyset, raw = jwks_of(c)
    now = time.time()
    tok = c.ctl("/control/mint", {
        "sub": "bob", "aud": ["a", "b"], "iss": "https://other", "exp_in": -60, "nbf_in": 30,
        "iat_in": -120, "azp": "web", "client_id": "cli", "cid": "cid1", "nonce": "n0",
        "auth_time_in": -3600, "amr": ["pwd", "otp"], "typ": "at+jwt",
        "claims": {"roles": ["x"], "tenant": 7}})["token"]
    t = jwt.decode(tok, keyset, algorithms=["RS256"])  # signature only, no claim checks
    cl = t.claims
    check("mint claims", cl["aud"] == ["a", "b"] and cl["iss"] == "https://other"
          and abs(cl["exp"] - (now - 60)) < 3 and abs(cl["nbf"] - (now + 30)) < 3
          and abs(cl["iat"] - (now - 120)) < 3 and abs(cl["auth_time"] - (now - 3600)) < 3
          and cl["azp"] == "web" and cl["client_id"] == "cli" and cl["cid"] == "cid1"
          and cl["nonce"] == "n0" and cl["amr"] == ["pwd", "otp"] and cl["roles"] == ["x"]
          and cl["tenant"] == 7, cl)
    check("mint typ override", t.header["typ"] == "at+jwt", t.header)
    tok = c.ctl("/control/mint", {"sub": "x", "exp_in": None, "iat_in": None, "typ": None})["token"]
    t = jwt.decode(tok, keyset, algorithms=["RS256"])
    check("exp_in/iat_in/typ null omit", "exp" not in t.claims and "iat" not in t.claims
          and "typ" not in t.header and "aud" not in t.claims, (t.header, t.claims))
    tok = c.ctl("/control/mint", {"sub": "x", "kid": "invented-7"})["token"]
    check("invented kid in header", header_of(tok)["kid"] == "invented-7")
    check("invented kid not verifiable via JWKS", isinstance(verify(tok, keyset, "RS256"), Exception))
    rsa = RSAKey.import_key(raw["keys"][0])
    check("invented kid: signature by the real key",
          not isinstance(verify(tok, rsa, "RS256"), Exception))
    tok = c.ctl("/control/mint", {"sub": "x", "alg": "ES256", "kid": None})["token"]
    check("kid null omits kid", "kid" not in header_of(tok))
    # HMAC signed with the RSA public key's PEM: must not verify with the JWKS.
    pem = rsa.as_pem(private=False).decode()
    tok = c.ctl("/control/mint", {"sub": "mallory", "alg": "HS256", "hs256_secret": pem,
                                  "kid": "rsa-1"})["token"]
    h = header_of(tok)
    check("HS256 header", h["alg"] == "HS256" and h["kid"] == "rsa-1", h)
    check("HS256 verifies with the given secret",
          not isinstance(verify(tok, OctKey.import_key(pem.encode()), "HS256"), Exception))
    check("HS256 refused by JWKS (asym algs)",
          all(isinstance(verify(tok, keyset, a), Exception) for a in ASYM + ["HS256"]))
    tok = c.ctl("/control/mint", {"sub": "x", "alg": "HS256", "hs256_secret": "k" * 32})["token"]
    check("HS256 without kid by default", "kid" not in header_of(tok))
    status, _, err = c.req("POST", "/control/mint", {"alg": "HS256"})
    check("HS256 without secret -> 400", status == 400, err)
    status, _, err = c.req("POST", "/control/mint", {"alg": "none"})
    check("unknown alg -> 400", status == 400, err)
    status, _, err = c.req("POST", "/control/mint", "{not json")
    check("bad JSON -> 400", status == 400, err)
    status, _, err = c.req("GET", "/nope")
    check("unknown path -> 404", status == 404, err)


def test_batch(c):
    _, raw = jwks_of(c)
    rsa = RSAKey.import_key(raw["keys"][0])
    t0 = time.time()
    toks = c.ctl("/control/mint-batch", {"sub": "flood", "count": 2000, "random_kid": True})["tokens"]
    dt = time.time() - t0
    kids = {header_of(t)["kid"] for t in toks}
    check(f"mint-batch 2000 RS256 random kids in {dt:.2f}s", len(toks) == 2000 and len(kids) == 2000
          and not kids & {"rsa-1", "ec-1"}, len(kids))
    check("mint-batch tokens signed by the real key",
          all(not isinstance(verify(t, rsa, "RS256"), Exception) for t in toks[:50]))
    toks = c.ctl("/control/mint-batch", {"sub": "s", "alg": "ES256", "count": 5})["tokens"]
    check("mint-batch without random_kid keeps kid",
          [header_of(t)["kid"] for t in toks] == ["ec-1"] * 5 and len(set(toks)) == 5)


def test_rotation(c):
    old = c.ctl("/control/mint", {"sub": "a"})["token"]
    r = c.ctl("/control/rotate", {"type": "RSA", "drop_old": False})
    keyset, raw = jwks_of(c)
    kids = [k["kid"] for k in raw["keys"]]
    check("rotate RSA keeps old", r["kid"] == "rsa-2" and "rsa-1" in kids and "rsa-2" in kids, r)
    new = c.ctl("/control/mint", {"sub": "a", "alg": "PS384"})["token"]
    check("mint uses rsa-2", header_of(new)["kid"] == "rsa-2")
    check("old and new verify", not isinstance(verify(old, keyset, "RS256"), Exception)
          and not isinstance(verify(new, keyset, "PS384"), Exception))
    r = c.ctl("/control/rotate", {"type": "RSA", "drop_old": True})
    keyset, raw = jwks_of(c)
    kids = [k["kid"] for k in raw["keys"]]
    check("rotate RSA drop_old", r["kid"] == "rsa-3" and [k for k in kids if k.startswith("rsa")]
          == ["rsa-3"], kids)
    check("dropped key's token refused", isinstance(verify(old, keyset, "RS256"), Exception)
          and isinstance(verify(new, keyset, "PS384"), Exception))
    for body, kid, alg in (({"type": "EC"}, "ec-2", "ES256"),
                           ({"type": "EC", "crv": "P-384", "drop_old": True}, "ec384-2", "ES384"),
                           ({"type": "OKP", "drop_old": True}, "ed-2", "EdDSA")):
        r = c.ctl("/control/rotate", body)
        keyset, raw = jwks_of(c)
        tok = c.ctl("/control/mint", {"sub": "a", "alg": alg})["token"]
        check(f"rotate {body} -> {kid}", r["kid"] == kid and header_of(tok)["kid"] == kid
              and not isinstance(verify(tok, keyset, alg), Exception), r)
    kids = [k["kid"] for k in raw["keys"]]
    check("JWKS after rotations", kids == ["rsa-3", "ec-1", "ec-2", "ec384-2", "ed-2"], kids)
    status, _, _ = c.req("POST", "/control/rotate", {"type": "DSA"})
    check("rotate bad type -> 400", status == 400)


def test_cache_and_rsa_alg(c, iss):
    c.ctl("/control/cache", {"max_age": 7})
    _, h, _ = c.req("GET", "/jwks")
    check("cache max_age 7", h["Cache-Control"] == "public, max-age=7", h["Cache-Control"])
    c.ctl("/control/cache", {"max_age": None})
    _, h, _ = c.req("GET", "/jwks")
    check("cache null -> no Cache-Control", h.get("Cache-Control") is None)
    c.ctl("/control/cache", {"max_age": 300})


def test_outage(c, iss):
    c.ctl("/control/reset-stats")
    c.ctl("/control/outage", {"down": True, "mode": "503"})
    s1, h, _ = c.req("GET", "/jwks")
    s2, _, _ = c.req("GET", "/.well-known/openid-configuration")
    check("outage 503", s1 == 503 and s2 == 503, (s1, s2))
    check("control works during outage", c.req("GET", "/control/stats")[0] == 200)
    status, _, _ = c.req("POST", "/token", "grant_type=client_credentials&client_id=svc"
                         "&client_secret=s3cret", form=True)
    check("token works during outage", status == 200, status)
    c.ctl("/control/outage", {"down": True, "mode": "close"})
    fresh = Client(iss)
    for path in ("/jwks", "/.well-known/openid-configuration"):
        try:
            fresh.req("GET", path)
            check(f"outage close {path}", False, "got an answer")
        except (http.client.RemoteDisconnected, ConnectionError) as e:
            check(f"outage close {path}: {type(e).__name__}", True)
        fresh = Client(iss)
    c.ctl("/control/outage", {"down": True, "mode": "hang"})
    t0 = time.time()
    try:
        Client(iss, timeout=1.5).req("GET", "/jwks")
        check("outage hang", False, "got an answer")
    except (socket.timeout, TimeoutError):
        check(f"outage hang: client timed out after {time.time() - t0:.1f}s", True)
    c.ctl("/control/outage", {"down": True, "mode": "hang", "hang_seconds": 1})
    t0 = time.time()
    try:
        Client(iss, timeout=5).req("GET", "/jwks")
        check("outage hang_seconds=1 closes", False)
    except (http.client.RemoteDisconnected, ConnectionError):
        check(f"outage hang_seconds=1 closes after {time.time() - t0:.1f}s",
              0.9 < time.time() - t0 < 3)
    c.ctl("/control/outage", {"down": False})
    check("recovered", c.req("GET", "/jwks")[0] == 200
          and c.req("GET", "/.well-known/openid-configuration")[0] == 200)
    st = c.req("GET", "/control/stats")[2]
    check("stats count outage requests",
          st == {"jwks_fetches": 5, "discovery_fetches": 3, "token_requests": 1,
                 "introspections": 0}, st)
    c.ctl("/control/reset-stats")
    check("reset-stats", set(c.req("GET", "/control/stats")[2].values()) == {0})


def test_token_and_introspect(c, iss):
    keyset, _ = jwks_of(c)
    c.ctl("/control/client", {"client_id": "svc", "client_secret": "s3cret",
                              "audience": ["api", "other"], "scope": "read write"})
    c.ctl("/control/client", {"client_id": "c:2", "client_secret": "p@ss:w+rd", "audience": "api"})
    status, h, ans = c.req("POST", "/token", "grant_type=client_credentials&client_id=svc"
                           "&client_secret=s3cret", form=True)
    check("token (form auth)", status == 200 and ans["token_type"] == "Bearer"
          and ans["expires_in"] == 300 and h["Cache-Control"] == "no-store", (status, ans))
    t = verify(ans["access_token"], keyset, "RS256")
    cur = [k.kid for k in keyset.keys if k.kid.startswith("rsa")][-1]
    ok = not isinstance(t, Exception) and t.header == {"alg": "RS256", "kid": cur, "typ": "at+jwt"} \
        and t.claims["sub"] == "service-account-svc" and t.claims["aud"] == ["api", "other"] \
        and t.claims["azp"] == "svc" and t.claims["client_id"] == "svc" \
        and t.claims["scope"] == "read write" and t.claims["iss"] == iss \
        and t.claims["exp"] - t.claims["iat"] == 300 and t.claims["jti"]
    check("access token header and claims", ok, t if isinstance(t, Exception) else t.claims)
    # HTTP Basic: client_id and secret form-encoded, then base64 (RFC 6749 §2.3.1).
    basic = base64.b64encode(b"c%3A2:p%40ss%3Aw%2Brd").decode()
    status, _, ans = c.req("POST", "/token", "grant_type=client_credentials", form=True,
                           headers={"Authorization": "Basic " + basic})
    t = verify(ans.get("access_token", ""), keyset, "RS256")
    check("token (Basic auth, encoded chars)", status == 200 and t.claims["aud"] == "api"
          and "scope" not in t.claims, ans)
    for body, hdr in (("grant_type=client_credentials&client_id=svc&client_secret=bad", {}),
                      ("grant_type=client_credentials&client_id=nobody&client_secret=x", {}),
                      ("grant_type=client_credentials", {}),
                      ("grant_type=client_credentials", {"Authorization": "Basic !!!"})):
        status, h, ans = c.req("POST", "/token", body, form=True, headers=hdr)
        check(f"token bad client -> 401 invalid_client ({body[30:] or hdr or 'no credentials'})",
              status == 401 and ans == {"error": "invalid_client"}
              and "WWW-Authenticate" in h, (status, ans))
    status, _, ans = c.req("POST", "/token", "grant_type=password&client_id=svc"
                           "&client_secret=s3cret", form=True)
    check("wrong grant_type -> 400", status == 400 and ans["error"] == "unsupported_grant_type")
    auth = "client_id=svc&client_secret=s3cret&token="
    opaque = c.ctl("/control/mint", {"sub": "op", "opaque": True, "aud": "api",
                                     "scope": "read", "claims": {"x": 1}})["token"]
    check("opaque token is not a JWT", opaque.count(".") == 0 and len(opaque) > 30)
    status, _, ans = c.req("POST", "/introspect", auth + opaque, form=True)
    check("introspect opaque active", status == 200 and ans["active"] is True and ans["sub"] == "op"
          and ans["aud"] == "api" and ans["scope"] == "read" and ans["x"] == 1
          and ans["iss"] == iss and ans["exp"] > time.time(), ans)
    expired = c.ctl("/control/mint", {"sub": "op", "opaque": True, "exp_in": -1})["token"]
    future = c.ctl("/control/mint", {"sub": "op", "opaque": True, "nbf_in": 60})["token"]
    forever = c.ctl("/control/mint", {"sub": "op", "opaque": True, "exp_in": None})["token"]
    jwt_tok = c.ctl("/control/mint", {"sub": "op"})["token"]
    for name, tok, want in (("expired", expired, False), ("nbf future", future, False),
                            ("no exp", forever, True), ("JWT", jwt_tok, False),
                            ("unknown", "nope", False)):
        status, _, ans = c.req("POST", "/introspect", auth + tok, form=True)
        check(f"introspect {name} -> active {want}", status == 200 and ans["active"] is want
              and (want or ans == {"active": False}), ans)
    status, _, ans = c.req("POST", "/introspect", "token=" + opaque, form=True,
                           headers={"Authorization": "Basic " + base64.b64encode(b"svc:x").decode()})
    check("introspect bad client -> 401", status == 401 and ans == {"error": "invalid_client"})
    status, _, _ = c.req("POST", "/introspect", auth, form=True)
    check("introspect without token -> 400", status == 400)


def test_keepalive_and_concurrency(iss):
    c = Client(iss)
    sock_ids = set()
    for i in range(20):
        c.req("GET", "/jwks" if i % 2 else "/control/stats")
        c.req("POST", "/control/mint", {"sub": str(i), "alg": "ES256"})
        c.req("GET", "/missing")
        sock_ids.add(id(c.conn.sock))
    check("keep-alive: 60 requests on one connection", len(sock_ids) == 1, len(sock_ids))
    errors = []

    def worker(n):
        try:
            w = Client(iss)
            for i in range(20):
                assert w.req("GET", "/jwks")[0] == 200
                assert w.req("POST", "/control/mint", {"sub": f"{n}-{i}", "alg": "EdDSA"})[0] == 200
                assert w.req("POST", "/token", "grant_type=client_credentials&client_id=svc"
                             "&client_secret=s3cret", form=True)[0] == 200
        except Exception as e:  # noqa: BLE001 - collected for the report
            errors.append(repr(e))
    c.ctl("/control/reset-stats")
    threads = [threading.Thread(target=worker, args=(n,)) for n in range(40)]
    t0 = time.time()
    [t.start() for t in threads]
    [t.join() for t in threads]
    st = c.req("GET", "/control/stats")[2]
    check(f"40 threads x 60 requests in {time.time() - t0:.1f}s, no errors", not errors
          and st["jwks_fetches"] == 800 and st["token_requests"] == 800, (errors[:3], st))


def test_tls():
    with tempfile.TemporaryDirectory() as d:
        p, iss = start("--tls-dir", d)
        check("TLS issuer https", iss.startswith("https://127.0.0.1:"), iss)
        ca = x509.load_pem_x509_certificate(open(os.path.join(d, "ca.pem"), "rb").read())
        bc = ca.extensions.get_extension_for_class(x509.BasicConstraints).value
        check("ca.pem is a CA", bc.ca and ca.subject == ca.issuer)
        ctx = ssl.create_default_context(cafile=os.path.join(d, "ca.pem"))
        if hasattr(ssl, "VERIFY_X509_STRICT"):
            ctx.verify_flags |= ssl.VERIFY_X509_STRICT
        status, _, doc = Client(iss, ctx).req("GET", "/.well-known/openid-configuration")
        check("TLS discovery via 127.0.0.1 (strict verify)", status == 200 and doc["issuer"] == iss)
        port = urlsplit(iss).port
        status, _, _ = Client(f"https://localhost:{port}", ctx).req("GET", "/jwks")
        check("TLS via DNS localhost", status == 200)
        try:
            Client(iss, ssl.create_default_context()).req("GET", "/jwks")
            check("TLS refused without the test CA", False)
        except ssl.SSLCertVerificationError:
            check("TLS refused without the test CA", True)
        out = subprocess.run(["curl", "-sS", "--cacert", os.path.join(d, "ca.pem"),
                              iss + "/jwks"], capture_output=True, text=True)
        check("curl --cacert", out.returncode == 0 and '"rsa-1"' in out.stdout, out.stderr)
        out = subprocess.run(["curl", "-sS", iss + "/jwks"], capture_output=True, text=True)
        check("curl without --cacert fails", out.returncode != 0)
        # A plain-HTTP client against the TLS port must not disturb the server.
        with socket.create_connection(("127.0.0.1", port)) as s:
            s.sendall(b"GET /jwks HTTP/1.1\r\nHost: x\r\n\r\n")
            s.settimeout(3)
            try:
                s.recv(100)
            except OSError:
                pass
        check("TLS still serving after a plain-HTTP client",
              Client(iss, ctx).req("GET", "/jwks")[0] == 200)
        p.stdin.close()
        p.wait(5)
        check("TLS: no stderr output", p.stderr.read() == b"")


def test_lifecycle():
    p, iss = start()
    t0 = time.time()
    p.stdin.close()
    rc = p.wait(5)
    check(f"exits on stdin EOF ({time.time() - t0:.2f}s, rc {rc})", rc == 0)
    p, iss = start()
    p.send_signal(signal.SIGTERM)
    check("exits on SIGTERM", p.wait(5) == 0)
    p, iss = start("--rsa-alg", "RS256", "--max-age", "60")
    c = Client(iss)
    status, h, raw = c.req("GET", "/jwks")
    check("--rsa-alg RS256 publishes alg", raw["keys"][0].get("alg") == "RS256")
    check("--max-age 60", h["Cache-Control"] == "public, max-age=60")
    tok = c.ctl("/control/mint", {"sub": "a", "alg": "PS256"})["token"]
    check("PS256 still minted with --rsa-alg RS256", header_of(tok)["alg"] == "PS256")
    p.stdin.close()
    p.wait(5)


def main():
    p, iss = start()
    c = Client(iss)
    check("first line and issuer", iss.startswith("http://127.0.0.1:"), iss)
    test_discovery_and_jwks(c, iss)
    test_algorithms(c, iss)
    test_mint_options(c, iss)
    test_batch(c)
    test_token_and_introspect(c, iss)
    test_cache_and_rsa_alg(c, iss)
    test_outage(c, iss)
    test_rotation(c)
    test_keepalive_and_concurrency(iss)
    p.stdin.close()
    check("main provider exits on stdin EOF", p.wait(5) == 0)
    err = p.stderr.read()
    check("no stderr output (quiet logging)", err == b"", err[:500])
    test_tls()
    test_lifecycle()
    print(f"\n{'ALL OK' if not FAILURES else f'{len(FAILURES)} FAILED: {FAILURES}'}")
    sys.exit(1 if FAILURES else 0)


if __name__ == "__main__":
    main()
