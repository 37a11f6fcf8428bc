package io.redlease.docs.check;

import static org.assertj.core.api.Assertions.assertThat;

import io.redlease.docs.check.ConfigurationMetadata.Property;
import io.redlease.docs.check.Markdown.Row;
import java.beans.PropertyDescriptor;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.springframework.beans.BeanUtils;

/**
 * The documented configuration properties are the real ones, with their real defaults: every
 * property table of README.md and docs/ (first column "Property", a "Default" column) against the
 * generated configuration metadata, and the metadata against the defaults the classes hold.
 *
 * <p>A Default cell claims a default when it starts with a code span (that value) or with the word
 * "empty" (the empty string); any other text (prose such as "TTL/3" or "inherited") claims that the
 * metadata has no default.
 */
class PropertiesDocumentationTests {

    private static final String PROPERTIES_PAGE = "docs/configuration-properties.md";

    private static final Pattern CODE_SPAN = Pattern.compile("`([^`]+)`");

    private static final Pattern BRACES = Pattern.compile("\\{([^{}]*,[^{}]*)\\}");

    private final Map<String, Property> metadata = ConfigurationMetadata.redleaseProperties();

    @Test
    void theMetadataHasTheDefaultsTheClassesHold() {
        List<String> problems = new ArrayList<>();
        for (Property property : metadata.values()) {
            String runtime = ConfigurationMetadata.runtimeDefault(property);
            if (runtime != null && !ConfigurationMetadata.same(runtime, property.defaultValue())) {
                problems.add(
                        property.name()
                                + ": defaults to "
                                + runtime
                                + " but the metadata says "
                                + property.defaultValue()
                                + " (initialize the field with a literal the annotation processor"
                                + " can read)");
            }
        }
        assertThat(metadata).as("redlease properties in the metadata").isNotEmpty();
        assertThat(problems).isEmpty();
    }

    @Test
    void everyDocumentedPropertyExistsWithTheDocumentedDefault() {
        List<String> problems = new ArrayList<>();
        int checked = 0;
        for (Path file : Repository.guide()) {
            Markdown markdown = new Markdown(file);
            for (Row row : markdown.tableRows("Property", "Default")) {
                for (String name : names(row.key())) {
                    checked++;
                    String where = Repository.display(file) + ":" + row.line() + ": " + name;
                    String problem = check(name, claimedDefault(row.value()));
                    if (problem != null) {
                        problems.add(where + ": " + problem);
                    }
                }
            }
        }
        assertThat(problems).as("documented properties that disagree with the metadata").isEmpty();
        assertThat(checked).as("documented properties checked").isPositive();
    }

    @Test
    void thePropertiesPageDocumentsEveryProperty() {
        Markdown page = new Markdown(Repository.root().resolve(PROPERTIES_PAGE));
        Set<String> documented = new TreeSet<>();
        for (Row row : page.tableRows("Property", "Default")) {
            documented.addAll(names(row.key()));
        }
        Set<String> missing = new TreeSet<>();
        for (Property property : metadata.values()) {
            if (!property.isMap()) {
                if (!documented.contains(property.name())) {
                    missing.add(property.name());
                }
                continue;
            }
            Class<?> values = property.mapValueType();
            if (BeanUtils.isSimpleValueType(values)) {
                if (documented.stream()
                        .noneMatch(name -> name.startsWith(property.name() + ".<"))) {
                    missing.add(property.name() + ".<key>");
                }
                continue;
            }
            for (String path : beanPaths(values, "")) {
                String kebab = kebab(path);
                if (documented.stream()
                        .noneMatch(
                                name ->
                                        name.startsWith(property.name() + ".<")
                                                && name.endsWith(">." + kebab))) {
                    missing.add(property.name() + ".<id>." + kebab);
                }
            }
        }
        assertThat(missing).as("properties missing from " + PROPERTIES_PAGE).isEmpty();
    }

    /** Returns null when the name exists and the claim matches, else the problem. */
    private String check(String name, Claim claim) {
        Property exact = metadata.get(name);
        if (exact != null) {
            return compare(claim, exact.defaultValue(), "the metadata");
        }
        for (Property map : metadata.values()) {
            if (!map.isMap() || !name.startsWith(map.name() + ".<")) {
                continue;
            }
            int close = name.indexOf('>', map.name().length());
            String rest = close + 1 < name.length() ? name.substring(close + 2) : "";
            Class<?> values = map.mapValueType();
            if (rest.isEmpty()) {
                return claim.value() == null ? null : "a map entry has no default";
            }
            Object instance = BeanUtils.instantiateClass(values);
            String path = camelPath(rest);
            try {
                return compare(
                        claim,
                        ConfigurationMetadata.valueOf(instance, path),
                        values.getSimpleName());
            } catch (IllegalArgumentException ex) {
                return "no such property: " + values.getName() + " has no " + path;
            }
        }
        return "no such property in the configuration metadata";
    }

    private static String compare(Claim claim, String actual, String source) {
        if (!claim.claims()) {
            return actual == null
                    ? null
                    : "documented without a default, " + source + " has " + quote(actual);
        }
        if (actual == null) {
            return "documented default " + quote(claim.value()) + ", " + source + " has none";
        }
        return ConfigurationMetadata.same(claim.value(), actual)
                ? null
                : "documented default "
                        + quote(claim.value())
                        + ", "
                        + source
                        + " has "
                        + quote(actual);
    }

    private static String quote(String value) {
        return "'" + value + "'";
    }

    /** What a Default cell claims. */
    record Claim(boolean claims, String value) {}

    static Claim claimedDefault(String cell) {
        if (cell.startsWith("`")) {
            Matcher matcher = CODE_SPAN.matcher(cell);
            return new Claim(true, matcher.find() ? matcher.group(1) : "");
        }
        if (cell.toLowerCase().startsWith("empty")) {
            return new Claim(true, "");
        }
        return new Claim(false, null);
    }

    /** The property names of a first cell: its code spans, with {a,b} lists expanded. */
    static List<String> names(String cell) {
        List<String> names = new ArrayList<>();
        Matcher span = CODE_SPAN.matcher(cell);
        while (span.find()) {
            expand(span.group(1).strip(), names);
        }
        return names;
    }

    private static void expand(String name, List<String> into) {
        Matcher braces = BRACES.matcher(name);
        if (!braces.find()) {
            into.add(name);
            return;
        }
        for (String choice : braces.group(1).split(",")) {
            expand(
                    name.substring(0, braces.start())
                            + choice.strip()
                            + name.substring(braces.end()),
                    into);
        }
    }

    /** The readable properties of a bean class, nested redlease types followed, dotted. */
    private static List<String> beanPaths(Class<?> type, String prefix) {
        List<String> paths = new ArrayList<>();
        for (PropertyDescriptor descriptor : BeanUtils.getPropertyDescriptors(type)) {
            if (descriptor.getReadMethod() == null || descriptor.getName().equals("class")) {
                continue;
            }
            Class<?> propertyType = descriptor.getPropertyType();
            String path = prefix + descriptor.getName();
            if (propertyType.getName().startsWith("io.redlease.") && !propertyType.isEnum()) {
                paths.addAll(beanPaths(propertyType, path + "."));
            } else {
                paths.add(path);
            }
        }
        return paths;
    }

    private static String camelPath(String kebabPath) {
        List<String> parts = new ArrayList<>();
        for (String part : kebabPath.split("\\.")) {
            parts.add(ConfigurationMetadata.camel(part));
        }
        return String.join(".", parts);
    }

    private static String kebab(String camelPath) {
        return camelPath.replaceAll("([a-z0-9])([A-Z])", "$1-$2").toLowerCase();
    }
}
