package io.redlease.boot.autoconfigure;

import java.beans.PropertyDescriptor;
import java.io.IOException;
import java.io.InputStream;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Period;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Enumeration;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.jspecify.annotations.Nullable;
import org.springframework.beans.BeanUtils;
import org.springframework.boot.context.properties.bind.DataObjectPropertyName;
import org.springframework.boot.context.properties.source.ConfigurationPropertyName;
import org.springframework.boot.context.properties.source.ConfigurationPropertyName.Form;
import org.springframework.util.ClassUtils;
import org.springframework.util.unit.DataSize;

/**
 * The {@code redlease.*} property names the application knows, read from the configuration metadata
 * that Spring Boot's configuration processor generates ({@value #METADATA}): each property's name,
 * and for a map property, its keys: any key of a map of plain values (such as {@code
 * redlease.discovery.attributes.<key>}), or any id followed by a property of the map's value type
 * (such as {@code redlease.elections.<id>.ttl}, found from that type's JavaBean properties as
 * Spring Boot binds them). Names are compared in Spring Boot's relaxed form, so a key from a
 * properties or YAML file, an environment variable or the command line matches however it is
 * written.
 */
final class KnownProperties {

    /** The metadata every jar with configuration properties carries. */
    static final String METADATA = "META-INF/spring-configuration-metadata.json";

    private static final String PREFIX = "redlease.";

    private static final String ANY = "*";

    /** How the names below a known name are allowed to continue. */
    private enum Tail {
        /** Nothing may follow. */
        NONE,
        /** List indexes may follow. */
        INDEXES,
        /** Anything may follow: the keys of a map of plain values. */
        ANY
    }

    /**
     * A known name: its elements in uniform form ({@value #ANY} for a map's key) and in dashed
     * form, and what may follow it.
     */
    private record Known(
            List<String> uniform, List<String> dashed, Tail tail, @Nullable Class<?> type) {}

    private final List<Known> known;

    private KnownProperties(List<Known> known) {
        this.known = known;
    }

    /**
     * Reads the {@code redlease.*} properties from every metadata file on the class path.
     *
     * @param classLoader the class loader to read them, and to load map value types, with
     * @return the known properties; none when no metadata names a {@code redlease.*} property
     */
    static KnownProperties load(ClassLoader classLoader) {
        List<Known> known = new ArrayList<>();
        Enumeration<URL> resources;
        try {
            resources = classLoader.getResources(METADATA);
        } catch (IOException ex) {
            return new KnownProperties(List.of());
        }
        while (resources.hasMoreElements()) {
            URL resource = resources.nextElement();
            Object properties;
            try (InputStream in = resource.openStream()) {
                String json = new String(in.readAllBytes(), StandardCharsets.UTF_8);
                properties =
                        MetadataJson.parse(json) instanceof Map<?, ?> root
                                ? root.get("properties")
                                : null;
            } catch (IOException | RuntimeException ex) {
                continue; // a jar's unreadable metadata names none of ours
            }
            if (!(properties instanceof List<?> list)) {
                continue;
            }
            for (Object property : list) {
                if (property instanceof Map<?, ?> map
                        && map.get("name") instanceof String name
                        && name.startsWith(PREFIX)) {
                    Object type = map.get("type");
                    add(known, name, type instanceof String string ? string : "", classLoader);
                }
            }
        }
        return new KnownProperties(List.copyOf(known));
    }

    /** Returns whether any {@code redlease.*} property is known. */
    boolean isEmpty() {
        return known.isEmpty();
    }

    /**
     * Returns whether a name is a known property, a list element of one, a key of a known map, or a
     * group of such names.
     */
    boolean isKnown(ConfigurationPropertyName name) {
        for (Known candidate : known) {
            if (matches(candidate, name)) {
                return true;
            }
        }
        return false;
    }

    /**
     * A property that takes one of an enum's constants: its name in dashed form and the constants a
     * value may name, in dashed form ({@code DEFAULT}, which refers an annotation back to the
     * property, is not one).
     */
    record Choices(String property, List<String> values) {}

    /** Returns the choices of a property that takes one of an enum's constants, or null. */
    @Nullable Choices choices(ConfigurationPropertyName name) {
        for (Known candidate : known) {
            Class<?> type = candidate.type();
            if (candidate.tail() == Tail.NONE
                    && type != null
                    && type.isEnum()
                    && candidate.uniform().size() == name.getNumberOfElements()
                    && matches(candidate, name)) {
                List<String> values = new ArrayList<>();
                for (Object constant : type.getEnumConstants()) {
                    String constantName = ((Enum<?>) constant).name();
                    if (!"DEFAULT".equals(constantName)) {
                        values.add(constantName.toLowerCase(Locale.ROOT).replace('_', '-'));
                    }
                }
                List<String> dashed = new ArrayList<>();
                for (int i = 0; i < candidate.dashed().size(); i++) {
                    dashed.add(
                            ANY.equals(candidate.dashed().get(i))
                                    ? name.getElement(i, Form.DASHED)
                                    : candidate.dashed().get(i));
                }
                return new Choices(String.join(".", dashed), List.copyOf(values));
            }
        }
        return null;
    }

    /** Returns the known property whose name is nearest to the name, in dashed form. */
    @Nullable String nearest(ConfigurationPropertyName name) {
        String target = uniform(name);
        String best = null;
        int bestDistance = Integer.MAX_VALUE;
        for (Known candidate : known) {
            List<String> uniform = new ArrayList<>();
            List<String> dashed = new ArrayList<>();
            for (int i = 0; i < candidate.uniform().size(); i++) {
                if (ANY.equals(candidate.uniform().get(i))) {
                    boolean given = i < name.getNumberOfElements();
                    uniform.add(given ? name.getElement(i, Form.UNIFORM) : "id");
                    dashed.add(given ? name.getElement(i, Form.DASHED) : "<id>");
                } else {
                    uniform.add(candidate.uniform().get(i));
                    dashed.add(candidate.dashed().get(i));
                }
            }
            int size = candidate.uniform().size();
            if (candidate.tail() == Tail.ANY) {
                boolean given = size < name.getNumberOfElements();
                uniform.add(given ? name.getElement(size, Form.UNIFORM) : "key");
                dashed.add(given ? name.getElement(size, Form.DASHED) : "<key>");
            }
            int distance = distance(target, String.join(".", uniform));
            if (distance < bestDistance) {
                bestDistance = distance;
                best = String.join(".", dashed);
            }
        }
        return best;
    }

    private static boolean matches(Known candidate, ConfigurationPropertyName name) {
        List<String> elements = candidate.uniform();
        int count = name.getNumberOfElements();
        for (int i = 0; i < elements.size(); i++) {
            if (i >= count) {
                return true; // a group of known names, such as an empty YAML key
            }
            String element = elements.get(i);
            if (!ANY.equals(element) && !element.equals(name.getElement(i, Form.UNIFORM))) {
                return false;
            }
        }
        if (count == elements.size() || candidate.tail() == Tail.ANY) {
            return true;
        }
        if (candidate.tail() == Tail.INDEXES) {
            for (int i = elements.size(); i < count; i++) {
                if (!name.isNumericIndex(i)) {
                    return false;
                }
            }
            return true;
        }
        return false;
    }

    private static String uniform(ConfigurationPropertyName name) {
        List<String> elements = new ArrayList<>();
        for (int i = 0; i < name.getNumberOfElements(); i++) {
            elements.add(name.getElement(i, Form.UNIFORM));
        }
        return String.join(".", elements);
    }

    /** Adds a property of the metadata, and for a map of objects, its value type's properties. */
    private static void add(List<Known> known, String name, String type, ClassLoader classLoader) {
        ConfigurationPropertyName parsed = ConfigurationPropertyName.ofIfValid(name);
        if (parsed == null) {
            return;
        }
        if (type.startsWith(Map.class.getName() + "<")) {
            Class<?> valueType = valueType(type, classLoader);
            if (valueType == null || isPlain(valueType)) {
                known.add(known(parsed, List.of(), Tail.ANY, null));
            } else {
                addBean(known, parsed, List.of(ANY), valueType, 0);
            }
        } else if (type.startsWith(List.class.getName() + "<")
                || type.startsWith("java.util.Set<")
                || type.startsWith("java.util.Collection<")
                || type.endsWith("[]")) {
            known.add(known(parsed, List.of(), Tail.INDEXES, null));
        } else {
            known.add(known(parsed, List.of(), Tail.NONE, load(type, classLoader)));
        }
    }

    /** Adds the properties of a JavaBean bound below {@code base} and the given elements. */
    private static void addBean(
            List<Known> known,
            ConfigurationPropertyName base,
            List<String> prefix,
            Class<?> type,
            int depth) {
        if (depth > 4) {
            known.add(
                    known(
                            base, prefix, Tail.ANY,
                            null)); // deeper than any of ours: accept the rest
            return;
        }
        for (PropertyDescriptor descriptor : BeanUtils.getPropertyDescriptors(type)) {
            Class<?> propertyType = descriptor.getPropertyType();
            if (propertyType == null || descriptor.getReadMethod() == null) {
                continue;
            }
            List<String> path = new ArrayList<>(prefix);
            path.add(DataObjectPropertyName.toDashedForm(descriptor.getName()));
            boolean writable = descriptor.getWriteMethod() != null;
            if (Map.class.isAssignableFrom(propertyType)) {
                known.add(known(base, path, Tail.ANY, null));
            } else if (Collection.class.isAssignableFrom(propertyType) || propertyType.isArray()) {
                known.add(known(base, path, Tail.INDEXES, null));
            } else if (isPlain(propertyType)) {
                if (writable) {
                    known.add(known(base, path, Tail.NONE, propertyType));
                }
            } else if (propertyType != Class.class) {
                addBean(known, base, path, propertyType, depth + 1);
            }
        }
    }

    private static Known known(
            ConfigurationPropertyName base, List<String> more, Tail tail, @Nullable Class<?> type) {
        List<String> uniform = new ArrayList<>();
        List<String> dashed = new ArrayList<>();
        for (int i = 0; i < base.getNumberOfElements(); i++) {
            uniform.add(base.getElement(i, Form.UNIFORM));
            dashed.add(base.getElement(i, Form.DASHED));
        }
        for (String element : more) {
            if (ANY.equals(element)) {
                uniform.add(ANY);
                dashed.add(ANY);
            } else {
                ConfigurationPropertyName one = ConfigurationPropertyName.of(element);
                uniform.add(one.getElement(0, Form.UNIFORM));
                dashed.add(one.getElement(0, Form.DASHED));
            }
        }
        return new Known(List.copyOf(uniform), List.copyOf(dashed), tail, type);
    }

    /** Returns whether values of the type are bound from one value, not from nested names. */
    private static boolean isPlain(Class<?> type) {
        return BeanUtils.isSimpleValueType(type)
                || type == Duration.class
                || type == Period.class
                || type == DataSize.class
                || type.getName().startsWith("java.");
    }

    /** Loads a type the metadata names, or returns null if it cannot be loaded. */
    private static @Nullable Class<?> load(String type, ClassLoader classLoader) {
        try {
            return type.isEmpty() ? null : ClassUtils.forName(type, classLoader);
        } catch (ClassNotFoundException | LinkageError ex) {
            return null;
        }
    }

    /** Returns the value type of {@code java.util.Map<K,V>}, or null if it cannot be loaded. */
    private static @Nullable Class<?> valueType(String type, ClassLoader classLoader) {
        String arguments = type.substring(type.indexOf('<') + 1, type.lastIndexOf('>'));
        int depth = 0;
        for (int i = 0; i < arguments.length(); i++) {
            char c = arguments.charAt(i);
            if (c == '<') {
                depth++;
            } else if (c == '>') {
                depth--;
            } else if (c == ',' && depth == 0) {
                String value = arguments.substring(i + 1).trim();
                int generic = value.indexOf('<');
                String raw = generic >= 0 ? value.substring(0, generic) : value;
                try {
                    return ClassUtils.forName(raw, classLoader);
                } catch (ClassNotFoundException | LinkageError ex) {
                    return null;
                }
            }
        }
        return null;
    }

    /** Returns the Levenshtein distance of two strings. */
    static int distance(String a, String b) {
        int[] previous = new int[b.length() + 1];
        int[] current = new int[b.length() + 1];
        for (int j = 0; j <= b.length(); j++) {
            previous[j] = j;
        }
        for (int i = 1; i <= a.length(); i++) {
            current[0] = i;
            for (int j = 1; j <= b.length(); j++) {
                int substitution = previous[j - 1] + (a.charAt(i - 1) == b.charAt(j - 1) ? 0 : 1);
                current[j] = Math.min(substitution, Math.min(previous[j], current[j - 1]) + 1);
            }
            int[] swap = previous;
            previous = current;
            current = swap;
        }
        return previous[b.length()];
    }
}
