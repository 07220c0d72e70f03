"""Record the golden input and the OLD path's documents (run once, before the rewrite)."""
import base64, gzip, json, sys
sys.path.insert(0, "tests")
from test_monitoring_aggregate import scenarios, NOW, WINDOW
from scheduler_py.monitoring.aggregate import aggregate_rows, spark_session
from scheduler_py.monitoring.documents import parse_windows, build_documents
from scheduler_py.monitoring.records import flatten, encode, record_document
from scheduler_py.monitoring.synthetic import Shape, records
from scheduler_py.monitoring.zk import RawWindow

windows = scenarios()
synthetic = records("t-synthetic", Shape(executors=40, workers=5), NOW, 12, seed=3)
windows += [RawWindow(r.topology_id, r.worker, f"w-{r.window_end_ms}", encode(record_document(r)), r.window_end_ms) for r in synthetic]
# a re-published window with a higher seq (the duplicate rule) in the synthetic topology
dup = synthetic[-1]
doc = record_document(dup); doc["seq"] = 99; doc["worker_cpu_ms"] = 1.0
windows.append(RawWindow(dup.topology_id, dup.worker, f"w-{dup.window_end_ms}", encode(doc), dup.window_end_ms + 1))
spark = spark_session("local[2]")
parsed = parse_windows(windows)
tables = aggregate_rows(spark, flatten(parsed.records), NOW, WINDOW)
topologies = sorted({w.topology_id for w in windows})
documents = build_documents(tables, topologies, NOW, WINDOW, parsed.corrupt)
payload = {
    "now_ms": NOW, "window_ms": WINDOW,
    "windows": [dict(topology_id=w.topology_id, worker=w.worker, name=w.name, mtime_ms=w.mtime_ms, data=base64.b64encode(w.data).decode()) for w in windows],
}
with gzip.open("tests/data/aggregate-golden-input.json.gz", "wt") as f:
    json.dump(payload, f, sort_keys=True)
with gzip.open("tests/data/aggregate-golden-documents.json.gz", "wt") as f:
    json.dump(documents, f, sort_keys=True, indent=1)
print(len(windows), "windows;", {k: (len(v["executors"]), len(v["pairs"])) for k, v in documents.items()})
