package io.schedulerpy.topologies;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.StringJoiner;
import org.apache.storm.Config;
import org.apache.storm.StormSubmitter;
import org.apache.storm.generated.AlreadyAliveException;
import org.apache.storm.generated.AuthorizationException;
import org.apache.storm.generated.InvalidTopologyException;
import org.apache.storm.generated.StormTopology;
import org.apache.storm.utils.Utils;

/**
 * Submits one benchmark topology to the cluster {@code storm jar} points at:
 *
 * <pre>
 * storm jar scheduler-py-topologies.jar io.schedulerpy.topologies.Submit KIND NAME [-c key=value]...
 * </pre>
 *
 * <p>KIND is {@code wordcount}, {@code linear}, {@code diamond} or {@code star} ({@link Kind}).
 * {@code storm jar} hands every {@code -c key=value} to the JVM as {@code -Dstorm.options}; they are
 * the topology's conf: the {@code bench.*} options ({@link BenchOptions}) and any Storm key, e.g.
 * {@code topology.workers}. Options and their defaults: topologies/README.md, "JVM topologies".
 */
public final class Submit {
    static final String USAGE =
        "usage: storm jar scheduler-py-topologies.jar " + Submit.class.getName()
            + " <wordcount|linear|diamond|star> <topology-name> [-c key=value]...";

    /** Storm keys set unless {@code -c} gives them: issue 20's word count shape (3 workers, 1 acker). */
    static final Map<String, Object> STORM_DEFAULTS = Map.of(
        Config.TOPOLOGY_WORKERS, 3,
        Config.TOPOLOGY_ACKER_EXECUTORS, 1,
        Config.TOPOLOGY_MAX_SPOUT_PENDING, 1000);

    private Submit() {
    }

    /** What to submit: parsed and validated before anything is sent to Nimbus. */
    static final class Request {
        final Kind kind;
        final String name;
        final Map<String, Object> conf;
        final BenchOptions options;

        private Request(Kind kind, String name, Map<String, Object> conf) {
            this.kind = kind;
            this.name = name;
            this.conf = conf;
            this.options = new BenchOptions(conf, kind.components());
        }

        /**
         * @param args            the main arguments: KIND NAME
         * @param commandLineConf the {@code -c key=value} options ({@link Utils#readCommandLineOpts()})
         * @throws IllegalArgumentException saying what was expected
         */
        static Request parse(List<String> args, Map<String, Object> commandLineConf) {
            if (args.size() != 2) {
                throw new IllegalArgumentException(
                    "expected 2 arguments (kind and topology name), found " + args.size() + ": " + args
                        + " (give options as -c key=value)");
            }
            Kind kind = Kind.parse(args.get(0));
            String name = args.get(1);
            Utils.validateTopologyName(name);
            Map<String, Object> conf = new HashMap<>(STORM_DEFAULTS);
            conf.putAll(commandLineConf);
            return new Request(kind, name, conf);
        }

        StormTopology topology() {
            return kind.build(options);
        }

        /** One line: the components with their executors, and the main options. */
        String describe(StormTopology topology) {
            StringJoiner shape = new StringJoiner(", ");
            for (String component : kind.components()) {
                shape.add(component + " x" + parallelism(topology, component));
            }
            double rate = options.spoutRate();
            return kind.id() + " as '" + name + "' (" + shape + "); "
                + (kind == Kind.WORDCOUNT ? "" : "payload " + options.payloadBytes() + " B, ")
                + "spout rate " + (rate == 0 ? "unthrottled" : rate + " tuples/s per executor") + ", "
                + Config.TOPOLOGY_WORKERS + "=" + conf.get(Config.TOPOLOGY_WORKERS) + ", "
                + Config.TOPOLOGY_ACKER_EXECUTORS + "=" + conf.get(Config.TOPOLOGY_ACKER_EXECUTORS) + ", "
                + Config.TOPOLOGY_MAX_SPOUT_PENDING + "=" + conf.get(Config.TOPOLOGY_MAX_SPOUT_PENDING);
        }
    }

    /** The parallelism hint (executors) of {@code component} in {@code topology}. */
    static int parallelism(StormTopology topology, String component) {
        if (topology.get_spouts().containsKey(component)) {
            return topology.get_spouts().get(component).get_common().get_parallelism_hint();
        }
        return topology.get_bolts().get(component).get_common().get_parallelism_hint();
    }

    public static void main(String[] args) {
        Request request;
        try {
            request = Request.parse(List.of(args), Utils.readCommandLineOpts());
        } catch (IllegalArgumentException e) {
            System.err.println("Submit: " + e.getMessage());
            System.err.println(USAGE);
            System.exit(2);
            return;
        }
        StormTopology topology = request.topology();
        try {
            StormSubmitter.submitTopology(request.name, request.conf, topology);
        } catch (AlreadyAliveException e) {
            fail("a topology named '" + request.name + "' is already running: kill it first (storm kill "
                + request.name + ") or choose another name");
        } catch (InvalidTopologyException e) {
            fail("Nimbus rejected the topology: " + e.get_msg());
        } catch (AuthorizationException e) {
            fail("Nimbus refused the submission: " + e.get_msg());
        }
        System.out.println("submitted " + request.describe(topology));
    }

    private static void fail(String message) {
        System.err.println("Submit: " + message);
        System.exit(1);
    }
}
