"""Step 1: reproduce the recorded predicted rates of the Star LA-off runs."""
import time
from collections import Counter
from common import *

d, runs = load()
for r in runs:
    s = sample_of(r, d["emulated_hosts"])
    t0 = time.perf_counter()
    res = throughput(s.problem, s.placement, s.inputs)
    dt = time.perf_counter() - t0
    rec = r["throughput_model"]
    per_host = {}
    for e, n in sorted(s.placement.node_of.items()):
        per_host.setdefault(n, []).append(e)
    print(f"run {r['index']} {r['scheduler']:14s} measured {r['throughput']:7.1f} recorded {rec['predicted_throughput']:9.3f} ({rec['bottleneck']}) "
          f"reproduced {res.rate:9.3f} ({res.bottleneck}) same={abs(res.rate-rec['predicted_throughput'])<1e-6}  {dt*1e3:.1f} ms")
    print("    ", {h: sorted(v) for h, v in sorted(per_host.items())}, "workers", dict(Counter(s.placement.worker_of.values())))
s = base_sample()
print("inputs:", s.inputs)
print("nodes:", s.problem.nodes)
print("topology workers:", s.problem.topology.workers, [ (c.id, c.parallelism, c.cpu) for c in s.problem.topology.components])
