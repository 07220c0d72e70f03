"""Orbit representatives of every Star placement on h1..h6 (one worker per host), up to the
model's symmetries: hosts within a rack, the two racks, the two executors of a component,
spout_0<->spout_1, bolt_output_0<->bolt_output_1. Acker fixed on h1 (hosts are transitive).
Writes reps_cap.npy (<=3 executors per host: declared CPU 10/executor on 30/host) and
reps_all.npy (no CPU cap)."""
import itertools, numpy as np
H = ["h1","h2","h3","h4","h5","h6"]
MS = [(a,b) for a in range(6) for b in range(a,6)]  # 21 multisets
IDX = {m:i for i,m in enumerate(MS)}
COMPS = ["spout_0","spout_1","center","bolt_output_0","bolt_output_1"]
# host perms fixing h1 (idx0): S2 on {1,2} x S3 on {3,4,5}
perms = []
for p in itertools.permutations([1,2]):
    for q in itertools.permutations([3,4,5]):
        perms.append([0,*p,*q])
ms_map = []
for p in perms:
    ms_map.append(np.array([IDX[tuple(sorted((p[a],p[b])))] for a,b in MS]))
comp_swaps = [[0,1,2,3,4],[1,0,2,3,4],[0,1,2,4,3],[1,0,2,4,3]]
grid = np.array(np.meshgrid(*[np.arange(21)]*5, indexing="ij")).reshape(5,-1).T  # (4084101,5)
# per-host counts
counts = np.zeros((grid.shape[0],6), dtype=np.int8)
counts[:,0] += 1  # acker
A = np.array(MS)
for k in range(5):
    for j in range(2):
        np.add.at(counts, (np.arange(grid.shape[0]), A[grid[:,k],j]), 1)
W = 21**np.arange(5)
code = grid @ W
def canonical(g):
    c = g @ W
    best = c.copy()
    for m in ms_map:
        mg = m[g]
        for s in comp_swaps:
            best = np.minimum(best, mg[:, s] @ W)
    return c == best
for name, mask in (("cap", counts.max(1) <= 3), ("all", np.ones(len(grid), bool))):
    g = grid[mask]
    keep = canonical(g)
    reps = g[keep]
    np.save(f"/tmp/starlaoff/reps_{name}.npy", reps)
    print(name, "assignments (acker on h1):", len(g), "orbit representatives:", len(reps))
