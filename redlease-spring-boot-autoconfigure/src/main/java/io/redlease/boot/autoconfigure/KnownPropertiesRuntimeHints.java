package io.redlease.boot.autoconfigure;

import org.jspecify.annotations.Nullable;
import org.springframework.aot.hint.MemberCategory;
import org.springframework.aot.hint.RuntimeHints;
import org.springframework.aot.hint.RuntimeHintsRegistrar;

/**
 * Declares what {@link KnownProperties} reads at startup, so that a GraalVM native image keeps it:
 * the configuration metadata files, and the JavaBean properties of the map value types it lists the
 * keys of. Registered for Spring AOT in {@code META-INF/spring/aot.factories}.
 */
final class KnownPropertiesRuntimeHints implements RuntimeHintsRegistrar {

    @Override
    public void registerHints(RuntimeHints hints, @Nullable ClassLoader classLoader) {
        hints.resources().registerPattern(KnownProperties.METADATA);
        for (Class<?> type :
                new Class<?>[] {
                    RedleaseProperties.Election.class,
                    RedleaseProperties.LeaderLifecycle.class,
                    RedleasePartitionProperties.class
                }) {
            hints.reflection().registerType(type, MemberCategory.INVOKE_PUBLIC_METHODS);
        }
    }
}
