package io.redlease.test;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class RedisServersTests {

    @Test
    void sharedIsOneServerForTheWholeJvm() {
        RedisServer shared = RedisServers.shared();
        assertThat(RedisServers.shared()).isSameAs(shared);
        assertThat(shared.command("PING")).isEqualTo("PONG");
        assertThat(shared.url()).startsWith("redis://");
    }
}
