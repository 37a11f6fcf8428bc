package io.redlease.test;

import io.redlease.test.PrometheusServer.Sample;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Reads the samples of an instant-vector reply of Prometheus's query API: a small JSON reader, so
 * that label values holding any character (an election name such as {@code {reports}}, quotes,
 * escapes) come back as Prometheus sent them.
 */
final class QueryReply {

    private final String json;

    private int at;

    private QueryReply(String json) {
        this.json = json;
    }

    /** Returns the samples of {@code data.result} in a reply whose result type is a vector. */
    static List<Sample> samples(String json) {
        Object reply = new QueryReply(json).document();
        if (!(reply instanceof Map<?, ?> root)
                || !(root.get("data") instanceof Map<?, ?> data)
                || !"vector".equals(data.get("resultType"))
                || !(data.get("result") instanceof List<?> result)) {
            throw new IllegalArgumentException("not an instant vector reply: " + json);
        }
        List<Sample> samples = new ArrayList<>();
        for (Object item : result) {
            Map<?, ?> sample = (Map<?, ?>) item;
            Map<String, String> labels = new LinkedHashMap<>();
            ((Map<?, ?>) sample.get("metric"))
                    .forEach((name, value) -> labels.put((String) name, (String) value));
            List<?> value = (List<?>) sample.get("value");
            samples.add(new Sample(labels, number((String) value.get(1))));
        }
        return samples;
    }

    /** Prometheus writes a float as Go does: {@code +Inf}, {@code -Inf}, {@code NaN} or digits. */
    static double number(String text) {
        return switch (text) {
            case "+Inf" -> Double.POSITIVE_INFINITY;
            case "-Inf" -> Double.NEGATIVE_INFINITY;
            default -> Double.parseDouble(text);
        };
    }

    private Object document() {
        Object value = value();
        skipSpace();
        if (at != json.length()) {
            throw error("end of input");
        }
        return value;
    }

    private Object value() {
        skipSpace();
        if (at >= json.length()) {
            throw error("a value");
        }
        char c = json.charAt(at);
        return switch (c) {
            case '{' -> object();
            case '[' -> array();
            case '"' -> string();
            default -> literal();
        };
    }

    private Map<String, Object> object() {
        Map<String, Object> object = new LinkedHashMap<>();
        at++;
        skipSpace();
        if (peek('}')) {
            return object;
        }
        do {
            skipSpace();
            String key = string();
            skipSpace();
            expect(':');
            object.put(key, value());
            skipSpace();
        } while (peek(','));
        expect('}');
        return object;
    }

    private List<Object> array() {
        List<Object> array = new ArrayList<>();
        at++;
        skipSpace();
        if (peek(']')) {
            return array;
        }
        do {
            array.add(value());
            skipSpace();
        } while (peek(','));
        expect(']');
        return array;
    }

    private String string() {
        expect('"');
        StringBuilder text = new StringBuilder();
        while (at < json.length()) {
            char c = json.charAt(at++);
            if (c == '"') {
                return text.toString();
            }
            if (c != '\\') {
                text.append(c);
                continue;
            }
            char escaped = json.charAt(at++);
            switch (escaped) {
                case 'b' -> text.append('\b');
                case 'f' -> text.append('\f');
                case 'n' -> text.append('\n');
                case 'r' -> text.append('\r');
                case 't' -> text.append('\t');
                case 'u' -> {
                    text.append((char) Integer.parseInt(json.substring(at, at + 4), 16));
                    at += 4;
                }
                default -> text.append(escaped);
            }
        }
        throw error("the end of a string");
    }

    /** A number, true, false or null, as its text: the samples need none of them. */
    private String literal() {
        int start = at;
        while (at < json.length() && ",}] \t\r\n".indexOf(json.charAt(at)) < 0) {
            at++;
        }
        if (start == at) {
            throw error("a value");
        }
        return json.substring(start, at);
    }

    private boolean peek(char c) {
        if (at < json.length() && json.charAt(at) == c) {
            at++;
            return true;
        }
        return false;
    }

    private void expect(char c) {
        if (!peek(c)) {
            throw error("'" + c + "'");
        }
    }

    private void skipSpace() {
        while (at < json.length() && Character.isWhitespace(json.charAt(at))) {
            at++;
        }
    }

    private IllegalArgumentException error(String expected) {
        return new IllegalArgumentException(
                "expected " + expected + " at offset " + at + " of Prometheus's reply: " + json);
    }
}
