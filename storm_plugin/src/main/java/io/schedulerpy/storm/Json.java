package io.schedulerpy.storm;

import java.util.Collection;
import java.util.Iterator;
import java.util.Map;
import java.util.TreeMap;

/**
 * A tiny JSON encoder for topology configuration values (strings, numbers, booleans, null, lists and
 * maps of those). Anything else is encoded as its {@code toString()} string. Map keys are sorted so
 * the encoding of a value is stable from round to round.
 */
public final class Json {

    private Json() {
    }

    /**
     * Encode a configuration value as JSON text.
     *
     * @param value the value
     * @return its JSON encoding
     */
    public static String encode(Object value) {
        StringBuilder out = new StringBuilder();
        write(value, out);
        return out.toString();
    }

    private static void write(Object value, StringBuilder out) {
        if (value == null) {
            out.append("null");
        } else if (value instanceof Boolean) {
            out.append(value.toString());
        } else if (value instanceof Number) {
            writeNumber((Number) value, out);
        } else if (value instanceof Map) {
            writeMap((Map<?, ?>) value, out);
        } else if (value instanceof Collection) {
            writeArray(((Collection<?>) value).iterator(), out);
        } else if (value instanceof Object[]) {
            writeArray(java.util.Arrays.asList((Object[]) value).iterator(), out);
        } else {
            writeString(value.toString(), out);
        }
    }

    private static void writeNumber(Number number, StringBuilder out) {
        if (number instanceof Double || number instanceof Float) {
            double d = number.doubleValue();
            if (Double.isNaN(d) || Double.isInfinite(d)) {
                // JSON has no NaN/Infinity.
                out.append("null");
            } else if (d == Math.rint(d) && Math.abs(d) < 1e15) {
                // 2.0 stays a float for Python's json module ("2.0"), like Python would print it.
                out.append((long) d).append(".0");
            } else {
                out.append(Double.toString(d));
            }
        } else {
            out.append(number.toString());
        }
    }

    private static void writeMap(Map<?, ?> map, StringBuilder out) {
        Map<String, Object> sorted = new TreeMap<>();
        for (Map.Entry<?, ?> entry : map.entrySet()) {
            sorted.put(String.valueOf(entry.getKey()), entry.getValue());
        }
        out.append('{');
        boolean first = true;
        for (Map.Entry<String, Object> entry : sorted.entrySet()) {
            if (!first) {
                out.append(',');
            }
            first = false;
            writeString(entry.getKey(), out);
            out.append(':');
            write(entry.getValue(), out);
        }
        out.append('}');
    }

    private static void writeArray(Iterator<?> items, StringBuilder out) {
        out.append('[');
        boolean first = true;
        while (items.hasNext()) {
            if (!first) {
                out.append(',');
            }
            first = false;
            write(items.next(), out);
        }
        out.append(']');
    }

    private static void writeString(String text, StringBuilder out) {
        out.append('"');
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            switch (c) {
                case '"':
                    out.append("\\\"");
                    break;
                case '\\':
                    out.append("\\\\");
                    break;
                case '\n':
                    out.append("\\n");
                    break;
                case '\r':
                    out.append("\\r");
                    break;
                case '\t':
                    out.append("\\t");
                    break;
                case '\b':
                    out.append("\\b");
                    break;
                case '\f':
                    out.append("\\f");
                    break;
                default:
                    if (c < 0x20 || c == '\u2028' || c == '\u2029') {
                        out.append(String.format("\\u%04x", (int) c));
                    } else {
                        out.append(c);
                    }
            }
        }
        out.append('"');
    }
}
