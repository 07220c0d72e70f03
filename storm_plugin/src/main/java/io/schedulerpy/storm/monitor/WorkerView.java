package io.schedulerpy.storm.monitor;

import java.io.File;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.storm.generated.Bolt;
import org.apache.storm.generated.ComponentObject;
import org.apache.storm.generated.ShellComponent;
import org.apache.storm.generated.SpoutSpec;
import org.apache.storm.generated.StormTopology;
import org.apache.storm.task.WorkerTopologyContext;

/**
 * What the monitor knows about its worker from the topology context: the tasks running here,
 * task → component, and the multilang (shell) components with their command lines.
 */
final class WorkerView {
    /** A multilang component's command: {@code execution_command} and {@code script}. */
    record ShellCommand(String command, String script) {
        /**
         * Whether a process command line runs this component: it holds the script as an argument
         * and the command (by base name, so {@code streamparse_run} matches
         * {@code /venv/bin/python /venv/bin/streamparse_run bolts.split.SplitSentenceBolt}).
         */
        boolean matches(List<String> argv) {
            if (argv == null || argv.isEmpty() || script == null || script.isEmpty()) {
                return false;
            }
            boolean scriptSeen = false;
            boolean commandSeen = command == null || command.isEmpty();
            String commandBase = commandSeen ? "" : new File(command).getName();
            for (String a : argv) {
                if (a.equals(script)) {
                    scriptSeen = true;
                }
                if (!commandSeen && (a.equals(command) || new File(a).getName().equals(commandBase))) {
                    commandSeen = true;
                }
            }
            return scriptSeen && commandSeen;
        }
    }

    private final Set<Integer> workerTasks;
    private final Map<Integer, String> taskToComponent;
    private final Map<String, ShellCommand> shellComponents;
    private final StormTopology topology;

    WorkerView(Collection<Integer> workerTasks, Map<Integer, String> taskToComponent,
               Map<String, ShellCommand> shellComponents) {
        this(workerTasks, taskToComponent, shellComponents, null);
    }

    WorkerView(Collection<Integer> workerTasks, Map<Integer, String> taskToComponent,
               Map<String, ShellCommand> shellComponents, StormTopology topology) {
        this.workerTasks = workerTasks == null ? Collections.emptySet() : new HashSet<>(workerTasks);
        this.taskToComponent = taskToComponent == null ? Collections.emptyMap() : new HashMap<>(taskToComponent);
        this.shellComponents = shellComponents == null ? Collections.emptyMap() : new HashMap<>(shellComponents);
        this.topology = topology;
    }

    static WorkerView of(WorkerTopologyContext context) {
        return new WorkerView(context.getThisWorkerTasks(), context.getTaskToComponent(), shells(context.getRawTopology()),
            context.getRawTopology());
    }

    /**
     * The view of a worker whose tasks (task → component) come from Storm's metrics registry and
     * whose user topology (null when unknown) from the supervisor's copy ({@link CountsReporter}).
     */
    static WorkerView of(Map<Integer, String> workerTasks, StormTopology topology) {
        return new WorkerView(workerTasks.keySet(), workerTasks, shells(topology), topology);
    }

    /** The user topology (null when unknown). */
    StormTopology topology() {
        return topology;
    }

    /** Whether {@code component} is a spout of the user topology. */
    boolean isSpout(String component) {
        return topology != null && topology.get_spouts() != null && topology.get_spouts().containsKey(component);
    }

    /** The components with a task in this worker. */
    Set<String> workerComponents() {
        Set<String> out = new HashSet<>();
        for (int t : workerTasks) {
            String c = taskToComponent.get(t);
            if (c != null) {
                out.add(c);
            }
        }
        return out;
    }

    private static Map<String, ShellCommand> shells(StormTopology t) {
        Map<String, ShellCommand> shells = new HashMap<>();
        try {
            if (t != null) {
                if (t.get_bolts() != null) {
                    for (Map.Entry<String, Bolt> e : t.get_bolts().entrySet()) {
                        addShell(shells, e.getKey(), e.getValue().get_bolt_object());
                    }
                }
                if (t.get_spouts() != null) {
                    for (Map.Entry<String, SpoutSpec> e : t.get_spouts().entrySet()) {
                        addShell(shells, e.getKey(), e.getValue().get_spout_object());
                    }
                }
            }
        } catch (RuntimeException e) {
            // no shell components known: only the ShellLogHandler attributes subprocesses then
        }
        return shells;
    }

    private static void addShell(Map<String, ShellCommand> shells, String component, ComponentObject obj) {
        if (obj != null && obj.is_set_shell()) {
            ShellComponent sc = obj.get_shell();
            shells.put(component, new ShellCommand(sc.get_execution_command(), sc.get_script()));
        }
    }

    Set<Integer> workerTasks() {
        return Collections.unmodifiableSet(workerTasks);
    }

    String componentOf(int task) {
        return taskToComponent.get(task);
    }

    Map<String, ShellCommand> shellComponents() {
        return Collections.unmodifiableMap(shellComponents);
    }

    /**
     * Whether an executor thread belongs to this worker (in local mode several workers share a JVM):
     * its first task runs here and, when known, has the thread's component.
     */
    boolean isLocal(ExecutorKey k) {
        if (!workerTasks.isEmpty() && !workerTasks.contains(k.start())) {
            return false;
        }
        String c = taskToComponent.get(k.start());
        return c == null || c.equals(k.component());
    }

    /** The components whose multilang command matches a process command line. */
    List<String> shellComponentsMatching(List<String> argv) {
        List<String> out = new ArrayList<>();
        for (Map.Entry<String, ShellCommand> e : shellComponents.entrySet()) {
            if (e.getValue().matches(argv)) {
                out.add(e.getKey());
            }
        }
        return out;
    }
}
