package io.redlease.test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class PortsTests {

    @Test
    void freeLoopbackPortIsNeverAReservedOne() {
        for (int i = 0; i < 20; i++) {
            assertThat(Ports.freeLoopbackPort()).isPositive().isNotIn(Ports.RESERVED.keySet());
        }
    }

    @ParameterizedTest
    @ValueSource(ints = {5432, 3306, 6379, 5672, 15672, 25672, 4369})
    void theWellKnownPortsOfTheMachinesOwnServersAreRefused(int port) {
        assertThatIllegalStateException()
                .isThrownBy(() -> Ports.requireNotReserved(port, "a test server"))
                .withMessageStartingWith("Refusing to use port " + port + " for a test server")
                .withMessageContaining("which the tests never use");
    }

    @Test
    void otherPortsPass() {
        assertThat(Ports.requireNotReserved(45432, "a test server")).isEqualTo(45432);
    }

    @Test
    void redisRefusesAFixedReservedPort() {
        assertThatIllegalStateException()
                .isThrownBy(() -> RedisServer.start(RedisServer.Options.defaults().port(6379)))
                .withMessageStartingWith("Refusing to use port 6379 for redis-server");
    }
}
