#!/usr/bin/env python3
"""Writes HS256 user tokens for load runs: `tokens.py SECRET COUNT [USER] > tokens.txt`, one
`user token` pair per line (users load-0 ... load-N-1, or USER alone; PREFIX=other- names them
other-0 ...), valid for a day."""
import base64, hashlib, hmac, json, os, sys, time


def b64(b: bytes) -> str:
    return base64.urlsafe_b64encode(b).rstrip(b"=").decode()


def token(sub: str, secret: str) -> str:
    header = b64(json.dumps({"alg": "HS256", "typ": "JWT"}).encode())
    payload = b64(json.dumps({"sub": sub, "exp": int(time.time()) + 86400}).encode())
    signature = b64(hmac.new(secret.encode(), f"{header}.{payload}".encode(), hashlib.sha256).digest())
    return f"{header}.{payload}.{signature}"


if __name__ == "__main__":
    secret, count = sys.argv[1], int(sys.argv[2])
    names = sys.argv[3:4] or [f"{os.environ.get('PREFIX', 'load-')}{i}" for i in range(count)]
    for name in names:
        print(f"{name} {token(name, secret)}")
