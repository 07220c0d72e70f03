package io.schedulerpy.storm.monitor;

import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.apache.storm.task.WorkerTopologyContext;
import org.apache.storm.utils.Utils;

/**
 * Who this worker is: topology id, supervisor id, host, port, and where its monitor log goes.
 *
 * <p>The supervisor id is not in a task hook's {@code TopologyContext} (its
 * {@code getAssignmentId()} is null: {@code Task} builds the context with the constructor that
 * leaves it out). The worker JVM's command line has it: the supervisor starts
 * {@code org.apache.storm.daemon.worker.Worker <topology-id> <supervisor-id> [<supervisor-port>]
 * <port> <worker-id>} ({@code BasicContainer.mkLaunchCommand}), visible as the
 * {@code sun.java.command} property or in {@code /proc/self/cmdline}. If neither has it (local
 * mode, another launcher), the host is used in its place and {@link #supervisorIdIsHost} is set.
 * The {@code <supervisor-port>} argument is the supervisor's Thrift port (the worker heartbeats
 * to it, storm-client {@code Worker.main}); the live counters carry it so that the brain can
 * hand a supervisor its new assignments at once ({@code scheduler_py/nimbus/supervisor_sync.py}).
 */
final class WorkerIdentity {
    static final String WORKER_MAIN = "org.apache.storm.daemon.worker.Worker";

    final String topologyId;
    final String supervisorId;
    final boolean supervisorIdIsHost;
    final String host;
    final int port;
    final Path artifactsDir;
    /** The supervisor's Thrift port, 0 when the command line does not name it. */
    final int supervisorThriftPort;

    WorkerIdentity(String topologyId, String supervisorId, String host, int port, Path artifactsDir) {
        this(topologyId, supervisorId, host, port, artifactsDir, 0);
    }

    WorkerIdentity(String topologyId, String supervisorId, String host, int port, Path artifactsDir,
                   int supervisorThriftPort) {
        this.supervisorThriftPort = supervisorThriftPort;
        this.topologyId = topologyId;
        this.host = host;
        this.port = port;
        this.supervisorIdIsHost = supervisorId == null || supervisorId.isEmpty();
        this.supervisorId = supervisorIdIsHost ? host : supervisorId;
        this.artifactsDir = artifactsDir;
    }

    /** {@code <supervisor-id>:<port>}, the worker's znode name. */
    String workerName() {
        return supervisorId + ":" + port;
    }

    static WorkerIdentity resolve(Map<String, Object> conf, WorkerTopologyContext context) {
        return resolve(conf, context.getStormId(), context.getThisWorkerPort() == null ? -1 : context.getThisWorkerPort(),
            context.getAssignmentId());
    }

    /** Identity of the worker running {@code topologyId} on {@code port} ({@code assignmentId} may be null). */
    static WorkerIdentity resolve(Map<String, Object> conf, String topologyId, int port, String assignmentId) {
        String host = host(conf);
        String command = System.getProperty("sun.java.command");
        List<String> argv = command == null || command.isBlank() ? null : Arrays.asList(command.trim().split("\\s+"));
        if (supervisorArgs(argv, topologyId, port) == null) {
            argv = ProcStat.cmdline(ProcessHandle.current().pid());
        }
        String sup = assignmentId;
        if (sup == null || sup.isEmpty()) {
            sup = supervisorIdFromArgs(argv, topologyId, port);
        }
        return new WorkerIdentity(topologyId, sup, host, port, artifactsDir(conf, topologyId, port),
            supervisorThriftPortFromArgs(argv, topologyId, port));
    }

    static String host(Map<String, Object> conf) {
        Object h = conf == null ? null : conf.get("storm.local.hostname");
        if (h != null && !h.toString().isBlank()) {
            return h.toString().trim();
        }
        try {
            return Utils.hostname();
        } catch (Throwable t) {
            return "unknown-host";
        }
    }

    /** Supervisor id from a {@code sun.java.command} value (main class and arguments, space separated). */
    static String supervisorIdFromCommand(String command, String topologyId, int port) {
        if (command == null || command.isBlank()) {
            return null;
        }
        return supervisorIdFromArgs(Arrays.asList(command.trim().split("\\s+")), topologyId, port);
    }

    /** Supervisor id from a worker command line: the argument after the topology id that follows the Worker main class. */
    static String supervisorIdFromArgs(List<String> argv, String topologyId, int port) {
        List<String> args = supervisorArgs(argv, topologyId, port);
        return args == null ? null : args.get(1);
    }

    /** The supervisor's Thrift port from a worker command line ({@code <supervisor-port>}), 0 when absent. */
    static int supervisorThriftPortFromArgs(List<String> argv, String topologyId, int port) {
        List<String> args = supervisorArgs(argv, topologyId, port);
        if (args == null || args.size() < 5) {
            return 0;
        }
        try {
            int value = Integer.parseInt(args.get(2));
            return value > 0 && value < 65536 ? value : 0;
        } catch (NumberFormatException notAPort) {
            return 0;
        }
    }

    /**
     * The Worker main class's arguments {@code <topology-id> <supervisor-id> [<supervisor-port>] <port> <worker-id>}
     * when they belong to this topology and worker port, else null.
     */
    private static List<String> supervisorArgs(List<String> argv, String topologyId, int port) {
        if (argv == null) {
            return null;
        }
        for (int i = 0; i < argv.size(); i++) {
            if (!argv.get(i).equals(WORKER_MAIN)) {
                continue;
            }
            List<String> args = argv.subList(i + 1, argv.size());
            if (args.size() < 4 || (topologyId != null && !args.get(0).equals(topologyId))) {
                return null;
            }
            String portArg = args.size() >= 5 ? args.get(3) : args.get(2);
            if (port >= 0 && !portArg.equals(Integer.toString(port))) {
                return null;
            }
            return args;
        }
        return null;
    }

    /**
     * {@code <storm.log.dir>/workers-artifacts/<topology-id>/<port>}: the worker's own directory
     * (the supervisor passes it as {@code -Dworkers.artifacts=<...>/workers-artifacts}, which
     * honours {@code storm.workers.artifacts.dir}); else from {@code storm.log.dir} (system property,
     * then conf), else {@code <storm.home>/logs}.
     */
    static Path artifactsDir(Map<String, Object> conf, String topologyId, int port) {
        String artifacts = System.getProperty("workers.artifacts");
        Path base;
        if (artifacts != null && !artifacts.isBlank()) {
            base = Paths.get(artifacts);
        } else {
            String logDir = System.getProperty("storm.log.dir");
            if ((logDir == null || logDir.isBlank()) && conf != null && conf.get("storm.log.dir") != null) {
                logDir = conf.get("storm.log.dir").toString();
            }
            if (logDir == null || logDir.isBlank()) {
                logDir = Paths.get(System.getProperty("storm.home", "."), "logs").toString();
            }
            base = Paths.get(logDir, "workers-artifacts");
        }
        return base.resolve(topologyId).resolve(Integer.toString(port));
    }
}
