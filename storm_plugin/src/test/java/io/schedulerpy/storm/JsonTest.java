package io.schedulerpy.storm;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

class JsonTest {
    @Test
    void scalars() {
        assertEquals("null", Json.encode(null));
        assertEquals("true", Json.encode(true));
        assertEquals("42", Json.encode(42));
        assertEquals("42", Json.encode(42L));
        assertEquals("2.0", Json.encode(2.0));
        assertEquals("0.25", Json.encode(0.25));
        assertEquals("null", Json.encode(Double.NaN));
        assertEquals("\"td\"", Json.encode("td"));
    }

    @Test
    void escapes() {
        assertEquals("\"a\\\"b\\\\c\\nd\\te\\u0001\"", Json.encode("a\"b\\c\nd\te\u0001"));
        assertEquals("\"caf\u00e9\"", Json.encode("caf\u00e9"));
    }

    @Test
    void collectionsAndSortedMaps() {
        Map<String, Object> map = new LinkedHashMap<>();
        map.put("z", Arrays.asList(1, "two", null));
        map.put("a", false);
        assertEquals("{\"a\":false,\"z\":[1,\"two\",null]}", Json.encode(map));
    }
}
