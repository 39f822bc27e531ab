#!/usr/bin/env python3
"""Writes user tokens minted by the test OpenID Connect provider (Server/Tests/Provider) for
load runs: `provider_tokens.py ISSUER COUNT ALG > tokens.txt`, one `user token` pair per line
(users load-0 ... load-N-1, or PREFIX0 ...), signed with ALG (RS256, ES256, EdDSA, ...), audience
`sessionpolicy`, valid for a day. Standard library only: it asks the provider's control API."""
import http.client, json, os, sys, urllib.parse

issuer, count, alg = sys.argv[1], int(sys.argv[2]), sys.argv[3]
prefix = os.environ.get("PREFIX", "load-")
url = urllib.parse.urlparse(issuer)
connection = http.client.HTTPConnection(url.hostname, url.port, timeout=600)
body = json.dumps({"alg": alg, "sub_prefix": prefix, "count": count, "aud": "sessionpolicy", "exp_in": 86400})
connection.request("POST", "/control/mint-batch", body, {"Content-Type": "application/json"})
for i, token in enumerate(json.loads(connection.getresponse().read())["tokens"]):
    print(f"{prefix}{i} {token}")
