package io.redlease.test;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.Test;

/**
 * The order in which a fixture picks its server. The container path itself needs a Docker engine,
 * which the machines these tests run on may not have; this checks when it is taken.
 */
class ServerKindTests {

    private final AtomicInteger dockerAsked = new AtomicInteger();

    private BooleanSupplier docker(boolean available) {
        return () -> {
            dockerAsked.incrementAndGet();
            return available;
        };
    }

    @Test
    void theEnvironmentVariableWinsOverBinariesAndDocker() {
        assertThat(ServerKind.choose("postgresql://db/test", true, docker(true)))
                .isEqualTo(ServerKind.EXTERNAL);
        assertThat(dockerAsked).hasValue(0);
    }

    @Test
    void aBlankVariableCountsAsUnset() {
        assertThat(ServerKind.choose("  ", true, docker(true))).isEqualTo(ServerKind.MANAGED);
    }

    @Test
    void installedBinariesWinOverDockerWhichIsNotEvenAsked() {
        assertThat(ServerKind.choose(null, true, docker(true))).isEqualTo(ServerKind.MANAGED);
        assertThat(dockerAsked).hasValue(0);
    }

    @Test
    void withoutBinariesDockerGivesAContainer() {
        assertThat(ServerKind.choose(null, false, docker(true))).isEqualTo(ServerKind.CONTAINER);
    }

    @Test
    void withNothingThereIsNoServer() {
        assertThat(ServerKind.choose(null, false, docker(false))).isNull();
    }
}
