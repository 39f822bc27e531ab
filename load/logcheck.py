"""The decision log check of load/kill9.sh and load/cluster.sh: a session's log read page by
page through the history route must hold exactly revisions 1 to the stored one."""
import json


def logged_revisions(conn, session_path, headers):
    """Every revision in the decision log of the session at `session_path`
    (`/v1/policies/P/sessions/USER/DEVICE`), newest first."""
    seen, before = [], None
    while True:
        query = "?limit=500" + (f"&before={before}" if before else "")
        conn.request("GET", f"{session_path}/history{query}", headers=headers)
        page = json.loads(conn.getresponse().read())
        seen += [d["revision"] for d in page["decisions"]]
        before = page["next"]
        if before is None:
            return seen


def exactly_stored(user, seen, stored):
    """True when `seen` is revisions 1 to `stored`, each once; otherwise says so and is False."""
    if sorted(seen) == list(range(1, stored + 1)):
        return True
    print(f"  {user}: stored revision {stored}, logged revisions {len(seen)} (first {sorted(seen)[:3]}, last {sorted(seen)[-3:]})")
    return False


def check_session(conn, session_path, headers, user, acknowledged):
    """Reads the session back: (acknowledged revisions it lacks, its records, whether its log
    holds exactly revisions 1 to the stored one); says what is wrong."""
    conn.request("GET", session_path, headers=headers)
    r = conn.getresponse()
    stored = json.loads(r.read()).get("revision", 0) if r.status == 200 else 0
    lost = max(0, acknowledged - stored)
    if lost:
        print(f"  {user}: acknowledged revision {acknowledged}, stored {stored}")
    seen = logged_revisions(conn, session_path, headers)
    return lost, len(seen), exactly_stored(user, seen, stored)
