package io.schedulerpy.storm.monitor;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Paths;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class WorkerIdentityTest {
    static final String TOPO = "wordcount-1-1795250648";

    @Test
    void supervisorIdFromTheWorkersCommandLine() {
        // BasicContainer: Worker <topology-id> <supervisor-id> <supervisor-port> <port> <worker-id>
        String cmd = "org.apache.storm.daemon.worker.Worker " + TOPO + " 8a1f0c2e-aaaa-bbbb 6628 6710 0d9e-worker";
        assertEquals("8a1f0c2e-aaaa-bbbb", WorkerIdentity.supervisorIdFromCommand(cmd, TOPO, 6710));
        // older workers: no supervisor port
        assertEquals("sup-1", WorkerIdentity.supervisorIdFromCommand(
            "org.apache.storm.daemon.worker.Worker " + TOPO + " sup-1 6710 wid", TOPO, 6710));
        // full argv (/proc/self/cmdline) with JVM options first
        assertEquals("sup-2", WorkerIdentity.supervisorIdFromArgs(List.of("java", "-Xmx384m", "-cp", "a:b",
            "org.apache.storm.daemon.worker.Worker", TOPO, "sup-2", "6628", "6700", "wid"), TOPO, 6700));
    }

    @Test
    void supervisorThriftPortFromTheWorkersCommandLine() {
        assertEquals(6628, WorkerIdentity.supervisorThriftPortFromArgs(List.of("java", "-cp", "a:b",
            "org.apache.storm.daemon.worker.Worker", TOPO, "sup-2", "6628", "6700", "wid"), TOPO, 6700));
        // older workers name no supervisor port; another worker's line, or garbage, gives none
        assertEquals(0, WorkerIdentity.supervisorThriftPortFromArgs(List.of(
            "org.apache.storm.daemon.worker.Worker", TOPO, "sup-1", "6700", "wid"), TOPO, 6700));
        assertEquals(0, WorkerIdentity.supervisorThriftPortFromArgs(List.of(
            "org.apache.storm.daemon.worker.Worker", TOPO, "sup-1", "6628", "6701", "wid"), TOPO, 6700));
        assertEquals(0, WorkerIdentity.supervisorThriftPortFromArgs(List.of(
            "org.apache.storm.daemon.worker.Worker", TOPO, "sup-1", "port", "6700", "wid"), TOPO, 6700));
        assertEquals(0, WorkerIdentity.supervisorThriftPortFromArgs(null, TOPO, 6700));
    }

    @Test
    void otherCommandLinesGiveNoSupervisorId() {
        assertNull(WorkerIdentity.supervisorIdFromCommand(null, TOPO, 1));
        assertNull(WorkerIdentity.supervisorIdFromCommand("org.example.LocalTopologyMain arg", TOPO, 1));
        assertNull(WorkerIdentity.supervisorIdFromCommand(
            "org.apache.storm.daemon.worker.Worker other-topo sup 6628 6710 wid", TOPO, 6710));
        assertNull(WorkerIdentity.supervisorIdFromCommand(
            "org.apache.storm.daemon.worker.Worker " + TOPO + " sup 6628 6711 wid", TOPO, 6710));
    }

    @Test
    void hostReplacesAMissingSupervisorId() {
        WorkerIdentity w = new WorkerIdentity(TOPO, null, "127.0.0.2", 6710, Paths.get("/tmp"));
        assertTrue(w.supervisorIdIsHost);
        assertEquals("127.0.0.2:6710", w.workerName());
        WorkerIdentity v = new WorkerIdentity(TOPO, "sup", "127.0.0.2", 6710, Paths.get("/tmp"));
        assertFalse(v.supervisorIdIsHost);
        assertEquals("sup:6710", v.workerName());
    }

    @Test
    void logDirectory() {
        String saved = System.getProperty("workers.artifacts");
        String savedLog = System.getProperty("storm.log.dir");
        try {
            System.clearProperty("workers.artifacts");
            System.clearProperty("storm.log.dir");
            assertEquals(Paths.get("/var/log/storm/workers-artifacts", TOPO, "6710"),
                WorkerIdentity.artifactsDir(Map.of("storm.log.dir", "/var/log/storm"), TOPO, 6710));
            System.setProperty("storm.log.dir", "/logs");
            assertEquals(Paths.get("/logs/workers-artifacts", TOPO, "6710"),
                WorkerIdentity.artifactsDir(Map.of("storm.log.dir", "/var/log/storm"), TOPO, 6710));
            System.setProperty("workers.artifacts", "/elsewhere/artifacts");
            assertEquals(Paths.get("/elsewhere/artifacts", TOPO, "6710"), WorkerIdentity.artifactsDir(Map.of(), TOPO, 6710));
        } finally {
            restore("workers.artifacts", saved);
            restore("storm.log.dir", savedLog);
        }
    }

    private static void restore(String key, String value) {
        if (value == null) {
            System.clearProperty(key);
        } else {
            System.setProperty(key, value);
        }
    }
}
