package io.schedulerpy.storm.monitor;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.storm.generated.Bolt;
import org.apache.storm.generated.GlobalStreamId;
import org.apache.storm.generated.Grouping;
import org.apache.storm.generated.StormTopology;

/**
 * The subscriptions of a (user) topology as routes: which component's stream goes to which bolt
 * and how it is grouped ({@code docs/monitoring-format.md} §1, {@code routes}). Storm's Thrift
 * {@link Grouping} is a union: {@code fields} with an empty list is the global grouping
 * ({@code TopologyBuilder.globalGrouping}); {@code custom_serialized} is a user's
 * {@code CustomStreamGrouping}, reported as {@code partial_key} when it is Storm's
 * {@code PartialKeyGrouping} (its key fields stay inside the serialized object, so none are
 * reported), else {@code custom}.
 */
final class TopologyRoutes {
    static final String PARTIAL_KEY_CLASS = "org.apache.storm.grouping.PartialKeyGrouping";

    /** One subscription: {@code component}'s {@code stream} is read by {@code target}. */
    record Route(String component, String stream, String target, String grouping, List<String> fields) {
        static final Comparator<Route> ORDER = Comparator.comparing(Route::component).thenComparing(Route::stream)
            .thenComparing(Route::target);
    }

    private TopologyRoutes() {
    }

    /** The routes out of {@code sources} (all components when null), sorted by component, stream, target. */
    static List<Route> of(StormTopology topology, Collection<String> sources) {
        List<Route> out = new ArrayList<>();
        if (topology == null || topology.get_bolts() == null) {
            return out;
        }
        Set<String> wanted = sources == null ? null : new HashSet<>(sources);
        for (Map.Entry<String, Bolt> b : topology.get_bolts().entrySet()) {
            if (b.getValue() == null || b.getValue().get_common() == null || b.getValue().get_common().get_inputs() == null) {
                continue;
            }
            for (Map.Entry<GlobalStreamId, Grouping> in : b.getValue().get_common().get_inputs().entrySet()) {
                GlobalStreamId id = in.getKey();
                if (wanted != null && !wanted.contains(id.get_componentId())) {
                    continue;
                }
                Grouping g = in.getValue();
                out.add(new Route(id.get_componentId(), id.get_streamId(), b.getKey(), groupingName(g), fields(g)));
            }
        }
        out.sort(Route.ORDER);
        return out;
    }

    static String groupingName(Grouping g) {
        if (g == null || g.getSetField() == null) {
            return "custom";
        }
        switch (g.getSetField()) {
            case FIELDS:
                return g.get_fields() == null || g.get_fields().isEmpty() ? "global" : "fields";
            case SHUFFLE:
                return "shuffle";
            case LOCAL_OR_SHUFFLE:
                return "local_or_shuffle";
            case ALL:
                return "all";
            case NONE:
                return "none";
            case DIRECT:
                return "direct";
            case CUSTOM_SERIALIZED:
                return isPartialKey(g.get_custom_serialized()) ? "partial_key" : "custom";
            default:
                return "custom";
        }
    }

    /** Java serialization writes the class name in UTF-8: found without deserializing user code. */
    static boolean isPartialKey(byte[] serialized) {
        if (serialized == null) {
            return false;
        }
        return new String(serialized, StandardCharsets.ISO_8859_1).contains(PARTIAL_KEY_CLASS);
    }

    static List<String> fields(Grouping g) {
        if (g != null && g.is_set_fields() && g.get_fields() != null && !g.get_fields().isEmpty()) {
            return List.copyOf(g.get_fields());
        }
        return List.of();
    }
}
