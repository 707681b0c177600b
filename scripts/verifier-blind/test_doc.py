#!/usr/bin/env python3
"""Checks verify.py against the test vectors, the trace and the worked example of docs/PROTOCOL.md,
parsed from the document itself."""

import io
import json
import os
import re
import sys
import contextlib
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import verify as V  # noqa: E402

DOC = open(os.path.join(HERE, "..", "..", "docs", "PROTOCOL.md"), encoding="utf-8").read()
fails = 0
checks = 0


def check(cond, what):
    global fails, checks
    checks += 1
    if not cond:
        fails += 1
        print("FAIL:", what)


vec = DOC[DOC.index("<!-- vectors:begin -->"):DOC.index("<!-- vectors:end -->")]
seeds = dict(re.findall(r"\*\*(S\d)\*\* = `([0-9a-f]{64})`", vec))
check(seeds.get("S0") == bytes(range(32)).hex(), "S0 is bytes 0x00..0x1f")
check(seeds.get("S1") == "ff" * 32, "S1 is 32 bytes 0xff")

# commitments
for s, c in re.findall(r"^\| (S\d) \| `([0-9a-f]{64})` \|$", vec, re.M):
    try:
        V.check_seed(seeds[s], c)
        ok = True
    except V.VerifyError:
        ok = False
    check(ok, "commitment of %s" % s)

# epoch seeds
for s, e, es in re.findall(r"^\| (S\d) \| (\d+) \| `([0-9a-f]{64})` \|$", vec, re.M):
    got = V.epoch_seed(bytes.fromhex(seeds[s]), int(e)).hex()
    check(got == es, "epoch seed %s/%s: got %s want %s" % (s, e, got, es))

# places
n_places = 0
for s, n, h, i, p in re.findall(r"^\| (S\d) \| (\d+) \| (\d+|–) \| (\d+) \| (\d+) \|$", vec, re.M):
    n, i, p = int(n), int(i), int(p)
    got = V.P(bytes.fromhex(seeds[s]), n, i)
    n_places += 1
    check(got == p, "P(%s, %d, %d) = %d, want %d" % (s, n, i, got, p))
    if h != "–":
        check(V.half_bits(n) == int(h), "h for n=%d: %d want %s" % (n, V.half_bits(n), h))

# epoch-1 seed places
ek = V.epoch_seed(bytes.fromhex(seeds["S0"]), 1)
for n, i, p in re.findall(r"^\| (\d+) \| (\d+) \| (\d+) \|$", vec, re.M):
    got = V.P(ek, int(n), int(i))
    n_places += 1
    check(got == int(p), "P(epoch_seed(S0,1), %s, %s) = %d want %s" % (n, i, got, p))

# the trace
trace = []
V.P(bytes.fromhex(seeds["S0"]), 10, 3, trace)
doc_rounds = re.findall(r"round (\d): message ([0-9a-f]+), F = ([0-9a-f]{16}), L = (\d+), R = (\d+)", vec)
mine = [(str(r), m, f, str(l), str(rr)) for _, t in trace for (r, m, f, l, rr) in t]
check(len(doc_rounds) == 16 and mine == [tuple(x) for x in doc_rounds], "trace of S0, n=10, i=3 round by round")
check([x for x, _ in trace] == [3, 12], "trace passes start at 3 then 12")
check(all(len(bytes.fromhex(m)) == 30 for _, m, _, _, _ in doc_rounds), "messages are 30 bytes")

# permutation property on a few sizes
for n in (2, 3, 7, 10, 17, 1000, 4097):
    check(sorted(V.P(ek, n, i) for i in range(n)) == list(range(n)), "P is a bijection for n=%d" % n)

# worked example
ex = DOC[DOC.index("<!-- example:begin -->"):DOC.index("<!-- example:end -->")]
blocks = re.findall(r"```json\n(.*?)\n```", ex, re.S)
draw, report = json.loads(blocks[0]), json.loads(blocks[1])
sale = V.Sale(report, draw)
check(sale.check_whole_sale() == [], "worked example: whole-sale checks: %s" % sale.check_whole_sale())
rows = re.findall(r"^\| (\d+) \| (pre-queue \(n = (\d+)\)|epoch (\d+) \(n = (\d+)\)) \| (\d+) \| (\d+) \| (\d+) \| "
                  r"places (\d+)–(\d+) at (\S+) \|$", ex, re.M)
check(len(rows) == 9, "worked example has 9 rows (found %d)" % len(rows))
for k, _, pn, e, en, idx, perm, place, a0, a1, at in rows:
    k, place = int(k), int(place)
    p, how = sale.place_of(k)
    check(p == place, "example key %d: place %s want %d" % (k, p, place))
    if pn:
        check(how == ("prequeue", int(pn)) and int(idx) == k and V.P(sale.seed, int(pn), k) == int(perm),
              "example key %d: pre-queue draw" % k)
    else:
        st = how[2] if how[0] == "epoch" else -1
        check(how[0] == "epoch" and how[1] == int(e) and how[3] == int(en) and k - st == int(idx)
              and V.P(V.epoch_seed(sale.seed, int(e)), int(en), int(idx)) == int(perm),
              "example key %d: epoch draw" % k)
    adm = sale.admission_of(p)
    check(adm is not None and (adm["start"], adm["start"] + adm["count"] - 1, adm["at"]) == (int(a0), int(a1), at),
          "example key %d: admission %s" % (k, adm))
# the hand check of order key 6 in the prose
check(sale.place_of(6)[0] == 8 and sale.admission_of(8)["at"] == "2026-06-01T10:01:35Z", "hand check of key 6")

# the documented verify-draw output for order key 3
want = re.search(r"<!-- verify-draw:example -->\n```text\n(.*?)\n```", DOC, re.S).group(1)
with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as fh:
    json.dump(report, fh)
out = io.StringIO()
with contextlib.redirect_stdout(out):
    rc = V.main(["--report", fh.name, "--draw-index", "3"])
os.unlink(fh.name)
check(rc == 0 and out.getvalue().rstrip("\n") == want, "verify-draw example text:\n%s\nvs\n%s" % (out.getvalue(), want))

print("%d checks (%d places from the vectors), %d failed" % (checks, n_places, fails))
sys.exit(1 if fails else 0)
