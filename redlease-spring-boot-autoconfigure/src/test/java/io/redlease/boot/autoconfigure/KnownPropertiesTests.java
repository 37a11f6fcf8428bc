package io.redlease.boot.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;
import org.springframework.boot.context.properties.source.ConfigurationPropertyName;

/** The known {@code redlease.*} names, read from this module's generated metadata. */
class KnownPropertiesTests {

    private final KnownProperties known =
            KnownProperties.load(KnownPropertiesTests.class.getClassLoader());

    private boolean isKnown(String name) {
        return known.isKnown(ConfigurationPropertyName.of(name));
    }

    private String nearest(String name) {
        return known.nearest(ConfigurationPropertyName.of(name));
    }

    @Test
    void propertiesListElementsMapKeysAndGroupsAreKnown() {
        assertThat(known.isEmpty()).isFalse();
        assertThat(isKnown("redlease.ttl")).isTrue();
        assertThat(isKnown("redlease.name")).isTrue();
        assertThat(isKnown("redlease.lifecycle.listeners[2]")).isTrue();
        assertThat(isKnown("redlease.elections.audit.ttl")).isTrue();
        assertThat(isKnown("redlease.elections.audit.lifecycle.listeners[0]")).isTrue();
        assertThat(isKnown("redlease.partitions.tenants.balance-interval")).isTrue();
        assertThat(isKnown("redlease.discovery.attributes.zone.name")).isTrue();
        assertThat(isKnown("redlease.scheduling")).isTrue();
        assertThat(isKnown("redlease.keep-alive")).isTrue();
    }

    @Test
    void otherNamesAreNotKnown() {
        assertThat(isKnown("redlease.tll")).isFalse();
        assertThat(isKnown("redlease.ttl.seconds")).isFalse();
        assertThat(isKnown("redlease.elections.audit.tll")).isFalse();
        assertThat(isKnown("redlease.lifecycle.listeners.orders")).isFalse();
        assertThat(isKnown("redlease.partitions.tenants.lifecycle.listeners")).isFalse();
    }

    @Test
    void theNearestKnownNameKeepsTheMapKeyOfTheName() {
        assertThat(nearest("redlease.tll")).isEqualTo("redlease.ttl");
        assertThat(nearest("redlease.elections.audit.tll"))
                .isEqualTo("redlease.elections.audit.ttl");
        assertThat(nearest("redlease.partitions.tenants.cuont"))
                .isEqualTo("redlease.partitions.tenants.count");
        assertThat(nearest("redlease.instanceid")).isEqualTo("redlease.instance-id");
    }

    @Test
    void distanceCountsEdits() {
        assertThat(KnownProperties.distance("redlease.tll", "redlease.ttl")).isEqualTo(1);
        assertThat(KnownProperties.distance("", "abc")).isEqualTo(3);
        assertThat(KnownProperties.distance("same", "same")).isZero();
    }
}
