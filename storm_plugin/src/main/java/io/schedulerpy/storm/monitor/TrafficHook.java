package io.schedulerpy.storm.monitor;

import java.util.Map;
import org.apache.storm.generated.StormTopology;
import org.apache.storm.hooks.BaseTaskHook;
import org.apache.storm.hooks.info.BoltAckInfo;
import org.apache.storm.hooks.info.BoltExecuteInfo;
import org.apache.storm.hooks.info.BoltFailInfo;
import org.apache.storm.hooks.info.EmitInfo;
import org.apache.storm.hooks.info.SpoutAckInfo;
import org.apache.storm.hooks.info.SpoutFailInfo;
import org.apache.storm.task.TopologyContext;
import org.apache.storm.tuple.Tuple;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The scheduler-py worker monitor's task hook. Enable it for every topology with
 * {@code topology.auto.task.hooks: ["io.schedulerpy.storm.monitor.TrafficHook"]} (storm.yaml or the
 * topology conf); the jar must be on the workers' classpath ({@code $STORM_HOME/extlib/}).
 *
 * <p>Storm creates one instance per task ({@code Task.addTaskHooks}, Storm's system tasks
 * included) and calls {@link #prepare} from the worker's main thread while it builds the
 * executors, before any executor thread runs. The first hook of a worker starts the worker's
 * {@link WorkerMonitor}. {@link #emit} is called on every emit ({@code Task.getOutgoingTasks})
 * with the destination tasks chosen by the grouping, so it counts logical traffic, local or
 * remote, including the acker streams ({@code __ack_init}, {@code __ack_ack}, ...).
 *
 * <p>It also keeps the task's live counters ({@link LiveCounters}, cumulative): emits on user streams
 * (once per emit call), {@code boltExecute} / {@code boltAck} / {@code boltFail} of tuples from user
 * streams, {@code spoutAck} / {@code spoutFail}, and a spout's {@code __ack_init} emits (one per
 * tuple tree the ackers track: {@code SpoutOutputCollectorImpl} sends it through
 * {@code Task.sendUnanchored} → {@code getOutgoingTasks}, which fires the emit hook). Hook methods
 * never throw: a failure disables counting for this task and is logged once.
 */
public class TrafficHook extends BaseTaskHook {
    private static final Logger LOG = LoggerFactory.getLogger(TrafficHook.class);

    private WorkerMonitor monitor;
    private TrafficCounters.TaskTraffic own;
    private LiveCounters.TaskLive live;
    private TupleSizer sizer;
    private double sampleRate;
    private int taskId;
    private volatile long lastThreadId = -1;

    @Override
    public void prepare(Map<String, Object> conf, TopologyContext context) {
        try {
            WorkerMonitor m = WorkerMonitor.acquire(conf, context);
            taskId = context.getThisTaskId();
            own = m.traffic().forTask(taskId);
            live = m.live().register(taskId, context.getThisComponentId(), isSpout(context));
            sizer = new TupleSizer(conf, m.problems);
            sampleRate = m.config.sampleRate;
            monitor = m;
        } catch (Throwable t) {
            monitor = null;
            LOG.warn("scheduler-py monitor disabled for task {}: {}", context == null ? "?" : context.getThisTaskId(),
                OnceLog.describe(t), t);
        }
    }

    /** Whether the task's component is a spout of the (user) topology; system components are bolts. */
    static boolean isSpout(TopologyContext context) {
        StormTopology t = context.getRawTopology();
        return t != null && t.get_spouts() != null && t.get_spouts().containsKey(context.getThisComponentId());
    }

    @Override
    public void emit(EmitInfo info) {
        WorkerMonitor m = monitor;
        if (m == null || info == null) {
            return;
        }
        try {
            live.onEmit(info.stream);
        } catch (Throwable e) {
            m.problems.warn("live", "scheduler-py monitor: updating the live counters failed", e);
        }
        try {
            noteThread(m);
            TrafficCounters.TaskTraffic t = info.taskId == taskId ? own : m.traffic().forTask(info.taskId);
            TrafficCounters.StreamTraffic s = t.stream(info.stream);
            if (s.count(info.outTasks) > 0 && s.shouldSample(sampleRate)) {
                s.addSample(sizer.size(info.taskId, info.values));
            }
        } catch (Throwable e) {
            m.problems.warn("emit", "scheduler-py monitor: counting an emit failed", e);
        }
    }

    @Override
    public void spoutAck(SpoutAckInfo info) {
        WorkerMonitor m = monitor;
        if (m != null) {
            live.onSpoutAck();
            noteThread(m);
        }
    }

    @Override
    public void spoutFail(SpoutFailInfo info) {
        WorkerMonitor m = monitor;
        if (m != null) {
            live.onSpoutFail();
            noteThread(m);
        }
    }

    @Override
    public void boltExecute(BoltExecuteInfo info) {
        WorkerMonitor m = monitor;
        if (m != null) {
            live.onExecute(sourceStream(info == null ? null : info.tuple));
        }
    }

    @Override
    public void boltAck(BoltAckInfo info) {
        WorkerMonitor m = monitor;
        if (m != null) {
            live.onBoltAck(sourceStream(info == null ? null : info.tuple));
            noteThread(m);
        }
    }

    @Override
    public void boltFail(BoltFailInfo info) {
        WorkerMonitor m = monitor;
        if (m != null) {
            live.onBoltFail(sourceStream(info == null ? null : info.tuple));
            noteThread(m);
        }
    }

    /** The stream a tuple came on; null (counted as a user stream) when unknown. */
    private static String sourceStream(Tuple tuple) {
        try {
            return tuple == null ? null : tuple.getSourceStreamId();
        } catch (Throwable e) {
            return null;
        }
    }

    /** Tell the monitor which threads work for this task (a ShellBolt emits and acks from its reader thread). */
    private void noteThread(WorkerMonitor m) {
        if (m == null) {
            return;
        }
        long id = Thread.currentThread().getId();
        if (id != lastThreadId) {
            lastThreadId = id;
            try {
                m.noteThread(id, taskId);
            } catch (Throwable e) {
                // never hurt the worker
            }
        }
    }

    @Override
    public void cleanup() {
        WorkerMonitor m = monitor;
        monitor = null;
        if (m != null) {
            try {
                m.release();
            } catch (Throwable t) {
                // never hurt the worker
            }
        }
    }
}
