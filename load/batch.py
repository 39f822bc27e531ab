#!/usr/bin/env python3
"""Writes a batch request body of COUNT items for the shipped SpendiQ policy:
`batch.py COUNT > batch.json`. The items mix the cases a re-check meets: active sessions
within the window, past it, and signed-out ones."""
import json, sys

count = int(sys.argv[1])
items = []
for i in range(count):
    day = 1 + i % 20
    state = {"state": "active", "user": f"u{i}", "device": f"d{i}", "auth_mode": "biometric",
             "last_idp_login": "2026-03-01T09:00:00Z", "last_online": "2026-03-01T09:00:00Z",
             "last_activity": "2026-03-01T09:00:00Z", "highest_time": "2026-03-01T09:00:00Z"}
    if i % 7 == 0:
        state = {"state": "signed_out"}
    event = {"type": "launch", "time": f"2026-03-{day:02d}T10:00:00Z", "network": "offline" if i % 2 else "online",
             "user": f"u{i}", "device": {"id": f"d{i}"}}
    items.append({"state": state, "event": event})
print(json.dumps({"items": items}, separators=(",", ":")))
