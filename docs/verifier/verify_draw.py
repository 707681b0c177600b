#!/usr/bin/env python3
"""An independent verifier of a Foyer waiting room's fair draw (feistel-hmac-sha256-v1).

Written from docs/PROTOCOL.md alone, without reading Foyer's code, with the
Python 3 standard library only (hashlib and hmac give SHA-256 and RFC 2104
HMAC; nothing else is needed).

Usage:
  verify_draw.py --report FILE|URL --draw-index K
      what became of order key K, printed exactly as `foyer verify-draw` prints it
  verify_draw.py --report FILE|URL --json --draw-index K [--draw-index K ...] [--draw-index A-B]
      the same for many keys at once: one JSON object a line, {"draw_index", "output"}
      or {"draw_index", "error"}
  verify_draw.py --report FILE|URL --check-sale
      the report-wide checks of "Checking a whole sale"

--report takes the fairness report, or the draw endpoint's answer (which can
only place a key that one of the draws it lists covered). Errors go to stderr
as "Error: ..." with exit status 1; a usage error exits 2.
"""

import argparse
import calendar
import hashlib
import hmac
import json
import re
import sys
import time
import urllib.request

ALGORITHM = "feistel-hmac-sha256-v1"
DRAW_TAG = b"foyer-draw-v1"  # 13 bytes
EPOCH_TAG = b"foyer-epoch-v1"  # 14 bytes
U64 = (1 << 64) - 1
MAX_DOC = 64 << 20
LOWER_HEX_64 = re.compile(r"[0-9a-f]{64}")


class VerifyError(Exception):
    pass


# ------------------------------------------------------------ the permutation

def uint64be(v):
    if not 0 <= v <= U64:
        raise VerifyError("integer out of the uint64 range: %d" % v)
    return v.to_bytes(8, "big")


def epoch_seed(seed, e):
    return hmac.new(seed, EPOCH_TAG + uint64be(e), hashlib.sha256).digest()


def _encrypt(key, n, h, mask, x):
    left, right = x >> h, x & mask
    for r in range(8):
        msg = DRAW_TAG + uint64be(n) + bytes([r]) + uint64be(right)  # 30 bytes
        f = int.from_bytes(hmac.new(key, msg, hashlib.sha256).digest()[:8], "big")
        left, right = right, left ^ (f & mask)
    return (left << h) | right


def permute(key, n, i):
    """P(key, n, i): the keyed permutation of [0, n); an index outside it is returned as is."""
    if n <= 1 or i >= n:
        return i
    h = max(1, ((n - 1).bit_length() + 1) // 2)
    mask = (1 << h) - 1
    x = _encrypt(key, n, h, mask, i)
    while x >= n:  # cycle walking
        x = _encrypt(key, n, h, mask, x)
    return x


def check_seed(algorithm, seed_hex, commitment):
    """The 32 seed bytes, once the algorithm, both hex forms and the hash are checked."""
    if algorithm != ALGORITHM:
        raise VerifyError('the room names the algorithm "%s", not %s: this verifier knows no other'
                          % (algorithm or "", ALGORITHM))
    if not isinstance(commitment, str) or not LOWER_HEX_64.fullmatch(commitment):
        raise VerifyError("the commitment is not 64 lowercase hexadecimal digits")
    if not isinstance(seed_hex, str) or not LOWER_HEX_64.fullmatch(seed_hex):
        raise VerifyError("the seed is not 64 lowercase hexadecimal digits (32 bytes)")
    seed = bytes.fromhex(seed_hex)
    if hashlib.sha256(seed).hexdigest() != commitment:
        raise VerifyError("the seed does not match the commitment: SHA-256(seed) differs")
    return seed


# ------------------------------------------------------------ documents

def load(src):
    if src.startswith("http://") or src.startswith("https://"):
        req = urllib.request.Request(src, headers={"Accept": "application/json"})
        with urllib.request.urlopen(req, timeout=30) as resp:
            data = resp.read(MAX_DOC)
    else:
        with open(src, "rb") as fh:
            data = fh.read(MAX_DOC)
    try:
        doc = json.loads(data)
    except ValueError as exc:
        raise VerifyError("the report is not a fairness report's JSON: %s" % exc)
    if not isinstance(doc, dict):
        raise VerifyError("the report is not a fairness report's JSON: not an object")
    return doc


def uint(obj, name, default=None):
    v = obj.get(name, default)
    if isinstance(v, bool) or not isinstance(v, int) or not 0 <= v <= U64:
        raise VerifyError("the field %s is not an integer from 0 to 2^64-1" % name)
    return v


def instant_ns(ts):
    """An RFC 3339 time with an offset and up to nanosecond fractions, in nanoseconds since 1970."""
    m = re.fullmatch(r"(\d{4})-(\d\d)-(\d\d)[Tt](\d\d):(\d\d):(\d\d)(?:\.(\d{1,9}))?([Zz]|[+-]\d\d:\d\d)", ts or "")
    if not m:
        raise VerifyError("not an RFC 3339 time: %r" % ts)
    secs = calendar.timegm(tuple(int(x) for x in m.groups()[:6]))
    off = m.group(8)
    if off not in ("Z", "z"):
        sign = 1 if off[0] == "+" else -1
        secs -= sign * (int(off[1:3]) * 3600 + int(off[4:6]) * 60)
    return secs * 10**9 + int((m.group(7) or "0").ljust(9, "0"))


def utc_text(ts):
    """The same instant in UTC, with as many fraction digits as it needs (none for whole seconds)."""
    ns = instant_ns(ts)
    secs, frac = divmod(ns, 10**9)
    text = "%04d-%02d-%02dT%02d:%02d:%02d" % tuple(time.gmtime(secs)[:6])
    if frac:
        text += "." + ("%09d" % frac).rstrip("0")
    return text + "Z"


def draws_of(doc, report):
    """(draw_size or None, [(epoch, start, count, at)]) from a report, or from the draw endpoint,
    whose deprecated aliases (size; number and size of an epoch) are read when the names are absent."""
    size = doc.get("draw_size", None if report else doc.get("size"))
    size = None if size is None else uint({"draw_size": size}, "draw_size")
    epochs = []
    for ent in doc.get("epochs") or []:
        if report and ent.get("kind") != "draw":
            raise VerifyError("an entry of epochs has kind %r, not draw" % ent.get("kind"))
        e = {"epoch": ent.get("epoch", ent.get("number")), "count": ent.get("count", ent.get("size")),
             "start": ent.get("start")}
        epochs.append((uint(e, "epoch"), uint(e, "start"), uint(e, "count"), ent.get("at")))
    return size, epochs


def place_by_draw(seed, size, epochs, k):
    """(place, how) for a key a draw covered, or None."""
    if size is not None and k < size:
        return permute(seed, size, k), "placed by the pre-queue's draw of order keys 0-%d" % (size - 1)
    for e, start, count, _ in epochs:
        if start <= k < start + count:
            return (start + permute(epoch_seed(seed, e), count, k - start),
                    "placed by rolling draw epoch %d of order keys %d-%d" % (e, start, start + count - 1))
    return None


def place_by_phase(algorithm, draws, k):
    """(place, how, commitment) for a key a phase's published draw covered, or None; the
    phase's seed is checked against its own commitment first."""
    for pd in draws or []:
        if pd.get("first_key") is None or pd.get("draw_size") is None:
            continue  # not drawn yet: its range is not published
        first, n = uint(pd, "first_key"), uint(pd, "draw_size")
        if not first <= k < first + n:
            continue
        try:
            seed = check_seed(algorithm, pd.get("seed"), pd.get("commitment"))
        except VerifyError as exc:
            raise VerifyError("phase %s's draw: %s" % (pd.get("phase", ""), exc))
        how = ["placed by phase %s's draw of order keys %d-%d, at its start %s"
               % (pd.get("phase", ""), first, first + n - 1, utc_text(pd.get("start")))]
        committed, opened = pd.get("committed_at"), pd.get("prequeue_start")
        if committed is None or opened is None or instant_ns(committed) >= instant_ns(opened):
            how.append("warning: phase %s's report does not show its seed committed before its pre-queue "
                       "opened" % pd.get("phase", ""))
        return first + permute(seed, n, k - first), how, pd.get("commitment")
    return None


def ahead(place):
    if place == 0:
        return "nobody was ahead"
    if place == 1:
        return "1 person was ahead"
    return "%d people were ahead" % place


def header(doc, k, commitment):
    if not commitment:
        return "room %s: no draw covered draw_index %d (the room draws only in its phases)" % (doc.get("room", ""), k)
    return "room %s: the seed matches the commitment %s" % (doc.get("room", ""), commitment)


def place_lines(k, place, how):
    how = how if isinstance(how, list) else [how]
    return ["draw_index %d (the fan's order key) has place %d (0-based: %s in line)" % (k, place, ahead(place))] + how


def verify_report(rep, k):
    """The lines of verify-draw's answer for order key k, from a fairness report."""
    if not rep.get("seed") and not rep.get("commitment") and not rep.get("algorithm"):
        raise VerifyError("room %s made no draw: its fans were let in first come, first served, in the order "
                          "of their keys, so there is no place to recompute; the report's admissions say when "
                          "each key was let in" % rep.get("room", ""))
    seed = None
    if rep.get("seed") or rep.get("commitment") or not rep.get("phase_draws"):
        seed = check_seed(rep.get("algorithm"), rep.get("seed"), rep.get("commitment"))
    counts = rep.get("counts") or {}
    issued, serving = uint(counts, "issued", 0), uint(counts, "serving", 0)
    size, epochs = draws_of(rep, True)
    commitment = rep.get("commitment")
    found = place_by_phase(rep.get("algorithm"), rep.get("phase_draws"), k)
    if found is not None:
        found, commitment = found[:2], found[2]
    elif seed is not None:
        found = place_by_draw(seed, size, epochs, k)
    lines = [header(rep, k, commitment)]
    if found is None and k >= issued:
        if issued == 0:
            raise VerifyError("draw_index %d was never handed out: the room handed out no order key" % k)
        raise VerifyError("draw_index %d was never handed out: the room handed out the order keys 0 to %d"
                          % (k, issued - 1))
    if found is None and rep.get("queueing_method") == "random" and k >= serving:
        lines.append("draw_index %d (the fan's order key) has no place: it was waiting for the next rolling "
                     "draw when the sale ended, and the line never reached it" % k)
    else:
        if found is None:
            found = (k, "placed first come, first served: no draw covered order key %d, so the place is the "
                        "order key" % k)
        place, how = found
        lines += place_lines(k, place, how)
        adm = None
        for a in rep.get("admissions") or []:
            if uint(a, "start") <= place < a["start"] + uint(a, "count"):
                adm = a
                break
        if adm is not None:
            lines.append("let in at %s, with places %d-%d (the line reached them then; a place nobody had "
                         "been seen at was passed over)" % (utc_text(adm.get("at")), adm["start"],
                                                            adm["start"] + adm["count"] - 1))
        elif place < serving:
            lines.append("the line reached that place, but the report no longer has the admission that did")
        else:
            lines.append("the line never reached that place: the sale ended first")
    if rep.get("complete") is not True:
        lines.append("note: the report's history is incomplete (the room's store lost part of it)")
    return lines


def verify_draw_endpoint(doc, k):
    """The lines of verify-draw's answer for order key k, from the draw endpoint's answer."""
    room = doc.get("room", "")
    if doc.get("enabled") is not True:
        raise VerifyError("room %s made no draw (the draw endpoint says enabled false): its fans are let in "
                          "first come, first served, so there is no place to recompute" % room)
    try:
        phase = place_by_phase(doc.get("algorithm"), doc.get("phase_draws"), k)
    except VerifyError as exc:
        raise VerifyError("room %s: %s" % (room, exc))
    if phase is not None:
        return [header(doc, k, phase[2])] + place_lines(k, phase[0], phase[1]) + [
            "note: this is the draw endpoint's answer, not the fairness report: it lists no admissions, so whether "
            "and when the line reached that place is the report's to tell"]
    if not doc.get("seed"):
        raise VerifyError("room %s: the draw endpoint does not show the seed yet: it is revealed at the "
                          "pre-queue's draw, or once the fairness report is published" % room)
    try:
        seed = check_seed(doc.get("algorithm"), doc.get("seed"), doc.get("commitment"))
    except VerifyError as exc:
        raise VerifyError("room %s: %s" % (room, exc))
    size, epochs = draws_of(doc, False)
    found = place_by_draw(seed, size, epochs, k)
    if found is None:
        # Only the latest 64 epochs are listed, and neither first-come places nor the line:
        # an older epoch, a first-come place and a key still waiting all look the same here.
        raise VerifyError("room %s: no draw the draw endpoint lists covers that draw_index: it lists the "
                          "pre-queue's draw and only the latest 64 rolling draws, and says nothing of "
                          "first-come places or of the line; check it against the fairness report" % room)
    return [header(doc, k, doc.get("commitment"))] + place_lines(k, *found) + [
        "note: this is the draw endpoint's answer, not the fairness report: it lists no admissions, so whether "
        "and when the line reached that place is the report's to tell"]


def verify(doc, k):
    if "counts" in doc:
        return verify_report(doc, k)
    if "enabled" in doc:
        return verify_draw_endpoint(doc, k)
    raise VerifyError("the report is neither a fairness report (it has no counts) nor the draw endpoint's "
                      "answer (it has no enabled)")


# ------------------------------------------------------------ a whole sale

def check_sale(rep):
    """The problems the checks of "Checking a whole sale" find in a report (none: an empty list)."""
    problems = []
    seed = check_seed(rep.get("algorithm"), rep.get("seed"), rep.get("commitment")) if rep.get("seed") else None
    size, epochs = draws_of(rep, True)
    admissions = [(uint(a, "start"), uint(a, "count"), a.get("at")) for a in rep.get("admissions") or []]
    if seed is not None:
        for n, key in ([(size, seed)] if size else []) + [(c, epoch_seed(seed, e)) for e, _, c, _ in epochs]:
            if n <= 100000 and len({permute(key, n, i) for i in range(n)}) != n:
                problems.append("a draw of %d is not a permutation" % n)
    end = size or 0
    for e, start, count, at in epochs:
        if start < end:
            problems.append("epoch %d starts at %d, before the end %d of the previous draw" % (e, start, end))
        end = start + count
        first = [a for a in admissions if a[0] < start + count and start < a[0] + a[1]]
        if first and at and instant_ns(first[0][2]) < instant_ns(at):
            problems.append("epoch %d was made at %s, after the admission at %s that reached its places"
                            % (e, at, first[0][2]))
    problems += check_phase_draws(rep, size, epochs, admissions)
    if rep.get("complete") is True:
        c = rep.get("counts") or {}
        nxt, last = 0, None
        for start, count, at in admissions:
            if start != nxt:
                problems.append("the admission at %s starts at %d, not %d" % (at, start, nxt))
            t = instant_ns(at)
            if last is not None and t < last:
                problems.append("the admission at %s goes back in time" % at)
            nxt, last = start + count, t
        if nxt != c.get("serving"):
            problems.append("the admissions end at %d, serving is %s" % (nxt, c.get("serving")))
        if c.get("serving") != c.get("admitted", 0) + c.get("skipped", 0):
            problems.append("serving is not admitted + skipped")
        if c.get("serving", 0) > c.get("issued", 0):
            problems.append("serving is above issued")
        if c.get("idled_out") == 0 and c.get("admitted") != (
                c.get("claimed", 0) - c.get("returned", 0) + c.get("lapsed", 0) + c.get("unclaimed", 0)):
            problems.append("admitted is not claimed - returned + lapsed + unclaimed")
    return problems


def check_phase_draws(rep, size, epochs, admissions):
    """The problems check 6 of "Checking a whole sale" finds in the phases' own draws."""
    problems = []
    ranges = [(0, size, "the pre-queue's draw")] if size else []
    ranges += [(start, count, "rolling draw epoch %d" % e) for e, start, count, _ in epochs]
    issued = (rep.get("counts") or {}).get("issued")
    for pd in rep.get("phase_draws") or []:
        if pd.get("first_key") is None or pd.get("draw_size") is None:
            continue  # not drawn yet
        name = "phase %s's draw" % pd.get("phase", "")
        first, n = uint(pd, "first_key"), uint(pd, "draw_size")
        try:
            seed = check_seed(rep.get("algorithm"), pd.get("seed"), pd.get("commitment"))
        except VerifyError as exc:
            problems.append("%s: %s" % (name, exc))
            seed = None
        committed, opened = pd.get("committed_at"), pd.get("prequeue_start")
        if committed is None:
            problems.append("%s: the report does not say when its seed was committed" % name)
        elif opened is not None and instant_ns(committed) >= instant_ns(opened):
            problems.append("%s: its seed was committed at %s, not before its pre-queue opened at %s"
                            % (name, committed, opened))
        if seed is not None and n <= 100000 and len({permute(seed, n, i) for i in range(n)}) != n:
            problems.append("%s of %d is not a permutation" % (name, n))
        if isinstance(issued, int) and first + n > issued:
            problems.append("%s covers order keys up to %d, beyond the %d handed out"
                            % (name, first + n - 1, issued))
        for start, count, other in ranges:
            if first < start + count and start < first + n:
                problems.append("%s of order keys %d-%d overlaps %s" % (name, first, first + n - 1, other))
        ranges.append((first, n, name))
        begin = instant_ns(pd.get("start"))
        for start, count, at in admissions:
            if start < first + n and first < start + count and at and instant_ns(at) < begin:
                problems.append("the admission at %s reached places of %s before its start %s"
                                % (at, name, pd.get("start")))
    return problems


def key_range(text):
    lo, _, hi = text.partition("-")
    try:
        lo = int(lo)
        hi = int(hi) if hi else lo
    except ValueError:
        raise argparse.ArgumentTypeError("not a draw index nor a range A-B: %r" % text)
    if not 0 <= lo <= hi <= U64:
        raise argparse.ArgumentTypeError("not a draw index nor a range A-B from 0 to 2^64-1: %r" % text)
    return range(lo, hi + 1)


def main(argv=None):
    ap = argparse.ArgumentParser(description="Verify a place in a Foyer fair draw (%s)." % ALGORITHM)
    ap.add_argument("--report", required=True,
                    help="the fairness report, or the draw endpoint's answer: a file or an http(s) URL")
    ap.add_argument("--draw-index", type=key_range, action="append", default=[],
                    help="the fan's draw_index (their order key); with --json, a range A-B too")
    ap.add_argument("--json", action="store_true", help="one JSON object a line for each key")
    ap.add_argument("--check-sale", action="store_true", help="run the report-wide checks")
    a = ap.parse_args(argv)
    keys = [k for r in a.draw_index for k in r]
    if a.check_sale == bool(keys) or (len(keys) > 1 and not a.json):
        ap.error("give one --draw-index K, several with --json, or --check-sale")
    try:
        doc = load(a.report)
        if a.check_sale:
            problems = check_sale(doc)
            for p in problems:
                print("problem: " + p)
            if not problems:
                print("room %s: every check of the whole sale passed" % doc.get("room", ""))
            return 1 if problems else 0
        if not a.json:
            print("\n".join(verify(doc, keys[0])))
            return 0
    except (VerifyError, OSError) as exc:
        print("Error: %s" % exc, file=sys.stderr)
        return 1
    rc = 0
    for k in keys:
        try:
            res = {"draw_index": k, "output": "\n".join(verify(doc, k)) + "\n"}
        except VerifyError as exc:
            res, rc = {"draw_index": k, "error": str(exc)}, 1
        print(json.dumps(res, sort_keys=True))
    return rc


if __name__ == "__main__":
    sys.exit(main())
