"""Shared: the Star LA-off runs of c2-laoff-fixed.json as the benchmark's model check sees them."""
import json, sys
sys.path.insert(0, "/work/main")
from scheduler_py.bench.cluster_calibration import sample_of, predicted_run
from scheduler_py.model.throughput import throughput, Shape
from scheduler_py.model.types import Placement

DOC = "/work/main/docs/results/emulated-network/throughput-default/c2-laoff-fixed.json"

def load():
    d = json.load(open(DOC))
    runs = [r for r in d["runs"] if r.get("topology") == "star"]
    return d, runs

def base_sample():
    d, runs = load()
    return sample_of(runs[0], d["emulated_hosts"])
