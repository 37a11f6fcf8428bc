/**
 * JUnit 5 fixtures that hand tests real servers, started by the tests themselves on free loopback
 * ports (never 6379, 5432, 3306 or 5672, whatever runs there).
 *
 * <p>{@link io.redlease.test.RedisExtension} injects a {@link io.redlease.test.RedisServer}: the
 * server named by {@code REDLEASE_TEST_REDIS_URL} if set, else a {@code redis-server} process
 * started on a free loopback port, else a Testcontainers {@code redis:7} container when Docker is
 * available; otherwise the test fails with a message saying what to install. Fault tests get levers
 * (stop, kill, pause, resume, restart) on servers the fixture started itself, and {@link
 * io.redlease.test.TcpProxy} and {@link io.redlease.test.BlackholeServer} for network faults.
 *
 * <p>{@link io.redlease.test.PostgresServer#shared()}, {@link
 * io.redlease.test.MariaDbServer#shared()} and {@link io.redlease.test.RabbitMqServer#shared()}
 * give the test JVM one PostgreSQL, MariaDB and RabbitMQ each, in the same order: the server named
 * by {@code REDLEASE_TEST_POSTGRES_URL}, {@code REDLEASE_TEST_MARIADB_URL} or {@code
 * REDLEASE_TEST_RABBITMQ_URL}; else one started from the installed binaries (as an unprivileged
 * user when the tests run as root); else a container; else a {@link
 * io.redlease.test.MissingServerException} whose one-line message names the package to install.
 * {@link io.redlease.test.ServersExtension} injects them as test parameters. Every process a
 * fixture starts ends with the JVM, also when the JVM is killed.
 */
@NullMarked
package io.redlease.test;

import org.jspecify.annotations.NullMarked;
