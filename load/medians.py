"""The median round of a load run, for the load scripts' summaries: lib.sh's `measure` appends
one line a round to WORK/runs-NAME (`requests/s p50 p99 failed`)."""
import os


def median(work, name):
    """The fields of the median round (by requests/s) and the failed requests of every round;
    None when NAME was not measured."""
    path = os.path.join(work, "runs-" + name)
    if not os.path.exists(path):
        return None
    rows = sorted((line.split() for line in open(path) if line.strip()), key=lambda r: float(r[0]))
    return rows[len(rows) // 2], sum(int(r[3]) for r in rows)
