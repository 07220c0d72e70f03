package io.schedulerpy.storm.monitor;

import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;

/**
 * Logs each distinct problem once at WARN (later occurrences at DEBUG), so a monitor that keeps
 * failing the same way (ZooKeeper down, an unserializable value, ...) cannot flood worker.log.
 * A problem is identified by a caller-chosen key plus the exception's class and message.
 */
final class OnceLog {
    private static final int MAX_KEYS = 512;

    private final Logger log;
    private final ConcurrentHashMap<String, Boolean> seen = new ConcurrentHashMap<>();

    OnceLog(Logger log) {
        this.log = log;
    }

    /** Log {@code message} at WARN the first time this (key, error) pair is seen, else at DEBUG. */
    void warn(String key, String message, Throwable error) {
        try {
            String id = key + '|' + describe(error);
            boolean first = seen.size() < MAX_KEYS ? seen.putIfAbsent(id, Boolean.TRUE) == null : false;
            if (first) {
                if (error != null) {
                    log.warn("{} ({}; logged once)", message, describe(error), error);
                } else {
                    log.warn("{} (logged once)", message);
                }
            } else if (log.isDebugEnabled()) {
                log.debug("{} ({})", message, describe(error));
            }
        } catch (Throwable ignored) {
            // logging must never hurt the worker
        }
    }

    /** Forget a problem, e.g. after a successful retry, so that it is logged again if it recurs. */
    void clear(String key) {
        seen.keySet().removeIf(k -> k.startsWith(key + '|'));
    }

    boolean hasSeen(String key) {
        for (String k : seen.keySet()) {
            if (k.startsWith(key + '|')) {
                return true;
            }
        }
        return false;
    }

    static String describe(Throwable error) {
        if (error == null) {
            return "";
        }
        String msg = error.getMessage();
        if (msg != null && msg.length() > 200) {
            msg = msg.substring(0, 200) + "...";
        }
        return error.getClass().getSimpleName() + (msg == null ? "" : ": " + msg);
    }
}
