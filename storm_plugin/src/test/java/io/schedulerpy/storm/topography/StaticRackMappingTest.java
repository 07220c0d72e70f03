package io.schedulerpy.storm.topography;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.Map;
import org.apache.storm.networktopography.DNSToSwitchMapping;
import org.junit.jupiter.api.Test;

class StaticRackMappingTest {
    private static Map<String, Object> conf(Object racks) {
        Map<String, Object> conf = new HashMap<>();
        conf.put(StaticRackMapping.RACKS_KEY, racks);
        return conf;
    }

    @Test
    void mappedHostsGetTheirRackAndOthersTheDefaultRack() {
        Map<String, String> racks = new HashMap<>();
        racks.put("198.18.1.1", "/rack-1");
        racks.put("198.18.2.4", "/rack-2");
        Map<String, String> resolved = new StaticRackMapping(conf(racks))
            .resolve(Arrays.asList("198.18.1.1", "198.18.2.4", "10.0.0.9"));
        assertEquals("/rack-1", resolved.get("198.18.1.1"));
        assertEquals("/rack-2", resolved.get("198.18.2.4"));
        assertEquals(DNSToSwitchMapping.DEFAULT_RACK, resolved.get("10.0.0.9"));
        assertEquals(3, resolved.size());
    }

    @Test
    void noKeyPutsEveryHostOnTheDefaultRack() {
        Map<String, String> resolved = new StaticRackMapping(new HashMap<>()).resolve(Arrays.asList("a", "b"));
        assertEquals(DNSToSwitchMapping.DEFAULT_RACK, resolved.get("a"));
        assertEquals(DNSToSwitchMapping.DEFAULT_RACK, resolved.get("b"));
    }

    @Test
    void switchMapListsTheResolvedHosts() {
        StaticRackMapping mapping = new StaticRackMapping(conf(Collections.singletonMap("h1", "/r")));
        mapping.resolve(Collections.singletonList("h1"));
        assertTrue(mapping.dumpTopology().contains("/r"), mapping.dumpTopology());
    }

    @Test
    void badValuesNameTheExpectedShape() {
        IllegalArgumentException notAMap = assertThrows(IllegalArgumentException.class,
            () -> new StaticRackMapping(conf(Arrays.asList("198.18.1.1"))));
        assertTrue(notAMap.getMessage().contains("must be a map of host to rack"), notAMap.getMessage());
        IllegalArgumentException noSlash = assertThrows(IllegalArgumentException.class,
            () -> new StaticRackMapping(conf(Collections.singletonMap("198.18.1.1", "rack-1"))));
        assertTrue(noSlash.getMessage().contains("starting with '/'"), noSlash.getMessage());
        assertThrows(IllegalArgumentException.class,
            () -> new StaticRackMapping(conf(Collections.singletonMap("198.18.1.1", 7))));
    }
}
