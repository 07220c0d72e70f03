package io.schedulerpy.storm;

import java.util.Map;

/**
 * The shim's settings, read from the Nimbus daemon configuration (storm.yaml) handed to
 * {@link BrainScheduler#prepare}. Every key lives under the {@code scheduler.brain.} namespace.
 */
public final class BrainConfig {
    /** Host of the scheduler-py brain. */
    public static final String HOST = "scheduler.brain.host";
    /** TCP port of the scheduler-py brain. */
    public static final String PORT = "scheduler.brain.port";
    /** Deadline of one whole brain call (connect, send, reply), in milliseconds. */
    public static final String TIMEOUT_MS = "scheduler.brain.timeout.ms";
    /** When false the shim never calls the brain and behaves exactly like Storm's DefaultScheduler. */
    public static final String ENABLED = "scheduler.brain.enabled";
    /**
     * The file holding the key the shim seals every snapshot with (one line, mode 0600; the brain's
     * {@code scheduler-py serve --shim-key-file} names the same file or a copy). Unset: rounds go
     * unsealed, and a brain refuses them unless started with {@code --allow-unauthenticated-rounds}.
     */
    public static final String KEY_FILE = "scheduler.brain.key.file";

    public static final String DEFAULT_HOST = "127.0.0.1";
    public static final int DEFAULT_PORT = 9627;
    public static final int DEFAULT_TIMEOUT_MS = 2000;
    public static final boolean DEFAULT_ENABLED = true;

    private final String host;
    private final int port;
    private final int timeoutMs;
    private final boolean enabled;
    private final String keyFile;

    public BrainConfig(String host, int port, int timeoutMs, boolean enabled) {
        this(host, port, timeoutMs, enabled, null);
    }

    public BrainConfig(String host, int port, int timeoutMs, boolean enabled, String keyFile) {
        this.host = host;
        this.port = port;
        this.timeoutMs = timeoutMs;
        this.enabled = enabled;
        this.keyFile = keyFile;
    }

    /**
     * Read the settings from a daemon configuration, falling back to the defaults for missing or
     * unusable values (a bad value must never stop Nimbus).
     *
     * @param conf the daemon configuration, may be null
     * @return the settings
     */
    public static BrainConfig fromConf(Map<String, Object> conf) {
        if (conf == null) {
            return new BrainConfig(DEFAULT_HOST, DEFAULT_PORT, DEFAULT_TIMEOUT_MS, DEFAULT_ENABLED);
        }
        Object rawHost = conf.get(HOST);
        String host = rawHost == null || rawHost.toString().trim().isEmpty() ? DEFAULT_HOST : rawHost.toString().trim();
        int port = readInt(conf.get(PORT), DEFAULT_PORT);
        if (port <= 0 || port > 65535) {
            port = DEFAULT_PORT;
        }
        int timeoutMs = readInt(conf.get(TIMEOUT_MS), DEFAULT_TIMEOUT_MS);
        if (timeoutMs <= 0) {
            timeoutMs = DEFAULT_TIMEOUT_MS;
        }
        boolean enabled = readBoolean(conf.get(ENABLED), DEFAULT_ENABLED);
        Object rawKeyFile = conf.get(KEY_FILE);
        String keyFile = rawKeyFile == null || rawKeyFile.toString().trim().isEmpty() ? null : rawKeyFile.toString().trim();
        return new BrainConfig(host, port, timeoutMs, enabled, keyFile);
    }

    private static int readInt(Object value, int fallback) {
        if (value instanceof Number) {
            return ((Number) value).intValue();
        }
        if (value != null) {
            try {
                return Integer.parseInt(value.toString().trim());
            } catch (NumberFormatException e) {
                return fallback;
            }
        }
        return fallback;
    }

    private static boolean readBoolean(Object value, boolean fallback) {
        if (value instanceof Boolean) {
            return (Boolean) value;
        }
        if (value != null) {
            String text = value.toString().trim();
            if ("true".equalsIgnoreCase(text)) {
                return true;
            }
            if ("false".equalsIgnoreCase(text)) {
                return false;
            }
        }
        return fallback;
    }

    public String getHost() {
        return host;
    }

    public int getPort() {
        return port;
    }

    public int getTimeoutMs() {
        return timeoutMs;
    }

    public boolean isEnabled() {
        return enabled;
    }

    /** The shim key file, or null when none is configured. */
    public String getKeyFile() {
        return keyFile;
    }

    /** The brain's address as {@code host:port}, for messages. */
    public String address() {
        return host + ":" + port;
    }

    @Override
    public String toString() {
        return "BrainConfig{" + HOST + "=" + host + ", " + PORT + "=" + port + ", " + TIMEOUT_MS + "=" + timeoutMs
            + ", " + ENABLED + "=" + enabled + ", " + KEY_FILE + "=" + (keyFile == null ? "unset" : keyFile) + "}";
    }
}
