"""Step 3: the registered `throughput` algorithm on the benchmark's model-check problem, with a
large budget; its plan scored with the benchmark's inputs (predicted_rates with the same
params, and throughput() with the sample's inputs)."""
import json, time
from collections import defaultdict
from dataclasses import replace
from common import *
from scheduler_py.algorithms import registry
from scheduler_py.algorithms.fastest import predicted_rates

s = base_sample()
problem, inputs = s.problem, s.inputs
base = {"loadaware": False, "rack_link": 0.5, "host_mbit": 100.0, "max_spout_pending": 1000,
        "seconds": 120.0}
cases = [("payload 8192 given", base | {"payload_bytes": 8192.0}, problem),
         ("payload unknown (shipped default)", base, problem),
         ("payload 8192, topology.workers=6", base | {"payload_bytes": 8192.0},
          replace(problem, topology=replace(problem.topology, workers=6)))]
for label, params, prob in cases:
    t0 = time.perf_counter()
    p = registry.run("throughput", prob, params)
    dt = time.perf_counter() - t0
    bench_rate = throughput(problem, Placement(problem.topology.id, dict(p.node_of)), inputs).rate
    pr = predicted_rates(prob, p.node_of, params | {"payload_bytes": 8192.0})
    per = defaultdict(list)
    for e, h in sorted(p.node_of.items()): per[h].append(e)
    r = p.report
    print(f"[{label}] {dt:.1f} s, evaluations {r.get('evaluations')}, chosen {r.get('chosen')!r}")
    print(f"   model (bench inputs) {bench_rate:.3f}/s; predicted_rates@8192 {pr[8192.0].rate:.3f}/s ({pr[8192.0].bottleneck}); report {r.get('predicted_throughput')} {r.get('predicted_by_payload','')}")
    print("   placement:", dict(sorted(per.items())))
    print("   candidates:", json.dumps(r.get("candidates"), default=str))
