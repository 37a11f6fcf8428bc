package io.redlease.boot.autoconfigure;

import io.redlease.core.Elections;
import io.redlease.core.Preference;
import java.util.function.BooleanSupplier;
import org.jspecify.annotations.Nullable;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.availability.ApplicationAvailability;
import org.springframework.boot.availability.ReadinessState;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;
import org.springframework.context.annotation.Bean;
import org.springframework.core.Ordered;
import org.springframework.core.annotation.Order;

/**
 * Auto-configuration of preferred leadership, active once {@code redlease.preference.priority} or
 * {@code redlease.preference.version} is set: every election gets this instance's {@link
 * Preference}, with Boot's readiness state ({@link ReadinessState#ACCEPTING_TRAFFIC}) as the
 * instance's readiness, and its followers poll at their acquire interval (no lease-aware
 * scheduling), so a candidate's heartbeat stays fresh and a crashed candidate stops counting one
 * time to live after its last heartbeat.
 */
@AutoConfiguration(before = RedleaseAutoConfiguration.class)
@ConditionalOnBooleanProperty(name = "redlease.enabled", matchIfMissing = true)
@EnableConfigurationProperties(RedleasePreferenceProperties.class)
public final class LeaderPreferenceAutoConfiguration {

    @Bean
    @Order(Ordered.LOWEST_PRECEDENCE)
    ElectorCustomizer redleasePreferenceCustomizer(RedleasePreferenceProperties properties) {
        Preference preference = preference(properties);
        return (id, builder) -> {
            if (preference != null) {
                builder.leaseAwareScheduling(false);
            }
        };
    }

    @Bean
    SmartInitializingSingleton redleasePreferenceApplier(
            RedleasePreferenceProperties properties,
            ObjectProvider<Elections> elections,
            ObjectProvider<ApplicationAvailability> availability) {
        Preference preference = preference(properties);
        return () -> {
            if (preference == null) {
                return;
            }
            ApplicationAvailability state = availability.getIfAvailable();
            BooleanSupplier ready =
                    state == null
                            ? () -> true
                            : () -> state.getReadinessState() == ReadinessState.ACCEPTING_TRAFFIC;
            elections.ifAvailable(
                    found ->
                            found.asMap()
                                    .values()
                                    .forEach(elector -> elector.prefer(preference, ready)));
        };
    }

    /** Returns the configured preference, or null; a version with no letter or digit fails. */
    static @Nullable Preference preference(RedleasePreferenceProperties properties) {
        if (!properties.isSet()) {
            return null;
        }
        String version = properties.getVersion();
        if (version != null && version.isBlank()) {
            version = null;
        }
        try {
            return Preference.of(
                    properties.getPriority() == null ? 0 : properties.getPriority(), version);
        } catch (IllegalArgumentException ex) {
            throw new InvalidConfigurationPropertyValueException(
                    "redlease.preference.version",
                    version,
                    "a version must contain a letter or digit to be compared. Set it to the"
                            + " build's version, such as 2.3.1, or remove it.");
        }
    }
}
