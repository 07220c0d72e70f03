package io.schedulerpy.storm.monitor;

import org.apache.storm.hooks.BaseTaskHook;

/**
 * A task hook that does nothing. With it in {@code topology.auto.task.hooks} Storm still builds an
 * {@code EmitInfo}, {@code BoltExecuteInfo}, {@code BoltAckInfo} (and so on) for every tuple and calls
 * the hook, so a topology run with it costs what Storm's hook dispatch costs and nothing of
 * {@link TrafficHook}'s own work: the control of variant E of {@code scheduler-py bench
 * monitor_overhead} (scheduler_py/bench/monitor_overhead.py), which splits the worker monitor's cost
 * between Storm and the monitor. Not meant for production topologies.
 */
public class NoopHook extends BaseTaskHook {
}
