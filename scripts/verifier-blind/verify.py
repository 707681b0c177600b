#!/usr/bin/env python3
"""Independent verifier of a Foyer waiting room's fair draw (feistel-hmac-sha256-v1).

Written from docs/PROTOCOL.md alone, with the Python standard library only
(hashlib and hmac supply SHA-256 and RFC 2104 HMAC; no other cipher is needed).

Usage:
  verify.py --report FILE|URL [--draw FILE|URL] --draw-index K [--draw-index K ...]
  verify.py --draw FILE|URL --draw-index K          (no admissions: place only)
  verify.py --report FILE|URL --all                 (every order key 0..issued-1)
  add --json for one JSON object per key instead of text.

Exit status: 0 when every key was verified, 1 when a key could not be (seed refused,
no draw, key not placed), 2 for a usage or input error.
"""

import argparse
import hashlib
import hmac
import json
import re
import sys
import urllib.request

ALGORITHM = "feistel-hmac-sha256-v1"
DRAW_TAG = b"foyer-draw-v1"      # 13 bytes
EPOCH_TAG = b"foyer-epoch-v1"    # 14 bytes
U64 = (1 << 64) - 1


class VerifyError(Exception):
    pass


def instant_ns(ts):
    """RFC 3339 with an offset and up to nanosecond fractions, as integer nanoseconds since the epoch."""
    import calendar
    m = re.fullmatch(r"(\d{4})-(\d\d)-(\d\d)[Tt](\d\d):(\d\d):(\d\d)(?:\.(\d{1,9}))?([Zz]|[+-]\d\d:\d\d)", ts or "")
    if not m:
        raise VerifyError("not an RFC 3339 time: %r" % ts)
    y, mo, d, h, mi, s = (int(x) for x in m.groups()[:6])
    secs = calendar.timegm((y, mo, d, h, mi, s))
    off = m.group(8)
    if off not in ("Z", "z"):
        sign = 1 if off[0] == "+" else -1
        secs -= sign * (int(off[1:3]) * 3600 + int(off[4:6]) * 60)
    return secs * 10**9 + int((m.group(7) or "0").ljust(9, "0"))


# ---------------------------------------------------------------- primitives

def uint64be(v):
    if not 0 <= v <= U64:
        raise VerifyError("integer out of uint64 range: %d" % v)
    return v.to_bytes(8, "big")


def check_seed(seed_hex, commitment_hex):
    """Return the 32 raw seed bytes, or raise if the seed is malformed or not committed."""
    if not isinstance(seed_hex, str) or not re.fullmatch(r"[0-9a-f]{64}", seed_hex):
        raise VerifyError("the seed is not 64 lowercase hex digits (32 bytes)")
    if not isinstance(commitment_hex, str) or not re.fullmatch(r"[0-9a-f]{64}", commitment_hex):
        raise VerifyError("the commitment is not 64 lowercase hex digits")
    seed = bytes.fromhex(seed_hex)
    if hashlib.sha256(seed).hexdigest() != commitment_hex:
        raise VerifyError("the seed does not match the commitment: SHA-256(seed) = %s, commitment %s"
                          % (hashlib.sha256(seed).hexdigest(), commitment_hex))
    return seed


def epoch_seed(seed, e):
    if e < 1:
        raise VerifyError("epoch numbers start at 1, got %d" % e)
    return hmac.new(seed, EPOCH_TAG + uint64be(e), hashlib.sha256).digest()


def _round_f(key, n, r, right):
    msg = DRAW_TAG + uint64be(n) + bytes([r]) + uint64be(right)   # 30 bytes
    return int.from_bytes(hmac.new(key, msg, hashlib.sha256).digest()[:8], "big"), msg


def _encrypt(key, n, h, mask, x, trace=None):
    left, right = x >> h, x & mask
    for r in range(8):
        f, msg = _round_f(key, n, r, right)
        left, right = right, left ^ (f & mask)
        if trace is not None:
            trace.append((r, msg.hex(), "%016x" % f, left, right))
    return (left << h) | right


def half_bits(n):
    return max(1, ((n - 1).bit_length() + 1) // 2)


def P(key, n, i, trace=None):
    """The keyed permutation of [0, n); indices outside it are returned unchanged."""
    if n <= 1 or i >= n:
        return i
    h = half_bits(n)
    mask = (1 << h) - 1
    passes = []
    t = [] if trace is not None else None
    x = _encrypt(key, n, h, mask, i, t)
    passes.append((i, t))
    while x >= n:
        t = [] if trace is not None else None
        prev = x
        x = _encrypt(key, n, h, mask, x, t)
        passes.append((prev, t))
    if trace is not None:
        trace.extend(passes)
    return x


# ---------------------------------------------------------------- documents

def load(src):
    if src.startswith("http://") or src.startswith("https://"):
        req = urllib.request.Request(src, headers={"Accept": "application/json"})
        with urllib.request.urlopen(req, timeout=30) as resp:
            data = resp.read((64 << 20) + 1)
        if len(data) > 64 << 20:
            raise VerifyError("%s: larger than 64 MiB" % src)
    else:
        with open(src, "rb") as fh:
            data = fh.read()
    try:
        return json.loads(data)
    except ValueError as exc:
        raise VerifyError("%s: not JSON: %s" % (src, exc))


def _int(obj, name, where):
    v = obj.get(name)
    if isinstance(v, bool) or not isinstance(v, int) or v < 0 or v > U64:
        raise VerifyError("%s: field %r is not a non-negative integer" % (where, name))
    return v


def normalise_epochs(doc, where):
    """Epoch entries from a report (kind "draw") or the draw endpoint (with aliases)."""
    out = []
    for ent in doc.get("epochs") or []:
        if "kind" in ent and ent["kind"] != "draw":
            raise VerifyError("%s: an epochs entry has kind %r" % (where, ent["kind"]))
        e = ent.get("epoch", ent.get("number"))
        c = ent.get("count", ent.get("size"))
        tmp = {"epoch": e, "count": c, "start": ent.get("start")}
        out.append({"epoch": _int(tmp, "epoch", where), "start": _int(tmp, "start", where),
                    "count": _int(tmp, "count", where), "at": ent.get("at")})
    return out


class Sale:
    """What the verifier knows: from a report, a draw endpoint answer, or both."""

    def __init__(self, report=None, draw=None):
        if report is None and draw is None:
            raise VerifyError("give a report, a draw endpoint answer, or both")
        self.report, self.draw = report, draw
        src = report if report is not None else draw
        self.room = src.get("room")
        if draw is not None and draw.get("enabled") is False:
            raise VerifyError("room %s: the room places nobody by a draw (draw: enabled false)" % self.room)
        for doc in (report, draw):
            if doc is not None and doc.get("algorithm") not in (None, ALGORITHM):
                raise VerifyError("room %s uses algorithm %r, not %s" % (self.room, doc.get("algorithm"), ALGORITHM))
        self.commitment = src.get("commitment")
        self.seed_hex = src.get("seed")
        if report is not None and draw is not None:
            for f in ("room", "commitment", "seed"):
                if f in draw and f in report and draw[f] != report[f]:
                    raise VerifyError("the draw endpoint and the report disagree on %s" % f)
            if self.seed_hex is None:
                self.seed_hex = draw.get("seed")
        if self.commitment is None and self.seed_hex is None:
            raise VerifyError("room %s made no draw: no commitment and no seed" % self.room)
        if self.seed_hex is None:
            raise VerifyError("room %s: the seed is not revealed yet (commitment %s)" % (self.room, self.commitment))
        self.seed = check_seed(self.seed_hex, self.commitment)
        if "draw_size" in src:
            self.draw_size = _int(src, "draw_size", "draw_size")
        elif "size" in src:
            self.draw_size = _int(src, "size", "size")
        else:
            self.draw_size = None
        if report is not None and draw is not None and self.draw_size is not None:
            d = draw.get("draw_size", draw.get("size"))
            if d is not None and d != self.draw_size:
                raise VerifyError("the draw endpoint and the report disagree on draw_size")
        self.epochs = normalise_epochs(src, "epochs")
        if report is not None and draw is not None:
            rep = {e["epoch"]: e for e in self.epochs}
            for e in normalise_epochs(draw, "draw.epochs"):
                r = rep.get(e["epoch"])
                if r is not None and (r["start"], r["count"]) != (e["start"], e["count"]):
                    raise VerifyError("the draw endpoint and the report disagree on epoch %d" % e["epoch"])
        self.queueing_method = report.get("queueing_method") if report else None
        self.counts = report.get("counts") if report else None
        self.complete = report.get("complete") if report else None
        self.admissions = []
        if report is not None:
            for ent in report.get("admissions") or []:
                if ent.get("kind") != "admit":
                    raise VerifyError("an admissions entry has kind %r" % ent.get("kind"))
                self.admissions.append({"start": _int(ent, "start", "admissions"),
                                        "count": _int(ent, "count", "admissions"), "at": ent.get("at")})
        if self.draw_size is None and not self.epochs and self.report is not None:
            raise VerifyError("room %s made no draw: every place is the order key" % self.room)

    def place_of(self, k):
        """(place or None, how): how is ("prequeue", n) / ("epoch", e, start, count) / ("fcfs",)."""
        if self.draw_size is not None and k < self.draw_size:
            return P(self.seed, self.draw_size, k), ("prequeue", self.draw_size)
        for ent in self.epochs:
            if ent["start"] <= k < ent["start"] + ent["count"]:
                key = epoch_seed(self.seed, ent["epoch"])
                return ent["start"] + P(key, ent["count"], k - ent["start"]), \
                    ("epoch", ent["epoch"], ent["start"], ent["count"])
        if self.report is None:
            # The draw endpoint lists only the latest 64 epochs (observed: epochs 8-71 of 71), and has
            # neither queueing_method nor serving: a key no listed draw covers cannot be decided from it.
            first = self.epochs[0] if self.epochs else None
            if first is not None and first["epoch"] > 1 and k < first["start"]:
                raise VerifyError("draw_index %d lies before the oldest epoch the draw endpoint still lists "
                                  "(epoch %d, from order key %d): use the fairness report" % (k, first["epoch"], first["start"]))
            return None, ("unknown",)
        if self.counts is not None and self.queueing_method == "random" and k >= self.counts.get("serving", 0):
            return None, ("awaiting",)
        return k, ("fcfs",)

    def admission_of(self, p):
        hits = [a for a in self.admissions if a["start"] <= p < a["start"] + a["count"]]
        if len(hits) > 1:
            raise VerifyError("place %d lies in %d admissions: they overlap" % (p, len(hits)))
        return hits[0] if hits else None

    def check_whole_sale(self):
        """The report-wide checks of 'Checking a whole sale'; returns a list of problems."""
        problems = []
        prev_end = self.draw_size or 0
        for ent in self.epochs:
            if ent["start"] < prev_end:
                problems.append("epoch %d starts at %d, before the end %d of the previous draw"
                                % (ent["epoch"], ent["start"], prev_end))
            prev_end = ent["start"] + ent["count"]
            if ent.get("at") is not None:
                firsts = [a for a in self.admissions
                          if a["start"] < ent["start"] + ent["count"] and ent["start"] < a["start"] + a["count"]]
                if firsts and instant_ns(firsts[0]["at"]) < instant_ns(ent["at"]):
                    problems.append("epoch %d was made at %s, after the admission at %s that reached its places"
                                    % (ent["epoch"], ent["at"], firsts[0]["at"]))
        if self.report is not None and self.complete:
            last = None
            for a in self.admissions:
                t = instant_ns(a["at"])
                if last is not None and t < last:
                    problems.append("admission at %s goes back in time" % a["at"])
                last = t
            nxt = 0
            for a in self.admissions:
                if a["start"] != nxt:
                    problems.append("admission at %s starts at %d, expected %d" % (a["at"], a["start"], nxt))
                nxt = a["start"] + a["count"]
            c = self.counts or {}
            if nxt != c.get("serving"):
                problems.append("admissions end at %d, serving is %s" % (nxt, c.get("serving")))
            if c.get("serving") != c.get("admitted", 0) + c.get("skipped", 0):
                problems.append("serving != admitted + skipped")
            if c.get("serving", 0) > c.get("issued", 0):
                problems.append("serving > issued")
            if c.get("idled_out") == 0 and c.get("admitted") != (
                    c.get("claimed", 0) - c.get("returned", 0) + c.get("lapsed", 0) + c.get("unclaimed", 0)):
                problems.append("admitted != claimed - returned + lapsed + unclaimed")
        return problems


# ---------------------------------------------------------------- output

def describe(sale, k):
    place, how = sale.place_of(k)
    res = {"draw_index": k, "place": place, "placed_by": how[0]}
    if how[0] == "prequeue":
        res["draw"] = {"start": 0, "count": how[1]}
    elif how[0] == "epoch":
        res["draw"] = {"epoch": how[1], "start": how[2], "count": how[3]}
    adm = None
    if place is not None and sale.report is not None:
        adm = sale.admission_of(place)
        res["admission"] = adm
        res["reached"] = adm is not None
    lines = []
    if place is None and how[0] == "unknown":
        lines.append("draw_index %d (the fan's order key): no draw the draw endpoint lists covers it; "
                     "only the fairness report can say whether it was placed first come, first served" % k)
        return res, lines
    if place is None:
        lines.append("draw_index %d (the fan's order key) was still waiting for the next draw when the sale ended" % k)
        return res, lines
    # wording of `foyer verify-draw` (the document shows only the plural form)
    ahead = "nobody was" if place == 0 else "1 person was" if place == 1 else "%d people were" % place
    lines.append("draw_index %d (the fan's order key) has place %d (0-based: %s ahead in line)"
                 % (k, place, ahead))
    if how[0] == "prequeue":
        lines.append("placed by the pre-queue's draw of order keys 0-%d" % (how[1] - 1))
    elif how[0] == "epoch":
        # wording of `foyer verify-draw`, which the document does not show for an epoch
        lines.append("placed by rolling draw epoch %d of order keys %d-%d"
                     % (how[1], how[2], how[2] + how[3] - 1))
    else:
        lines.append("placed by no draw: first come, first served (the place is the order key)")
    if sale.report is None:
        lines.append("(no report: the admission that reached the place is not known)")
    elif adm is not None:
        lines.append("let in at %s, with places %d-%d (the line reached them then; a place nobody had been "
                     "seen at was passed over)" % (adm["at"], adm["start"], adm["start"] + adm["count"] - 1))
    elif place >= (sale.counts or {}).get("serving", 0):
        lines.append("the line never reached that place: the sale ended first")
    else:
        lines.append("no admission in the report covers that place, although the line reached it "
                     "(the report is incomplete)")
    if sale.report is not None and sale.complete is False:
        lines.append("note: the report's history is incomplete (the room's store lost part of it)")
    return res, lines


def main(argv=None):
    ap = argparse.ArgumentParser(description="Verify a place in a Foyer fair draw (feistel-hmac-sha256-v1).")
    ap.add_argument("--report", help="fairness report JSON: file or http(s) URL")
    ap.add_argument("--draw", help="draw endpoint JSON: file or http(s) URL")
    ap.add_argument("--draw-index", type=int, action="append", default=[], help="the fan's order key")
    ap.add_argument("--all", action="store_true", help="every order key 0..counts.issued-1")
    ap.add_argument("--json", action="store_true", help="one JSON object per key")
    ap.add_argument("--check-sale", action="store_true", help="also run the report-wide checks")
    a = ap.parse_args(argv)
    try:
        report = load(a.report) if a.report else None
        draw = load(a.draw) if a.draw else None
        sale = Sale(report, draw)
    except (VerifyError, OSError) as exc:
        print("error: %s" % exc, file=sys.stderr)
        return 1
    keys = list(a.draw_index)
    if a.all:
        if report is None:
            print("error: --all needs a report (counts.issued)", file=sys.stderr)
            return 2
        keys += range(report["counts"]["issued"])
    if not keys and not a.check_sale:
        print("error: give --draw-index K (or --all)", file=sys.stderr)
        return 2
    rc = 0
    if not a.json:
        print("room %s: the seed matches the commitment %s" % (sale.room, sale.commitment))
    if a.check_sale:
        for prob in sale.check_whole_sale():
            print("problem: " + prob)
            rc = 1
    for k in keys:
        if k < 0 or k > U64:
            print("error: draw index %d out of range" % k, file=sys.stderr)
            rc = 2
            continue
        try:
            res, lines = describe(sale, k)
        except VerifyError as exc:
            print("error: %s" % exc, file=sys.stderr)
            rc = max(rc, 1)
            continue
        if a.json:
            print(json.dumps(res, sort_keys=True))
        else:
            print("\n".join(lines))
        if res["place"] is None:
            rc = max(rc, 1)
    return rc


if __name__ == "__main__":
    sys.exit(main())
