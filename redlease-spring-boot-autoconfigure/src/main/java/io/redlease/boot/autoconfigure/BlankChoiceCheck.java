package io.redlease.boot.autoconfigure;

import java.util.Map;
import org.jspecify.annotations.Nullable;
import org.springframework.beans.factory.BeanClassLoaderAware;
import org.springframework.beans.factory.config.BeanFactoryPostProcessor;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.boot.context.properties.bind.BindException;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.source.ConfigurationProperty;
import org.springframework.boot.context.properties.source.ConfigurationPropertyName;
import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;
import org.springframework.context.EnvironmentAware;
import org.springframework.core.Ordered;
import org.springframework.core.PriorityOrdered;
import org.springframework.core.env.Environment;

/**
 * Fails the startup when a {@code redlease.*} property that takes one of a set of values (such as
 * {@code redlease.shutdown-order}) is set blank: Spring Boot binds a blank enum value as no value,
 * so the default would apply without a word, whatever the blank line meant. The failure names the
 * property, where it was set and the values it takes. Nothing is checked while redlease is switched
 * off ({@code redlease.enabled} other than true, as its auto-configuration reads it).
 */
final class BlankChoiceCheck
        implements BeanFactoryPostProcessor,
                PriorityOrdered,
                EnvironmentAware,
                BeanClassLoaderAware {

    private @Nullable Environment environment;

    private ClassLoader classLoader = BlankChoiceCheck.class.getClassLoader();

    @Override
    public void setEnvironment(Environment environment) {
        this.environment = environment;
    }

    @Override
    public void setBeanClassLoader(ClassLoader classLoader) {
        this.classLoader = classLoader;
    }

    /**
     * Runs first: a value that is not what the user meant is worth knowing before anything else.
     */
    @Override
    public int getOrder() {
        return Ordered.HIGHEST_PRECEDENCE;
    }

    @Override
    public void postProcessBeanFactory(ConfigurableListableBeanFactory beanFactory) {
        Environment environment = this.environment;
        if (environment == null
                || !Binder.get(environment)
                        .bind("redlease.enabled", String.class)
                        .map("true"::equalsIgnoreCase)
                        .orElse(true)) {
            return;
        }
        Map<ConfigurationPropertyName, ConfigurationProperty> keys =
                UnknownPropertyWarning.redleaseKeys(environment);
        if (keys.isEmpty()) {
            return;
        }
        Binder binder = Binder.get(environment);
        KnownProperties known = KnownProperties.load(classLoader);
        for (ConfigurationPropertyName name : keys.keySet()) {
            KnownProperties.Choices choices = known.choices(name);
            if (choices == null) {
                continue;
            }
            // The value that binds: placeholders resolved, every source in its precedence.
            String bound;
            try {
                bound = binder.bind(name, Bindable.of(String.class)).orElse(null);
            } catch (BindException ex) {
                continue; // a placeholder that cannot be resolved: Boot's binding reports it
            }
            if (bound != null && bound.isBlank()) {
                throw new InvalidConfigurationPropertyValueException(
                        choices.property(),
                        bound,
                        "It is blank, and a blank value would be taken as the default; set one of "
                                + String.join(", ", choices.values())
                                + ", or remove the property for its default.");
            }
        }
    }
}
