package io.schedulerpy.storm.topography;

import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import org.apache.storm.networktopography.AbstractDNSToSwitchMapping;
import org.apache.storm.networktopography.DNSToSwitchMapping;
import org.apache.storm.utils.Utils;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Racks from the configuration: {@code storm.network.topography.plugin} for clusters whose racks
 * DNS cannot tell, such as the emulated hosts of {@code deploy/emulated-hosts.sh}.
 *
 * <pre>
 * storm.network.topography.plugin: "io.schedulerpy.storm.topography.StaticRackMapping"
 * scheduler.topography.racks: {"198.18.1.1": "/rack-1", "198.18.2.4": "/rack-2"}
 * </pre>
 *
 * <p>A host missing from the map is on {@link DNSToSwitchMapping#DEFAULT_RACK}. Storm creates the
 * plugin with its no-argument constructor and no configuration (Storm's {@code Cluster}), so that
 * constructor reads the daemon's own storm.yaml ({@link Utils#readStormConfig()}); Nimbus resolves
 * racks with it for every scheduler, so the brain's snapshot ({@code SnapshotBuilder.hostToRack})
 * and Storm's ResourceAwareScheduler see the same racks.
 */
public final class StaticRackMapping extends AbstractDNSToSwitchMapping {
    /** Host (its {@code storm.local.hostname}) to rack name; a rack name starts with '/'. */
    public static final String RACKS_KEY = "scheduler.topography.racks";

    private static final Logger LOG = LoggerFactory.getLogger(StaticRackMapping.class);
    private static volatile Map<String, String> fromStormYaml;

    private final Map<String, String> racks;

    /** The racks of this daemon's storm.yaml (read once per JVM). */
    public StaticRackMapping() {
        this.racks = cachedStormYamlRacks();
    }

    /** The racks of {@code conf}'s {@value #RACKS_KEY}. */
    public StaticRackMapping(Map<String, Object> conf) {
        this.racks = parse(conf.get(RACKS_KEY));
    }

    private static Map<String, String> cachedStormYamlRacks() {
        Map<String, String> racks = fromStormYaml;
        if (racks == null) {
            try {
                racks = parse(Utils.readStormConfig().get(RACKS_KEY));
                LOG.info("{}: {} hosts on racks {}", RACKS_KEY, racks.size(), new TreeSet<>(racks.values()));
            } catch (IllegalArgumentException e) {
                // a bad value must not stop Nimbus from scheduling: every host on the default rack
                LOG.error("ignoring {} (every host is on {}): {}", RACKS_KEY, DEFAULT_RACK, e.getMessage());
                racks = Collections.emptyMap();
            }
            fromStormYaml = racks;
        }
        return racks;
    }

    /**
     * The host-to-rack map of a {@value #RACKS_KEY} value.
     *
     * @throws IllegalArgumentException naming the expected shape when the value is not a map of
     *     host names to rack names starting with '/'
     */
    static Map<String, String> parse(Object value) {
        if (value == null) {
            return Collections.emptyMap();
        }
        if (!(value instanceof Map)) {
            throw new IllegalArgumentException(RACKS_KEY + " must be a map of host to rack, e.g. "
                + "{\"198.18.1.1\": \"/rack-1\"}; found " + value.getClass().getSimpleName() + " " + value);
        }
        Map<String, String> racks = new HashMap<>();
        for (Map.Entry<?, ?> entry : ((Map<?, ?>) value).entrySet()) {
            Object host = entry.getKey();
            Object rack = entry.getValue();
            if (!(host instanceof String) || ((String) host).isEmpty()
                || !(rack instanceof String) || !((String) rack).startsWith("/")) {
                throw new IllegalArgumentException(RACKS_KEY + ": expected a host name mapped to a rack "
                    + "name starting with '/' (e.g. \"/rack-1\"); found " + host + " -> " + rack);
            }
            racks.put((String) host, (String) rack);
        }
        return Collections.unmodifiableMap(racks);
    }

    @Override
    public Map<String, String> resolve(List<String> names) {
        Map<String, String> resolved = new HashMap<>();
        for (String name : names) {
            resolved.put(name, racks.getOrDefault(name, DEFAULT_RACK));
        }
        return resolved;
    }

    @Override
    public Map<String, String> getSwitchMap() {
        return racks;
    }

    @Override
    public String toString() {
        return "StaticRackMapping" + racks;
    }
}
