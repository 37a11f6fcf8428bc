package io.redlease.core.partition;

import org.jspecify.annotations.Nullable;
import org.springframework.aot.hint.RuntimeHints;
import org.springframework.aot.hint.RuntimeHintsRegistrar;

/**
 * Declares the partitioned election's Lua scripts as resources, so that a GraalVM native image
 * includes them. Registered for Spring AOT in {@code META-INF/spring/aot.factories}.
 */
final class PartitionScriptRuntimeHints implements RuntimeHintsRegistrar {

    /** The resource pattern of the scripts. */
    static final String SCRIPTS = "io/redlease/core/partition/*.lua";

    @Override
    public void registerHints(RuntimeHints hints, @Nullable ClassLoader classLoader) {
        hints.resources().registerPattern(SCRIPTS);
    }
}
