#!/usr/bin/env python3
"""compare.py <run dir> [extra keys]: for every order key 0..issued+3, compares verify.py with
`bin/foyer verify-draw`, and, for fans whose cookie jar holds a pass, with the pass's order_key
claim (the place the room really gave them)."""

import base64
import glob
import io
import json
import os
import re
import subprocess
import sys
import contextlib

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import verify as V  # noqa: E402

FOYER = os.path.join(HERE, "..", "..", "bin", "foyer")
run = sys.argv[1]
report_path = os.path.join(run, "report.json")
report = json.load(open(report_path))
draw = json.load(open(os.path.join(run, "draw.json")))
sale = V.Sale(report, draw)
issued = report["counts"]["issued"]
keys = list(range(issued + 4)) + [int(x) for x in sys.argv[2:]]


def theirs(k):
    p = subprocess.run([FOYER, "verify-draw", "--report", report_path, "--draw-index", str(k)],
                       capture_output=True, text=True, timeout=30)
    out = p.stdout + p.stderr
    r = {"rc": p.returncode, "text": p.stdout}
    m = re.search(r"has place (\d+)", out)
    r["place"] = int(m.group(1)) if m else None
    if "pre-queue's draw" in out:
        r["by"] = "prequeue"
    elif (m := re.search(r"rolling draw epoch (\d+) of order keys (\d+)-(\d+)", out)):
        r["by"] = "epoch %s" % m.group(1)
    elif "placed first come, first served" in out:
        r["by"] = "fcfs-error"
    else:
        r["by"] = "?"
    m = re.search(r"let in at (\S+), with places (\d+)-(\d+)", out)
    r["adm"] = (m.group(1), int(m.group(2)), int(m.group(3))) if m else (
        "never" if "never reached" in out else None)
    return r


def mine(k):
    res, lines = V.describe(sale, k)
    by = res["placed_by"]
    if by == "epoch":
        by = "epoch %d" % res["draw"]["epoch"]
    a = res.get("admission")
    adm = (a["at"], a["start"], a["start"] + a["count"] - 1) if a else (
        "never" if res["place"] is not None and res["place"] >= report["counts"]["serving"] else None)
    text = "room %s: the seed matches the commitment %s\n" % (sale.room, sale.commitment) + "\n".join(lines) + "\n"
    return {"place": res["place"], "by": by, "adm": adm, "text": text}


agree = disagree = text_same = 0
notes = []
for k in keys:
    t, m = theirs(k), mine(k)
    if t["by"] == "fcfs-error":
        # verify-draw refuses keys no draw covered; the document's place_of gives k (or none)
        same = m["by"] in ("fcfs", "awaiting")
        notes.append("key %d: verify-draw: error (no draw covers it, 'placed first come, first served'); "
                     "verify.py: %s place %s, admission %s" % (k, m["by"], m["place"], m["adm"]))
    else:
        same = (t["place"], t["by"], t["adm"]) == (m["place"], m["by"], m["adm"])
        text_same += t["text"] == m["text"]
    if same:
        agree += 1
    else:
        disagree += 1
        print("DISAGREE key %d: verify-draw %s | verify.py %s" % (k, t, m))
print("%s: %d keys, %d agree, %d disagree; exact text identical for %d of the drawn keys"
      % (run, len(keys), agree, disagree, text_same))
for n in notes:
    print("  " + n)

# the room's own truth: the order_key claim of each admitted fan's pass, against its draw_index
passes = ok = 0
for jar in sorted(glob.glob(os.path.join(run, "jars", "f*"))):
    if "." in os.path.basename(jar):
        continue
    name = os.path.basename(jar)
    k = int(name[1:])   # fans joined one at a time, in order: fN got order key N (checked below)
    joined = open(jar + ".join").read()
    m = re.search(r'"draw_index":(\d+)', joined)
    if m and int(m.group(1)) != k:
        print("note: %s has draw_index %s" % (name, m.group(1)))
        k = int(m.group(1))
    tok = None
    for line in open(jar):
        f = line.rstrip("\n").split("\t")
        if len(f) == 7 and f[5].endswith("_pass"):
            tok = f[6]
    if not tok:
        continue
    payload = json.loads(base64.urlsafe_b64decode(tok.split(".")[1] + "=="))
    passes += 1
    p, _ = sale.place_of(k)
    if payload.get("order_key") == p:
        ok += 1
    else:
        print("PASS MISMATCH %s key %d: pass order_key %s, verify.py place %s" % (name, k, payload.get("order_key"), p))
print("passes held by the fans: %d, whose order_key claim equals verify.py's place: %d" % (passes, ok))
