import sys, numpy as np
sys.argv = ["x"]
from common import *
H = ["h1","h2","h3","h4","h5","h6"]
MS = [(a,b) for a in range(6) for b in range(a,6)]
COMPS = ["spout_0","spout_1","center","bolt_output_0","bolt_output_1"]
s = base_sample(); shape = Shape(s.problem.topology)
reps = np.load("/tmp/starlaoff/reps_all.npy")
A = np.array(MS)
cnt = np.zeros((len(reps),6), int); cnt[:,0] += 1
for k in range(5):
    for j in range(2):
        np.add.at(cnt, (np.arange(len(reps)), A[reps[:,k], j]), 1)
sel = reps[cnt.max(1) == 4]
best, arg = 0, None
for row in sel:
    n = {"__acker#0": "h1"}
    for k, c in enumerate(COMPS):
        a, b = MS[row[k]]; n[f"{c}#0"], n[f"{c}#1"] = H[a], H[b]
    r = throughput(s.problem, Placement(s.problem.topology.id, n), s.inputs, shape)
    if r.rate > best: best, arg = r.rate, (n, r.bottleneck)
print(len(sel), "reps with max 4 executors on a host; best", best, best/1449.4080312461858, arg)
