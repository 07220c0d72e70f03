package io.schedulerpy.storm.monitor;

import java.util.Map;
import org.apache.storm.multilang.ShellMsg;
import org.apache.storm.task.ShellBolt;
import org.apache.storm.task.TopologyContext;
import org.apache.storm.utils.DefaultShellLogHandler;
import org.apache.storm.utils.ShellLogHandler;
import org.apache.storm.utils.ShellProcess;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Tells the monitor which multilang subprocess belongs to which task. Enable it with
 * {@code topology.multilang.log.handler: "io.schedulerpy.storm.monitor.MonitorShellLogHandler"}.
 *
 * <p>{@code ShellBolt.prepare} / {@code ShellSpout.open} launch the subprocess, receive its pid in
 * the multilang handshake, and then call {@code ShellUtils.getLogHandler(conf).setUpContext(cls,
 * process, context)} with the {@link ShellProcess} and the task's {@link TopologyContext}: exactly
 * the pid → task pair the monitor needs, through a public Storm extension point. The multilang log
 * lines themselves are passed to Storm's {@link DefaultShellLogHandler} (or to the class named by
 * {@code scheduler.monitor.multilang.log.handler}), so logging behaves as without this handler.
 */
public class MonitorShellLogHandler implements ShellLogHandler {
    private static final Logger LOG = LoggerFactory.getLogger(MonitorShellLogHandler.class);
    private ShellLogHandler delegate;

    @Override
    public void setUpContext(Class<?> ownerCls, ShellProcess process, TopologyContext context) {
        try {
            Number pid = process == null ? null : process.getPid();
            if (pid != null && context != null) {
                WorkerMonitor.registerSubprocess(context.getStormId(), context.getThisWorkerPort(), pid.longValue(),
                    context.getThisTaskId());
                if (ownerCls != null && ShellBolt.class.isAssignableFrom(ownerCls)) {
                    // ShellBolt.prepare creates its reader and writer threads right after this call:
                    // an unstarted thread's id is below theirs
                    WorkerMonitor.registerShellBolt(context.getStormId(), context.getThisWorkerPort(),
                        context.getThisTaskId(), new Thread().getId());
                }
                LOG.info("scheduler-py monitor: multilang subprocess {} belongs to task {} ({})", pid,
                    context.getThisTaskId(), context.getThisComponentId());
            }
        } catch (Throwable t) {
            LOG.warn("scheduler-py monitor: cannot register a multilang subprocess: {}", OnceLog.describe(t));
        }
        delegate = makeDelegate(context == null ? null : context.getConf());
        delegate.setUpContext(ownerCls, process, context);
    }

    @Override
    public void log(ShellMsg msg) {
        if (delegate == null) {
            delegate = new DefaultShellLogHandler();
        }
        delegate.log(msg);
    }

    static ShellLogHandler makeDelegate(Map<String, Object> conf) {
        Object name = conf == null ? null : conf.get(MonitorConfig.SHELL_LOG_DELEGATE);
        if (name != null && !name.toString().isBlank() && !name.toString().equals(MonitorShellLogHandler.class.getName())) {
            try {
                return (ShellLogHandler) Class.forName(name.toString().trim()).getDeclaredConstructor().newInstance();
            } catch (Throwable t) {
                LOG.warn("scheduler-py monitor: cannot load {}={}; using DefaultShellLogHandler: {}",
                    MonitorConfig.SHELL_LOG_DELEGATE, name, OnceLog.describe(t));
            }
        }
        return new DefaultShellLogHandler();
    }
}
