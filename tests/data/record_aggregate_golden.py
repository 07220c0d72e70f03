"""How ``aggregate-golden-*.json.gz`` were recorded (run from the repository root, once).

The documents were recorded with the aggregation as it was before its rewrite for cost
(commit "monitoring: synthetic window records; golden input and documents recorded ...");
running this again records what the current code computes, which the golden test then
trivially matches, so do it only when the documents are meant to change.
"""

import base64
import gzip
import json
import sys

sys.path.insert(0, "tests")
from test_monitoring_aggregate import NOW, WINDOW, scenarios

from scheduler_py.monitoring.aggregate import aggregate_rows
from scheduler_py.monitoring.documents import build_documents, parse_windows
from scheduler_py.monitoring.records import encode, flatten, record_document
from scheduler_py.monitoring.spark import spark_session
from scheduler_py.monitoring.synthetic import Shape, records
from scheduler_py.monitoring.zk import RawWindow


def raw(record, document, mtime_ms):
    name = f"w-{record.window_end_ms}"
    return RawWindow(record.topology_id, record.worker, name, encode(document), mtime_ms)


windows = scenarios()
synthetic = records("t-synthetic", Shape(executors=40, workers=5), NOW, 12, seed=3)
windows += [raw(r, record_document(r), r.window_end_ms) for r in synthetic]
# a re-published window with a higher seq (the duplicate rule) in the synthetic topology
last = synthetic[-1]
windows.append(raw(last, {**record_document(last), "seq": 99, "worker_cpu_ms": 1.0}, NOW + 1))
parsed = parse_windows(windows)
tables = aggregate_rows(spark_session("local[2]"), flatten(parsed.records), NOW, WINDOW)
topologies = sorted({w.topology_id for w in windows})
documents = build_documents(tables, topologies, NOW, WINDOW, parsed.corrupt)
stored = [
    {
        "topology_id": w.topology_id,
        "worker": w.worker,
        "name": w.name,
        "mtime_ms": w.mtime_ms,
        "data": base64.b64encode(w.data).decode(),
    }
    for w in windows
]
with gzip.open("tests/data/aggregate-golden-input.json.gz", "wt") as handle:
    json.dump({"now_ms": NOW, "window_ms": WINDOW, "windows": stored}, handle, sort_keys=True)
with gzip.open("tests/data/aggregate-golden-documents.json.gz", "wt") as handle:
    json.dump(documents, handle, sort_keys=True, indent=1)
