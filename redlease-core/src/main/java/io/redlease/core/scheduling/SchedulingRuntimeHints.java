package io.redlease.core.scheduling;

import org.jspecify.annotations.Nullable;
import org.springframework.aot.hint.MemberCategory;
import org.springframework.aot.hint.RuntimeHints;
import org.springframework.aot.hint.RuntimeHintsRegistrar;
import org.springframework.aot.hint.TypeReference;

/**
 * Lets a GraalVM native image read the fields through which once-per-slot scheduling recognises a
 * scheduled method's task ({@link ScheduledMethods}). Registered for Spring AOT in {@code
 * META-INF/spring/aot.factories}.
 */
final class SchedulingRuntimeHints implements RuntimeHintsRegistrar {

    @Override
    public void registerHints(RuntimeHints hints, @Nullable ClassLoader classLoader) {
        for (String type : new String[] {ScheduledMethods.WRAPPER, ScheduledMethods.SUBSCRIBING}) {
            hints.reflection()
                    .registerType(TypeReference.of(type), MemberCategory.ACCESS_DECLARED_FIELDS);
        }
    }
}
