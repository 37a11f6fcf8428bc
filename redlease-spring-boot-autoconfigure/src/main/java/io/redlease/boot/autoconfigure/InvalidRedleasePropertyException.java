package io.redlease.boot.autoconfigure;

import org.jspecify.annotations.Nullable;

/**
 * A required {@code redlease.*} property is missing, or a property key breaks a rule; reported by a
 * failure analyzer at startup. A value that breaks a rule is reported with Boot's {@code
 * InvalidConfigurationPropertyValueException} instead, whose analysis also says where it was set.
 */
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
