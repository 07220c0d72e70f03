"""Step 2: score every orbit representative (enumerate.py) with the model, as the benchmark's
model check builds the problem (cluster_calibration.sample_of); also checks the symmetry
assumptions on random placements."""
import json, random, time, numpy as np
from collections import Counter, defaultdict
from common import *
from scheduler_py.model.cost import violations

H = ["h1","h2","h3","h4","h5","h6"]
MS = [(a,b) for a in range(6) for b in range(a,6)]
COMPS = ["spout_0","spout_1","center","bolt_output_0","bolt_output_1"]
s = base_sample()
problem, inputs = s.problem, s.inputs
shape = Shape(problem.topology)
tid = problem.topology.id

def rate(node_of):
    return throughput(problem, Placement(tid, node_of), inputs, shape)

def node_of_of(row):
    n = {"__acker#0": "h1"}
    for k, c in enumerate(COMPS):
        a, b = MS[row[k]]
        n[f"{c}#0"], n[f"{c}#1"] = H[a], H[b]
    return n

# symmetry check
rng = random.Random(1)
execs = [e.id for e in problem.topology.executors]
worst = 0.0
for _ in range(300):
    n = {e: rng.choice(H) for e in execs}
    r0 = rate(n).rate
    r1 = rack = [["h1","h2","h3"],["h4","h5","h6"]]
    for rk in rack: rng.shuffle(rk)
    if rng.random() < .5: rack.reverse()
    hp = dict(zip(H, rack[0] + rack[1]))
    cs = {"spout_0":"spout_1","spout_1":"spout_0"} if rng.random()<.5 else {}
    if rng.random()<.5: cs |= {"bolt_output_0":"bolt_output_1","bolt_output_1":"bolt_output_0"}
    m = {}
    for e, h in n.items():
        c, _, i = e.partition("#")
        c2 = cs.get(c, c)
        i2 = str(1-int(i)) if (c != "__acker" and rng.random()<.5 and False) else i
        m[f"{c2}#{i2}"] = hp[h]
    # also swap executor indices of a random component
    c = rng.choice(COMPS); m[f"{c}#0"], m[f"{c}#1"] = m[f"{c}#1"], m[f"{c}#0"]
    worst = max(worst, abs(rate(m).rate / r0 - 1))
print("symmetry check, 300 random placements: largest relative rate change", worst)

ras = [r for r in load()[1] if r["scheduler"] == "ras-default"][0]
ras_rate = throughput(problem, sample_of(ras, load()[0]["emulated_hosts"]).placement, inputs).rate
print("RAS predicted", ras_rate)

out = {}
for name in ("cap", "all"):
    reps = np.load(f"/tmp/starlaoff/reps_{name}.npy")
    t0 = time.perf_counter()
    rates = np.empty(len(reps)); hosts = np.empty(len(reps), int)
    bott = []
    for i, row in enumerate(reps):
        n = node_of_of(row)
        res = rate(n)
        rates[i] = res.rate; hosts[i] = len(set(n.values())); bott.append(res.bottleneck)
    dt = time.perf_counter() - t0
    best = rates.max()
    top = np.where(rates >= best * (1 - 1e-9))[0]
    print(f"\n[{name}] {len(reps)} representatives scored in {dt:.0f} s; best {best:.3f}/s = {best/ras_rate:.4f}x RAS; "
          f"{len(top)} tied best; min hosts among them {hosts[top].min()}; host counts {dict(Counter(hosts[top].tolist()))}")
    print(f"   placements >= 1.10x RAS: {(rates >= 1.10*ras_rate).sum()}; >= RAS: {(rates >= ras_rate*(1-1e-9)).sum()}")
    # best per number of hosts
    for k in sorted(set(hosts.tolist())):
        sel = hosts == k
        print(f"   {k} hosts: best {rates[sel].max():9.3f}/s ({rates[sel].max()/ras_rate:.4f}x)")
    shown = sorted(top, key=lambda i: hosts[i])[:3]
    for i in shown:
        n = node_of_of(reps[i])
        per = defaultdict(list)
        for e, h in sorted(n.items()): per[h].append(e)
        print("   best:", dict(sorted(per.items())), "bottleneck", bott[i], "violations", violations(problem, Placement(tid, n)))
    # distinct rate levels near top
    levels = sorted(set(np.round(rates, 3)), reverse=True)[:6]
    print("   top rate levels:", levels)
    i0 = sorted(top, key=lambda i: hosts[i])[0]
    out[name] = {"best": best, "ratio": best / ras_rate, "n_reps": len(reps), "tied": len(top),
                 "min_hosts": int(hosts[top].min()), "example": node_of_of(reps[i0])}
out["ras"] = ras_rate
json.dump(out, open("/tmp/starlaoff/search_result.json", "w"), indent=1)
