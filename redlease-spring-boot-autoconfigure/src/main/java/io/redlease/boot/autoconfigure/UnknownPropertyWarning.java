package io.redlease.boot.autoconfigure;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import org.springframework.beans.factory.BeanClassLoaderAware;
import org.springframework.beans.factory.config.BeanFactoryPostProcessor;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.boot.context.properties.source.ConfigurationProperty;
import org.springframework.boot.context.properties.source.ConfigurationPropertyName;
import org.springframework.boot.context.properties.source.ConfigurationPropertySource;
import org.springframework.boot.context.properties.source.ConfigurationPropertySources;
import org.springframework.boot.context.properties.source.IterableConfigurationPropertySource;
import org.springframework.boot.origin.Origin;
import org.springframework.context.EnvironmentAware;
import org.springframework.core.env.Environment;
import org.springframework.core.env.PropertySource;

/**
 * Logs one WARN per {@code redlease.*} key that no redlease property has (a typo such as {@code
 * redlease.tll}, which would otherwise be ignored without a word), naming where it was set and the
 * nearest known property. The known properties come from the configuration metadata ({@link
 * KnownProperties}); the keys from every property source of the environment (properties and YAML
 * files, environment variables in their relaxed form, system properties, the command line).
 *
 * <p>It runs once the bean definitions are complete and before any bean is created, so the warning
 * comes before a startup failure that the typo may cause (such as {@code redlease.nmae} leaving the
 * name unset). The names of the project's own build and test tooling ({@code redlease.test.*},
 * {@code redlease.ci.*}, {@code redlease.go}: environment variables such as {@code
 * REDLEASE_TEST_REDIS_URL}, system properties such as {@code redlease.test.timeScale}) are not
 * redlease properties and are left alone.
 */
final class UnknownPropertyWarning
        implements BeanFactoryPostProcessor, EnvironmentAware, BeanClassLoaderAware {

    private static final Log logger = LogFactory.getLog(UnknownPropertyWarning.class);

    private static final ConfigurationPropertyName REDLEASE =
            ConfigurationPropertyName.of("redlease");

    /**
     * Names of the build and test tooling that look like redlease properties: environment variables
     * such as {@code REDLEASE_TEST_REDIS_URL}, system properties such as {@code
     * redlease.test.timeScale}.
     */
    private static final List<ConfigurationPropertyName> TOOLING =
            List.of(
                    ConfigurationPropertyName.of("redlease.test"),
                    ConfigurationPropertyName.of("redlease.ci"),
                    ConfigurationPropertyName.of("redlease.go"));

    private @Nullable Environment environment;

    private ClassLoader classLoader = UnknownPropertyWarning.class.getClassLoader();

    @Override
    public void setEnvironment(Environment environment) {
        this.environment = environment;
    }

    @Override
    public void setBeanClassLoader(ClassLoader classLoader) {
        this.classLoader = classLoader;
    }

    @Override
    public void postProcessBeanFactory(ConfigurableListableBeanFactory beanFactory) {
        Environment environment = this.environment;
        if (environment == null) {
            return;
        }
        Map<ConfigurationPropertyName, ConfigurationProperty> keys = redleaseKeys(environment);
        if (keys.isEmpty()) {
            return;
        }
        KnownProperties known = KnownProperties.load(classLoader);
        if (known.isEmpty()) {
            logger.debug("redlease: no configuration metadata found; redlease.* keys not checked");
            return;
        }
        keys.forEach(
                (name, property) -> {
                    if (!known.isKnown(name)) {
                        String nearest = known.nearest(name);
                        logger.warn(
                                "redlease: unknown property '"
                                        + name
                                        + "' ("
                                        + where(property)
                                        + ") is ignored"
                                        + (nearest != null
                                                ? "; did you mean '" + nearest + "'?"
                                                : ""));
                    }
                });
    }

    /**
     * Returns every {@code redlease.*} key of the environment, once each, with the property where
     * it was first found: the one that takes precedence.
     */
    static Map<ConfigurationPropertyName, ConfigurationProperty> redleaseKeys(
            Environment environment) {
        Map<ConfigurationPropertyName, ConfigurationProperty> keys = new LinkedHashMap<>();
        for (ConfigurationPropertySource source : ConfigurationPropertySources.get(environment)) {
            if (!(source instanceof IterableConfigurationPropertySource iterable)) {
                continue;
            }
            iterable.stream()
                    .filter(REDLEASE::isAncestorOf)
                    .filter(UnknownPropertyWarning::isNotTooling)
                    .filter(name -> !keys.containsKey(name))
                    .forEach(
                            name -> {
                                ConfigurationProperty property =
                                        source.getConfigurationProperty(name);
                                if (property != null) {
                                    keys.put(name, property);
                                }
                            });
        }
        return keys;
    }

    private static boolean isNotTooling(ConfigurationPropertyName name) {
        return TOOLING.stream().noneMatch(tool -> tool.equals(name) || tool.isAncestorOf(name));
    }

    /** Returns where a property was set: its origin, else its property source. */
    static String where(ConfigurationProperty property) {
        Origin origin = property.getOrigin();
        if (origin != null) {
            return "from " + origin;
        }
        ConfigurationPropertySource source = property.getSource();
        return source != null
                        && source.getUnderlyingSource() instanceof PropertySource<?> propertySource
                ? "from property source '" + propertySource.getName() + "'"
                : "from " + source;
    }
}
