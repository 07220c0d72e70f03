package io.schedulerpy.storm;

import io.schedulerpy.storm.thrift.ClusterSnapshot;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.apache.storm.Config;
import org.apache.storm.generated.StormTopology;
import org.apache.storm.metric.StormMetricsRegistry;
import org.apache.storm.scheduler.Cluster;
import org.apache.storm.scheduler.SupervisorDetails;
import org.apache.storm.scheduler.Topologies;
import org.apache.storm.scheduler.TopologyDetails;
import org.apache.storm.scheduler.resource.ResourceAwareScheduler;
import org.apache.storm.topology.TopologyBuilder;
import org.apache.storm.tuple.Fields;

/**
 * The round trip through the real shim ({@code scheduler-py bench roundtrip}): a plain timed loop, not a test. It builds
 * a synthetic Storm {@link Cluster} of {@link #SUPERVISORS} supervisors and {@link Topologies} of
 * word-count-shaped topologies ({@link Fixtures}, built the way Nimbus builds them), then times, per
 * size and interleaved, {@link BrainScheduler#schedule} against a running {@code scheduler-py serve}
 * and Storm's own {@link ResourceAwareScheduler} on a fresh copy of the same cluster. For the brain it
 * also times the snapshot ({@link SnapshotBuilder#build}) and the Thrift call ({@link BrainClient#schedule},
 * planning included) on their own; validation and assignment are the rest of the round.
 *
 * <p>Launched by {@code scheduler-py bench roundtrip} ({@code scheduler_py/bench/roundtrip.py}), which
 * starts the brain; arguments: brain port, rounds per size, output file (one JSON object per line),
 * then sizes as {@code EXECUTORSxTOPOLOGIES}.
 */
public final class RoundTripBench {
    static final int SUPERVISORS = 500;
    static final int PORTS = 4;
    static final double SUPERVISOR_CPU = 400.0;
    static final double SUPERVISOR_MEMORY_MB = 16384.0;
    static final int WARMUP_ROUNDS = 2;

    private RoundTripBench() {
    }

    /** spout(p/10) -shuffle-> split(4p/10) -fields-> count(rest): {@code executors} executors in all. */
    static StormTopology wordCount(int executors) {
        int spouts = Math.max(1, executors / 10);
        int splits = Math.max(1, executors * 4 / 10);
        int counts = Math.max(1, executors - spouts - splits);
        TopologyBuilder builder = new TopologyBuilder();
        builder.setSpout("words", new Fixtures.WordSpout(), spouts);
        builder.setBolt("split", new Fixtures.WordBolt(), splits).shuffleGrouping("words");
        builder.setBolt("count", new Fixtures.WordBolt(), counts).fieldsGrouping("split", new Fields("word"));
        return builder.createTopology();
    }

    static Topologies topologies(int executors, int count) throws Exception {
        List<TopologyDetails> all = new ArrayList<>();
        int each = executors / count;
        for (int i = 0; i < count; i++) {
            // every topology may use its share of the cluster's slots, so that topology.workers does
            // not decide between the brain's plan and Storm's fallback
            int workers = Math.max(1, SUPERVISORS * PORTS / count);
            Map<String, Object> conf = Fixtures.topoConf(String.format("wc%02d", i), workers,
                Config.TOPOLOGY_ACKER_EXECUTORS, 0,
                Config.TOPOLOGY_SUBMITTER_USER, "user");
            all.add(Fixtures.topology(String.format("wc%02d-1-0", i), wordCount(each), conf));
        }
        return new Topologies(all.toArray(new TopologyDetails[0]));
    }

    private static BrainScheduler brain(int port) {
        Map<String, Object> conf = Fixtures.daemonConf();
        conf.put(BrainConfig.HOST, "127.0.0.1");
        conf.put(BrainConfig.PORT, port);
        // the key the brain was started with (scheduler_py/bench/roundtrip.py)
        String keyFile = System.getenv("SCHEDULER_PY_SHIM_KEY_FILE");
        if (keyFile != null) {
            conf.put(BrainConfig.KEY_FILE, keyFile);
        }
        // scheduler.brain.timeout.ms stays the shim's default: the brain budgets its round from it
        BrainScheduler scheduler = new BrainScheduler();
        scheduler.prepare(conf, null);
        return scheduler;
    }

    private static ResourceAwareScheduler ras() {
        ResourceAwareScheduler scheduler = new ResourceAwareScheduler();
        scheduler.prepare(Fixtures.daemonConf(), new StormMetricsRegistry());
        return scheduler;
    }

    private static double ms(long nanos) {
        return nanos / 1e6;
    }

    private static int assigned(Cluster cluster, Topologies topologies) {
        int count = 0;
        for (TopologyDetails td : topologies.getTopologies()) {
            if (cluster.getAssignmentById(td.getId()) != null) {
                count += cluster.getAssignmentById(td.getId()).getExecutors().size();
            }
        }
        return count;
    }

    public static void main(String[] args) {
        try {
            measure(args);
        } catch (Throwable t) {
            t.printStackTrace();
            System.exit(1);
        }
    }

    private static void measure(String[] args) throws Exception {
        if (args.length < 4) {
            System.err.println("usage: RoundTripBench PORT ROUNDS OUTPUT EXECUTORSxTOPOLOGIES...");
            System.exit(2);
        }
        int port = Integer.parseInt(args[0]);
        int rounds = Integer.parseInt(args[1]);
        List<String> lines = new ArrayList<>();
        Map<String, SupervisorDetails> supervisors =
            Fixtures.supervisors(SUPERVISORS, PORTS, SUPERVISOR_CPU, SUPERVISOR_MEMORY_MB);
        for (String size : Arrays.asList(args).subList(3, args.length)) {
            String[] parts = size.split("x");
            int executors = Integer.parseInt(parts[0]);
            int count = Integer.parseInt(parts[1]);
            Topologies topologies = topologies(executors, count);
            List<TopologyDetails> sorted = new ArrayList<>(topologies.getTopologies());
            BrainClient client = new BrainClient(brain(port).getConfig());
            for (int round = -WARMUP_ROUNDS; round < rounds; round++) {
                // the brain's whole round, then the same round's first two stages on their own
                Cluster cluster = Fixtures.cluster(supervisors, topologies);
                long start = System.nanoTime();
                brain(port).schedule(topologies, cluster);
                long whole = System.nanoTime() - start;
                int brainAssigned = assigned(cluster, topologies);
                String status = cluster.getStatusMap().getOrDefault(sorted.get(0).getId(), "");

                Cluster fresh = Fixtures.cluster(supervisors, topologies);
                start = System.nanoTime();
                ClusterSnapshot snapshot = new SnapshotBuilder().build(fresh, sorted, 1, System.currentTimeMillis());
                long snapshotNanos = System.nanoTime() - start;
                start = System.nanoTime();
                String callError = "";
                try {
                    client.schedule(snapshot);
                } catch (BrainCallException e) {
                    callError = e.getMessage();
                }
                long callNanos = System.nanoTime() - start;

                Cluster forRas = Fixtures.cluster(supervisors, topologies);
                start = System.nanoTime();
                ras().schedule(topologies, forRas);
                long rasNanos = System.nanoTime() - start;
                int rasAssigned = assigned(forRas, topologies);
                if (round < 0) {
                    continue;
                }
                lines.add(String.format(
                    "{\"executors\": %d, \"topologies\": %d, \"round\": %d, \"brain_ms\": %.3f, "
                        + "\"snapshot_ms\": %.3f, \"call_ms\": %.3f, \"ras_ms\": %.3f, "
                        + "\"brain_assigned\": %d, \"ras_assigned\": %d, \"total_executors\": %d, \"status\": %s, "
                        + "\"call_error\": %s}",
                    executors, count, round, ms(whole), ms(snapshotNanos), ms(callNanos), ms(rasNanos),
                    brainAssigned, rasAssigned, totalExecutors(topologies), Json.encode(status),
                    Json.encode(callError)));
                System.err.printf("%dx%d round %d: brain %.1f ms (snapshot %.1f, call %.1f), ras %.1f ms%n",
                    executors, count, round, ms(whole), ms(snapshotNanos), ms(callNanos), ms(rasNanos));
            }
        }
        Files.write(Paths.get(args[2]), lines, StandardCharsets.UTF_8);
        // Storm's scheduler classes leave non-daemon threads behind: end the JVM explicitly
        System.exit(0);
    }

    private static int totalExecutors(Topologies topologies) {
        int count = 0;
        for (TopologyDetails td : topologies.getTopologies()) {
            count += td.getExecutors().size();
        }
        return count;
    }
}
