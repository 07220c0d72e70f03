package io.schedulerpy.storm.monitor;

import java.util.List;

/**
 * The live counters document of {@code docs/monitoring-format.md} §5 (version 1): one worker's
 * cumulative per-task counters at {@code ts_ms}, the data of its ephemeral znode
 * {@code <root>/live/<topology-id>/<supervisor-id>:<port>} (plain UTF-8 JSON, not gzipped).
 */
record LiveRecord(String topologyId, String supervisorId, String host, int port, long tsMs, long startedMs, long seq,
                  List<LiveCounters.Snapshot> tasks, int supervisorThriftPort) {
    static final int VERSION = 1;

    /** A record without the supervisor's Thrift port (unknown: the field is left out). */
    LiveRecord(String topologyId, String supervisorId, String host, int port, long tsMs, long startedMs, long seq,
               List<LiveCounters.Snapshot> tasks) {
        this(topologyId, supervisorId, host, port, tsMs, startedMs, seq, tasks, 0);
    }

    /** {@code <root>/live/<topology-id>/<supervisor-id>:<port>}. */
    static String path(String root, String topologyId, String workerName) {
        return root + "/live/" + topologyId + "/" + workerName;
    }

    String toJson() {
        StringBuilder b = new StringBuilder(256 + 160 * tasks.size());
        b.append("{\"v\": ").append(VERSION);
        b.append(", \"topology_id\": ");
        WindowRecord.string(b, topologyId);
        b.append(", \"supervisor_id\": ");
        WindowRecord.string(b, supervisorId);
        b.append(", \"host\": ");
        WindowRecord.string(b, host);
        b.append(", \"port\": ").append(port);
        b.append(", \"ts_ms\": ").append(tsMs);
        b.append(", \"started_ms\": ").append(startedMs);
        b.append(", \"seq\": ").append(seq);
        if (supervisorThriftPort > 0) {
            b.append(", \"supervisor_thrift_port\": ").append(supervisorThriftPort);
        }
        b.append(", \"tasks\": [");
        for (int i = 0; i < tasks.size(); i++) {
            LiveCounters.Snapshot t = tasks.get(i);
            b.append(i == 0 ? "" : ", ");
            b.append("{\"task\": ").append(t.task());
            b.append(", \"component\": ");
            WindowRecord.string(b, t.component());
            b.append(", \"spout\": ").append(t.spout());
            b.append(", \"emitted\": ").append(t.emitted());
            b.append(", \"executed\": ").append(t.executed());
            b.append(", \"acked\": ").append(t.acked());
            b.append(", \"failed\": ").append(t.failed());
            b.append(", \"ack_init\": ").append(t.ackInit());
            b.append(", \"pending\": ").append(t.pending());
            b.append('}');
        }
        b.append("]}");
        return b.toString();
    }
}
