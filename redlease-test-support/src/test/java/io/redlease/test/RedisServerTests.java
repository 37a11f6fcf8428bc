package io.redlease.test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.opentest4j.TestAbortedException;

@ExtendWith(RedisExtension.class)
class RedisServerTests {

    @Test
    void startedServerAnswersPingOnAFreeLoopbackPort(@Dedicated RedisServer redis) {
        assumeManaged(redis);
        assertThat(redis.command("PING")).isEqualTo("PONG");
        assertThat(redis.kind()).isEqualTo(RedisServer.Kind.MANAGED);
        assertThat(redis.host()).isEqualTo("127.0.0.1");
        assertThat(redis.port()).isPositive().isNotEqualTo(6379);
        assertThat(redis.url()).isEqualTo("redis://127.0.0.1:" + redis.port());
        assertThat(redis.password()).isNull();
        assertThat(redis.dir()).isDirectory();
        assertThat(redis.isRunning()).isTrue();
        assertThat(RedisServer.infoField(redis.info("server"), "process_id"))
                .isEqualTo(Long.toString(redis.pid()));
    }

    @Test
    void startedServerHasNoPersistenceByDefault(@Dedicated RedisServer redis) {
        assumeManaged(redis);
        assertThat(redis.command("CONFIG", "GET", "save")).isEqualTo(List.of("save", ""));
        assertThat(redis.command("CONFIG", "GET", "appendonly"))
                .isEqualTo(List.of("appendonly", "no"));
    }

    @Test
    void stopShutsTheServerDownGracefully(@Dedicated RedisServer redis) throws IOException {
        assumeManaged(redis);
        long pid = redis.pid();
        redis.stop();
        assertThat(redis.isRunning()).isFalse();
        assertThat(log(redis)).contains("ready to exit");
        assertExited(pid);
        redis.stop();
    }

    @Test
    void killEndsTheProcessWithoutAShutdown(@Dedicated RedisServer redis) throws IOException {
        assumeManaged(redis);
        long pid = redis.pid();
        redis.kill();
        assertThat(redis.isRunning()).isFalse();
        assertThat(log(redis)).doesNotContain("ready to exit");
        assertExited(pid);
    }

    @Test
    void pausedServerAnswersOnlyAfterResume(@Dedicated RedisServer redis) {
        assumeManaged(redis);
        try (RespClient probe = redis.client(Duration.ofMillis(200));
                RespClient waiting = redis.client()) {
            redis.pause();
            assertThat(redis.isPaused()).isTrue();
            assertThat(redis.isRunning()).isTrue();
            assertThatThrownBy(() -> probe.command("PING"))
                    .isInstanceOf(UncheckedIOException.class)
                    .hasCauseInstanceOf(SocketTimeoutException.class);
            waiting.send("ECHO", "sent while paused");
            redis.resume();
            assertThat(redis.isPaused()).isFalse();
            assertThat(waiting.readReply()).isEqualTo("sent while paused");
        }
        assertThat(redis.command("PING")).isEqualTo("PONG");
    }

    @Test
    void restartWithAlwaysFsyncKeepsAKeyWrittenBeforeKill(
            @Dedicated(appendOnly = true, appendFsync = "always") RedisServer redis) {
        assumeManaged(redis);
        String key = uniqueKey();
        int port = redis.port();
        long pid = redis.pid();
        redis.command("SET", key, "survives");
        redis.kill();
        redis.restart();
        assertThat(redis.isRunning()).isTrue();
        assertThat(redis.port()).isEqualTo(port);
        assertThat(redis.pid()).isNotEqualTo(pid);
        assertThat(redis.command("GET", key)).isEqualTo("survives");
    }

    @Test
    void restartWithoutPersistenceStopsTheRunningServerAndStartsEmpty(
            @Dedicated RedisServer redis) {
        assumeManaged(redis);
        String key = uniqueKey();
        int port = redis.port();
        long pid = redis.pid();
        redis.command("SET", key, "lost");
        redis.restart();
        assertThat(redis.port()).isEqualTo(port);
        assertThat(redis.pid()).isNotEqualTo(pid);
        assertThat(redis.command("GET", key)).isNull();
    }

    @Test
    void restartResumesAPausedServer(@Dedicated RedisServer redis) {
        assumeManaged(redis);
        redis.pause();
        redis.restart();
        assertThat(redis.isPaused()).isFalse();
        assertThat(redis.command("PING")).isEqualTo("PONG");
    }

    @Test
    void requirePassIsEnforcedAndUsedByTheFixture(
            @Dedicated(requirePass = "s3cret") RedisServer redis) throws IOException {
        assumeManaged(redis);
        assertThat(redis.password()).isEqualTo("s3cret");
        assertThat(redis.url()).isEqualTo("redis://:s3cret@127.0.0.1:" + redis.port());
        try (RespClient anonymous = RespClient.connect(redis.host(), redis.port())) {
            assertThatThrownBy(() -> anonymous.command("GET", "k"))
                    .isInstanceOfSatisfying(
                            RespErrorException.class,
                            ex -> assertThat(ex.code()).isEqualTo("NOAUTH"));
        }
        assertThat(redis.command("PING")).isEqualTo("PONG");
        redis.stop();
        assertThat(log(redis)).contains("ready to exit");
    }

    @Test
    void extraArgsArePassedToRedisServer(
            @Dedicated(extraArgs = {"--maxmemory-policy", "allkeys-lru"}) RedisServer redis) {
        assumeManaged(redis);
        assertThat(redis.command("CONFIG", "GET", "maxmemory-policy"))
                .isEqualTo(List.of("maxmemory-policy", "allkeys-lru"));
    }

    @Test
    void fixedPortIsUsed() {
        int port = freePort();
        try (RedisServer redis = RedisServer.start(RedisServer.Options.defaults().port(port))) {
            assumeManaged(redis);
            assertThat(redis.port()).isEqualTo(port);
            assertThat(redis.command("PING")).isEqualTo("PONG");
        }
    }

    @Test
    void debugSleepBlocksTheWholeServerForAWhile(@Dedicated RedisServer redis) {
        assumeManaged(redis);
        // Long enough that a loaded machine polls well within it.
        redis.debugSleep(Duration.ofSeconds(3));
        await().atMost(Duration.ofMillis(2500))
                .pollInterval(Duration.ofMillis(10))
                .until(() -> !answersWithin(redis, Duration.ofMillis(100)));
        await().atMost(Duration.ofSeconds(5))
                .until(() -> answersWithin(redis, Duration.ofSeconds(1)));
    }

    @Test
    void clientPauseSuspendsOtherClients(@Dedicated RedisServer redis) {
        assumeManaged(redis);
        // Long enough that a loaded machine asks within it.
        redis.clientPause(Duration.ofSeconds(3));
        assertThat(answersWithin(redis, Duration.ofMillis(100))).isFalse();
        await().atMost(Duration.ofSeconds(5))
                .until(() -> answersWithin(redis, Duration.ofSeconds(1)));
    }

    @Test
    void flushAllRemovesEveryKey(@Dedicated RedisServer redis) {
        assumeManaged(redis);
        redis.command("SET", "a", "1");
        redis.command("SET", "b", "2");
        redis.flushAll();
        assertThat(redis.command("DBSIZE")).isEqualTo(0L);
    }

    @Test
    void scriptFlushForgetsLoadedScripts(RedisServer redis) {
        Object sha = redis.command("SCRIPT", "LOAD", "return 'flush-" + UUID.randomUUID() + "'");
        assertThat(redis.command("SCRIPT", "EXISTS", (String) sha)).isEqualTo(List.of(1L));
        redis.scriptFlush();
        assertThatThrownBy(() -> redis.command("EVALSHA", (String) sha, "0"))
                .isInstanceOfSatisfying(
                        RespErrorException.class,
                        ex -> assertThat(ex.code()).isEqualTo("NOSCRIPT"));
    }

    @Test
    void infoReturnsTheRawSection(RedisServer redis) {
        assertThat(redis.info("server")).contains("redis_version:").contains("\r\n");
    }

    @Test
    void closeEndsAPausedServerDeletesItsDirectoryAndIsIdempotent() {
        RedisServer redis = RedisServer.start();
        try {
            assumeManaged(redis);
            Path dir = redis.dir();
            long pid = redis.pid();
            redis.pause();
            redis.close();
            redis.close();
            assertThat(redis.isRunning()).isFalse();
            assertThat(dir).doesNotExist();
            assertExited(pid);
            assertThatThrownBy(redis::restart)
                    .isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("closed");
        } finally {
            redis.close();
        }
    }

    @Test
    void externalServerWorksButHasNoLevers(RedisServer shared) {
        try (RedisServer external = RedisServer.external(shared.url())) {
            assertThat(external.kind()).isEqualTo(RedisServer.Kind.EXTERNAL);
            assertThat(external.isManaged()).isFalse();
            assertThat(external.url()).isEqualTo(shared.url());
            assertThat(external.command("PING")).isEqualTo("PONG");
            for (Runnable lever :
                    List.<Runnable>of(
                            external::stop,
                            external::kill,
                            external::pause,
                            external::resume,
                            external::restart,
                            external::pid,
                            external::dir,
                            external::isRunning)) {
                assertThatThrownBy(lever::run)
                        .isInstanceOf(TestAbortedException.class)
                        .hasMessageContaining("needs a redis-server started by the fixture");
            }
        }
        assertThat(shared.command("PING")).isEqualTo("PONG");
    }

    @Test
    void externalUrlCarriesPasswordUserAndDatabase(
            @Dedicated(requirePass = "pw") RedisServer redis) {
        assumeManaged(redis);
        String key = uniqueKey();
        try (RedisServer external =
                RedisServer.external("redis://:pw@127.0.0.1:" + redis.port() + "/3")) {
            external.command("SET", key, "in db 3");
        }
        assertThat(redis.command("GET", key)).isNull();
        try (RedisServer external =
                RedisServer.external("redis://default:pw@127.0.0.1:" + redis.port() + "/3")) {
            assertThat(external.password()).isEqualTo("pw");
            assertThat(external.command("GET", key)).isEqualTo("in db 3");
        }
    }

    @Test
    void externalUrlMustBeARedisUrl() {
        assertThatThrownBy(() -> RedisServer.external("http://127.0.0.1:1"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("redis://");
        assertThatThrownBy(() -> RedisServer.external("redis://127.0.0.1:1/not-a-db"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("database number");
    }

    @Test
    void externalServerThatDoesNotAnswerFailsWithItsAddress() {
        assertThatThrownBy(() -> RedisServer.external("redis://127.0.0.1:" + CLOSED_PORT))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("127.0.0.1:" + CLOSED_PORT)
                .hasMessageContaining("does not answer PING");
    }

    @Test
    void startPrefersTheUrlOverRedisServerAndDocker(RedisServer shared) {
        AtomicBoolean dockerAsked = new AtomicBoolean();
        try (RedisServer redis =
                RedisServer.start(
                        RedisServer.Options.defaults(),
                        shared.url(),
                        Path.of("/nonexistent/redis-server"),
                        () -> dockerAsked.getAndSet(true))) {
            assertThat(redis.kind()).isEqualTo(RedisServer.Kind.EXTERNAL);
        }
        assertThat(dockerAsked).isFalse();
    }

    @Test
    void startWithOptionsAbortsWhenTheUrlIsSet(RedisServer shared) {
        assertThatThrownBy(
                        () ->
                                RedisServer.start(
                                        RedisServer.Options.defaults().appendOnly(true),
                                        shared.url(),
                                        null,
                                        () -> false))
                .isInstanceOf(TestAbortedException.class)
                .hasMessageContaining(RedisServer.URL_ENV);
    }

    @Test
    void startFailsSayingWhatToInstallWhenNoRedisCanBeHad() {
        AtomicBoolean dockerAsked = new AtomicBoolean();
        assertThatThrownBy(
                        () ->
                                RedisServer.start(
                                        RedisServer.Options.defaults(),
                                        " ",
                                        null,
                                        () -> {
                                            dockerAsked.set(true);
                                            return false;
                                        }))
                .isInstanceOf(IllegalStateException.class)
                .isNotInstanceOf(TestAbortedException.class)
                .hasMessageContaining("apt-get install redis-server")
                .hasMessageContaining("Docker")
                .hasMessageContaining(RedisServer.URL_ENV);
        assertThat(dockerAsked).isTrue();
    }

    @Test
    void startReportsTheLogTailWhenRedisServerRefusesToStart() {
        Path binary = RedisServer.findOnPath(RedisServer.BINARY, System.getenv("PATH"));
        assumeTrue(binary != null, "redis-server is not on the PATH");
        RedisServer.Options options =
                RedisServer.Options.defaults().extraArgs("--no-such-directive", "x");
        assertThatThrownBy(() -> RedisServer.start(options, null, binary, () -> false))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("log tail")
                .hasMessageContaining("no-such-directive");
    }

    @Test
    void optionsRejectInvalidValues() {
        RedisServer.Options defaults = RedisServer.Options.defaults();
        assertThatThrownBy(() -> defaults.appendFsync("sometimes"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("appendFsync must be one of [always, everysec, no] but was sometimes");
        assertThatThrownBy(() -> defaults.port(70000))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("port");
        assertThatThrownBy(() -> defaults.requirePass(""))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("requirePass must not be empty");
        assertThat(defaults.appendOnly(true).toString()).contains("appendOnly=true");
        assertThat(defaults.requirePass("secret").toString()).doesNotContain("secret");
    }

    @Test
    void findOnPathReturnsTheFirstExecutable(@TempDir Path tmp) throws IOException {
        Path first = Files.createDirectories(tmp.resolve("first"));
        Path second = Files.createDirectories(tmp.resolve("second"));
        Files.writeString(first.resolve("tool"), "not executable");
        Path tool = Files.writeString(second.resolve("tool"), "#!/bin/sh\n");
        assumeTrue(tool.toFile().setExecutable(true), "cannot mark files executable");
        String path = first + File.pathSeparator + second;
        assertThat(RedisServer.findOnPath("tool", path)).isEqualTo(tool);
        assertThat(RedisServer.findOnPath("missing", path)).isNull();
        assertThat(RedisServer.findOnPath("tool", null)).isNull();
    }

    /** A privileged port nothing listens on here, so connecting to it is refused. */
    static final int CLOSED_PORT = 1;

    static void assumeManaged(RedisServer redis) {
        assumeTrue(redis.isManaged(), "needs a redis-server started by the fixture");
    }

    static String uniqueKey() {
        return "redlease-test:" + UUID.randomUUID();
    }

    static boolean answersWithin(RedisServer redis, Duration timeout) {
        try (RespClient client = redis.client(timeout)) {
            return "PONG".equals(client.command("PING"));
        } catch (UncheckedIOException ex) {
            return false;
        }
    }

    static int freePort() {
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return socket.getLocalPort();
        } catch (IOException ex) {
            throw new UncheckedIOException(ex);
        }
    }

    private static String log(RedisServer redis) throws IOException {
        return Files.readString(redis.dir().resolve("redis.log"), StandardCharsets.UTF_8);
    }

    private static void assertExited(long pid) {
        assertThat(ProcessHandle.of(pid).map(ProcessHandle::isAlive))
                .isNotEqualTo(Optional.of(true));
    }
}
