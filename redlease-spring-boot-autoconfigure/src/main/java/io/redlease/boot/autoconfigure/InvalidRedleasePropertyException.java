package io.redlease.boot.autoconfigure;

import org.jspecify.annotations.Nullable;

/** A {@code redlease.*} property that breaks a rule; reported by a failure analyzer at startup. */
class InvalidRedleasePropertyException extends IllegalStateException {

    private static final long serialVersionUID = 1L;

    private final String property;

    private final @Nullable Object value;

    private final String rule;

    private final String fix;

    InvalidRedleasePropertyException(
            String property,
            @Nullable Object value,
            String rule,
            String fix,
            @Nullable Throwable cause) {
        super("Invalid " + property + " (" + value + "): " + rule, cause);
        this.property = property;
        this.value = value;
        this.rule = rule;
        this.fix = fix;
    }

    String property() {
        return property;
    }

    @Nullable Object value() {
        return value;
    }

    String rule() {
        return rule;
    }

    String fix() {
        return fix;
    }
}
