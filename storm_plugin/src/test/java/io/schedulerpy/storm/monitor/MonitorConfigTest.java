package io.schedulerpy.storm.monitor;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class MonitorConfigTest {
    @Test
    void defaults() {
        MonitorConfig c = new MonitorConfig(new HashMap<>());
        assertEquals(10_000, c.windowMs);
        assertEquals(0.01, c.sampleRate, 1e-12);
        assertEquals("/scheduler-py", c.zkRoot);
        assertEquals(30, c.retentionWindows);
        assertTrue(c.logEnabled);
        assertTrue(c.zkEnabled);
        assertTrue(c.zkServers.isEmpty());
        assertEquals(1_000, c.liveMs);
        assertTrue(c.problems().isEmpty());
    }

    @Test
    void livePeriod() {
        Map<String, Object> conf = new HashMap<>();
        conf.put("scheduler.monitor.live.secs", "2.5");
        assertEquals(2_500, new MonitorConfig(conf).liveMs);
        for (Object off : List.of(0, -1, "0", -0.5)) {
            conf.put("scheduler.monitor.live.secs", off);
            MonitorConfig c = new MonitorConfig(conf);
            assertEquals(0, c.liveMs, "disabled by " + off);
            assertTrue(c.problems().isEmpty(), c.problems().toString());
        }
        conf.put("scheduler.monitor.live.secs", 0.01);
        MonitorConfig tooFast = new MonitorConfig(conf);
        assertEquals(100, tooFast.liveMs);
        assertEquals(1, tooFast.problems().size(), tooFast.problems().toString());
        conf.put("scheduler.monitor.live.secs", "often");
        MonitorConfig notANumber = new MonitorConfig(conf);
        assertEquals(1_000, notANumber.liveMs);
        assertEquals(1, notANumber.problems().size(), notANumber.problems().toString());
    }

    @Test
    void valuesFromStormYamlTypes() {
        Map<String, Object> conf = new HashMap<>();
        conf.put("scheduler.monitor.window.secs", 5);
        conf.put("scheduler.monitor.sample.rate", "0.5");
        conf.put("scheduler.monitor.zk.root", "/x/y/");
        conf.put("scheduler.monitor.retention.windows", 7L);
        conf.put("scheduler.monitor.log.enabled", "false");
        conf.put("storm.zookeeper.servers", List.of("127.0.0.1", " "));
        conf.put("storm.zookeeper.port", 4181);
        MonitorConfig c = new MonitorConfig(conf);
        assertEquals(5_000, c.windowMs);
        assertEquals(0.5, c.sampleRate, 1e-12);
        assertEquals("/x/y", c.zkRoot);
        assertEquals(7, c.retentionWindows);
        assertFalse(c.logEnabled);
        assertEquals(List.of("127.0.0.1"), c.zkServers);
        assertEquals(4181, c.zkPort);
        assertTrue(c.problems().isEmpty(), c.problems().toString());
    }

    @Test
    void oneInNSampleRate() {
        Map<String, Object> conf = new HashMap<>();
        conf.put("scheduler.monitor.sample.rate", 100);
        assertEquals(0.01, new MonitorConfig(conf).sampleRate, 1e-12);
    }

    @Test
    void unusableValuesFallBack() {
        Map<String, Object> conf = new HashMap<>();
        conf.put("scheduler.monitor.window.secs", 0);
        conf.put("scheduler.monitor.sample.rate", "lots");
        conf.put("scheduler.monitor.zk.root", "relative/path");
        conf.put("scheduler.monitor.retention.windows", -3);
        conf.put("scheduler.monitor.log.enabled", "perhaps");
        MonitorConfig c = new MonitorConfig(conf);
        assertEquals(10_000, c.windowMs);
        assertEquals(0.01, c.sampleRate, 1e-12);
        assertEquals("/scheduler-py", c.zkRoot);
        assertEquals(30, c.retentionWindows);
        assertTrue(c.logEnabled);
        assertEquals(5, c.problems().size(), c.problems().toString());
    }
}
