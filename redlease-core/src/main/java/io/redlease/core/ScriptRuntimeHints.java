package io.redlease.core;

import org.jspecify.annotations.Nullable;
import org.springframework.aot.hint.RuntimeHints;
import org.springframework.aot.hint.RuntimeHintsRegistrar;

/**
 * Declares the Lua scripts of the wire protocol as resources, so that a GraalVM native image of an
 * application includes them: the scripts are read from the class path when the elector's classes
 * load. Registered for Spring AOT in {@code META-INF/spring/aot.factories}.
 *
 * <p>Every {@code .lua} file in this package is included, by pattern.
 */
final class ScriptRuntimeHints implements RuntimeHintsRegistrar {

    /** The resource pattern of the scripts. */
    static final String SCRIPTS = "io/redlease/core/*.lua";

    @Override
    public void registerHints(RuntimeHints hints, @Nullable ClassLoader classLoader) {
        hints.resources().registerPattern(SCRIPTS);
    }
}
