package io.redlease.samples.demo;

import java.util.LinkedHashMap;
import java.util.Map;

/** One line of an instance's event log: {@code DEMO|<epoch ms>|<node>|<kind>|k=v k=v}. */
record Event(long time, String node, String kind, Map<String, String> details) {

    static Event parse(String line) {
        String[] parts = line.split("\\|", -1);
        if (parts.length < 5) {
            return null;
        }
        Map<String, String> details = new LinkedHashMap<>();
        for (String pair : parts[4].trim().split(" ")) {
            int eq = pair.indexOf('=');
            if (eq > 0) {
                details.put(pair.substring(0, eq), pair.substring(eq + 1));
            }
        }
        return new Event(Long.parseLong(parts[1]), parts[2], parts[3], details);
    }

    String detail(String key) {
        return details.getOrDefault(key, "?");
    }

    /** Returns a numeric detail, such as {@code partition} or {@code token}. */
    long number(String key) {
        return Long.parseLong(details.get(key));
    }
}
