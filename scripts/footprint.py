#!/usr/bin/env python3
"""Share of slow calls on the harness's own cycles (docs/method.md, "The harness's footprint").

  footprint.py RESULTS_DIR [...]           one line per tracer row of each results directory
  footprint.py --table TMP ROUNDS N [...]  the table of `make footprint` (scripts/footprint.sh)

Slow: above 1.5x the row's median. For each harness cycle, the largest share of the slow calls
on any three consecutive residues (evenly spread they would hold 3/L). The cycles:
  sample page    64 kept calls: 4096 B pages of 64 B samples, by the call's place in its sequence
  sentinel       K-1 tracer iterations between two sentinel windows (--sentinel-every K)
  sentinel line  2(K-1) iterations: two 32 B sentinel rows per cache line
Figures only, no threshold.
"""
import csv, json, os, statistics, sys
from collections import defaultdict


def pct(xs, q):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))]


def load(d):
    """{tracer: [[(iteration, latency_ns), ...] per sequence]}, and run.json."""
    run = json.load(open(os.path.join(d, "run.json")))
    seqs = defaultdict(list)
    for sub in sorted(os.listdir(d)):
        f = os.path.join(d, sub, "events.csv")
        if not os.path.isfile(f):
            continue
        for r in csv.DictReader(open(f)):
            key = (r["tracer"], r["threads"], r["thread"], r.get("repetition", "0"), r.get("counter_set", ""))
            seqs[key].append((int(r["iteration"]), float(r["latency_ns"])))
    rows = defaultdict(list)
    for key, calls in seqs.items():
        calls.sort()
        rows[key[0]].append(calls)
    return rows, run


def cycles(run):
    k = int(run.get("sentinel_every", 32) or 0)
    out = [("sample page", 64, "kept")]
    if k > 1:
        out += [("sentinel", k - 1, "iteration"), ("sentinel line", 2 * (k - 1), "iteration")]
    return out


def slow_keys(seqs, by):
    lat = [l for s in seqs for _, l in s]
    med = pct(lat, 0.5)
    return [idx if by == "kept" else it for s in seqs for idx, (it, l) in enumerate(s) if l > 1.5 * med]


def worst3(keys, L):
    n = defaultdict(int)
    for k in keys:
        n[k % L] += 1
    best = max(range(L), key=lambda r: n[r] + n[(r + 1) % L] + n[(r + 2) % L])
    return (n[best] + n[(best + 1) % L] + n[(best + 2) % L]) / max(1, len(keys)), best


def quantiles(seqs):
    lat = [l for s in seqs for _, l in s]
    return pct(lat, 0.5), pct(lat, 0.99), pct(lat, 0.999)


def lines(d):
    rows, run = load(d)
    for tracer, sq in rows.items():
        p50, p99, p999 = quantiles(sq)
        out = [f"{d}: {tracer:<14} n={sum(map(len, sq)):>8} p50 {p50:7.1f} p99 {p99:7.1f} p99.9 {p999:8.1f}"]
        out.append(f"slow {len(slow_keys(sq, 'kept')):>5}")
        for name, L, by in cycles(run):
            share, r = worst3(slow_keys(sq, by), L)
            out.append(f"{name} /{L}: {100 * share:5.1f}% at {r}-{(r + 2) % L} (even {300 / L:.1f}%)")
        print("  ".join(out))


def table(tmp, rounds, ns):
    print(f"footprint: {rounds} interleaved round(s); 'one' = run -n N, 'split' = run -n N/5 --repeats 5")
    print("(the same calls). Quantiles: medians over rounds, ns. Worst 3: the largest share of slow calls")
    print("(> 1.5x median, pooled over rounds) on three consecutive residues of each harness cycle (evenly")
    print("spread: 3/L); raw, so a tracer's own period (printf's flush) and a handful of calls move it: the")
    print("report's check below leaves the tracer's paths out and holds the rest against chance.")
    head = f"{'tracer':<14} {'N':>8} {'p50 one/split':>15} {'p99 one/split':>15} {'ratio':>6} {'p99.9 one/split':>17}  {'slow':>6}  worst 3 (one | split)"
    print(head)
    for n in ns:
        got = {s: [load(os.path.join(tmp, f"{s}-{n}-{r}")) for r in range(1, rounds + 1)] for s in ("one", "split")}
        for tracer in got["one"][0][0]:
            q = {s: [quantiles(rows[tracer]) for rows, _ in got[s]] for s in got}
            med = {s: [statistics.median(x[i] for x in q[s]) for i in range(3)] for s in q}
            shares = []
            for name, L, by in cycles(got["one"][0][1]):
                keys = {s: [k for rows, _ in got[s] for k in slow_keys(rows[tracer], by)] for s in ("one", "split")}
                w = {s: 100 * worst3(keys[s], L)[0] for s in keys}
                shares.append(f"{name}/{L} {w['one']:.1f}% of {len(keys['one'])} | {w['split']:.1f}% of {len(keys['split'])}")
            nslow = sum(len(slow_keys(rows[tracer], "kept")) for rows, _ in got["one"])
            print(f"{tracer:<14} {n:>8} {med['one'][0]:7.1f}/{med['split'][0]:<7.1f} {med['one'][1]:7.1f}/{med['split'][1]:<7.1f}"
                  f" {med['one'][1] / med['split'][1]:6.3f} {med['one'][2]:8.1f}/{med['split'][2]:<8.1f}  {nslow:>6}  " + "; ".join(shares))


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--table":
        table(sys.argv[2], int(sys.argv[3]), [int(x) for x in sys.argv[4:]])
    elif len(sys.argv) > 1:
        for d in sys.argv[1:]:
            lines(d)
    else:
        sys.exit("usage: footprint.py RESULTS_DIR [...] | --table TMP ROUNDS N [...]")
