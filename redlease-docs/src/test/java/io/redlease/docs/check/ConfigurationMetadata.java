package io.redlease.docs.check;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Collection;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import org.springframework.beans.BeanWrapper;
import org.springframework.beans.BeanWrapperImpl;
import org.springframework.boot.convert.DurationStyle;
import org.springframework.boot.json.JsonParserFactory;

/** redlease's configuration properties as the generated metadata on the class path has them. */
final class ConfigurationMetadata {

    private static final String RESOURCE = "META-INF/spring-configuration-metadata.json";

    /** A property: its name, type, the class that declares it, and its default if any. */
    record Property(String name, String type, String sourceType, String defaultValue) {

        /** Returns whether its type is a map, whose keys are part of the property names. */
        boolean isMap() {
            return type.startsWith("java.util.Map<");
        }

        /** Returns the class of a map's values. */
        Class<?> mapValueType() {
            String values = type.substring(type.indexOf(',') + 1, type.length() - 1).strip();
            return load(values);
        }
    }

    private ConfigurationMetadata() {}

    /** Returns redlease's properties, by name, from every metadata file on the class path. */
    static Map<String, Property> redleaseProperties() {
        Map<String, Property> properties = new TreeMap<>();
        try {
            for (URL url : Collections.list(loader().getResources(RESOURCE))) {
                String json;
                try (InputStream in = url.openStream()) {
                    json = new String(in.readAllBytes(), StandardCharsets.UTF_8);
                }
                Object entries = JsonParserFactory.getJsonParser().parseMap(json).get("properties");
                for (Object entry : (List<?>) Objects.requireNonNullElse(entries, List.of())) {
                    Map<?, ?> property = (Map<?, ?>) entry;
                    String name = (String) property.get("name");
                    if (name.startsWith("redlease.")
                            || name.startsWith("management.endpoint.redlease.")) {
                        Object value = property.get("defaultValue");
                        properties.put(
                                name,
                                new Property(
                                        name,
                                        String.valueOf(property.get("type")),
                                        (String) property.get("sourceType"),
                                        value == null ? null : String.valueOf(value)));
                    }
                }
            }
        } catch (IOException ex) {
            throw new UncheckedIOException(ex);
        }
        return properties;
    }

    /**
     * Returns the default a fresh instance of the declaring class holds, as text: null when it is
     * null or an empty collection, or when the class has no constructor without arguments.
     */
    static String runtimeDefault(Property property) {
        if (property.sourceType() == null) {
            return null;
        }
        Class<?> type = load(property.sourceType());
        Object instance;
        try {
            var constructor = type.getDeclaredConstructor();
            constructor.setAccessible(true);
            instance = constructor.newInstance();
        } catch (NoSuchMethodException ex) {
            return null; // not a properties class (an endpoint, say): nothing to compare
        } catch (ReflectiveOperationException ex) {
            throw new IllegalStateException("Cannot create " + type.getName(), ex);
        }
        String last = property.name().substring(property.name().lastIndexOf('.') + 1);
        return valueOf(instance, camel(last));
    }

    /** Returns a bean's property value as text, null when null or an empty collection. */
    static String valueOf(Object bean, String propertyPath) {
        BeanWrapper wrapper = new BeanWrapperImpl(bean);
        if (!wrapper.isReadableProperty(propertyPath)) {
            throw new IllegalArgumentException(
                    "no property " + propertyPath + " on " + bean.getClass());
        }
        Object value = wrapper.getPropertyValue(propertyPath);
        if (value == null
                || (value instanceof Collection<?> c && c.isEmpty())
                || (value instanceof Map<?, ?> m && m.isEmpty())) {
            return null;
        }
        if (value instanceof Duration duration) {
            return DurationStyle.SIMPLE.print(duration);
        }
        return value.toString();
    }

    /** Returns whether two defaults are the same: durations by value, other text loosely. */
    static boolean same(String a, String b) {
        if (a == null || b == null) {
            return a == b;
        }
        try {
            return DurationStyle.detectAndParse(a).equals(DurationStyle.detectAndParse(b));
        } catch (IllegalArgumentException notDurations) {
            return loose(a).equals(loose(b));
        }
    }

    private static String loose(String text) {
        return text.toLowerCase(Locale.ROOT).replace('_', '-');
    }

    /** {@code renew-interval} to {@code renewInterval}. */
    static String camel(String kebab) {
        StringBuilder camel = new StringBuilder();
        boolean upper = false;
        for (char c : kebab.toCharArray()) {
            if (c == '-') {
                upper = true;
            } else {
                camel.append(upper ? Character.toUpperCase(c) : c);
                upper = false;
            }
        }
        return camel.toString();
    }

    static Class<?> load(String name) {
        try {
            return Class.forName(name, false, loader());
        } catch (ClassNotFoundException ex) {
            throw new IllegalStateException("No class " + name + " for the metadata", ex);
        }
    }

    private static ClassLoader loader() {
        return ConfigurationMetadata.class.getClassLoader();
    }
}
