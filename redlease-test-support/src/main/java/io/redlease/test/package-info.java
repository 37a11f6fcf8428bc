/**
 * JUnit 5 fixtures that hand tests real Redis servers.
 *
 * <p>{@link io.redlease.test.RedisExtension} injects a {@link io.redlease.test.RedisServer}: the
 * server named by {@code REDLEASE_TEST_REDIS_URL} if set, else a {@code redis-server} process
 * started on a free loopback port, else a Testcontainers {@code redis:7} container when Docker is
 * available; otherwise the test fails with a message saying what to install. Fault tests get levers
 * (stop, kill, pause, resume, restart) on servers the fixture started itself, and {@link
 * io.redlease.test.TcpProxy} and {@link io.redlease.test.BlackholeServer} for network faults.
 */
@NullMarked
package io.redlease.test;

import org.jspecify.annotations.NullMarked;
