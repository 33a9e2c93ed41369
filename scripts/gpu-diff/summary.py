#!/usr/bin/env python3
# summary.py: groups a replay report (replay.py's REPORT.tsv) by test and verdict, and prints
# each launch that did not give the same bytes on the GPU as on the cpu target.
#   python3 scripts/gpu-diff/summary.py REPORT.tsv
import collections
import sys

rows = []
for line in open(sys.argv[1]):
    if line.startswith("#"):
        print(line.strip())
        continue
    f = line.rstrip("\n").split("\t")
    rows.append((f[0], f[1], f[2], f[3], f[4] if len(f) > 4 else ""))

total = collections.Counter(r[3] for r in rows)
print(f"{len(rows)} launches: " + ", ".join(f"{v} {k}" for k, v in sorted(total.items())))
by_test = collections.defaultdict(collections.Counter)
for r in rows:
    by_test[r[1]][r[3]] += 1
print("\nby test (launches not `same`):")
for test, c in sorted(by_test.items()):
    bad = {k: v for k, v in c.items() if k not in ("same", "cpu-error")}
    if bad:
        print(f"  {test}: " + ", ".join(f"{v} {k}" for k, v in sorted(c.items())))
print("\nlaunches that differ or fail on the GPU:")
for r in rows:
    if r[3] not in ("same", "cpu-error"):
        print(f"  {r[0]} {r[1]} {r[2][:60]} {r[3]}: {r[4][:300]}")
