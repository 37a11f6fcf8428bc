package io.redlease.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

import io.redlease.test.RedisExtension;
import io.redlease.test.RedisServer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.dao.DataAccessException;
import org.springframework.data.redis.core.StringRedisTemplate;

/**
 * The acquire, renew and release scripts, one round trip at a time (Go: fence_test acquire tests,
 * integration_test, TestAcquire_SetsMillisecondLockTTL).
 */
@ExtendWith(RedisExtension.class)
class ElectorRoundTripTests {

    private final Templates templates = new Templates();

    private RedisServer server;

    private StringRedisTemplate redis;

    private String name;

    @BeforeEach
    void setUp(RedisServer server, TestInfo info) {
        this.server = server;
        this.redis = templates.on(server);
        this.name = Names.unique(info);
    }

    @AfterEach
    void tearDown() {
        templates.close();
    }

    private Elector elector(String id) {
        return elector(id, Duration.ofSeconds(2));
    }

    private Elector elector(String id, Duration ttl) {
        return new Elector(
                redis,
                ElectorConfig.builder(name)
                        .ttl(ttl)
                        .renewInterval(Duration.ofMillis(50))
                        .acquireInterval(Duration.ofMillis(50))
                        .instanceId(id)
                        .build());
    }

    private String get(String key) {
        return redis.opsForValue().get(key);
    }

    @Test
    void acquireContendRenewAndRelease() {
        Elector a = elector("a");
        Elector b = elector("b");

        assertThat(Protocols.acquire(a).token()).isEqualTo(1);
        assertThat(get(name + ":fence:applied")).isEqualTo("1");
        assertThat(get(name + ":leader")).isEqualTo("a");
        assertThat(Protocols.acquire(b).token()).isZero();

        assertThat(Protocols.renew(a, 1)).isTrue();
        assertThat(Protocols.renew(b, 1)).isFalse();

        long second = Protocols.acquire(a).token();
        assertThat(second).isGreaterThan(1);

        assertThat(Protocols.release(a)).isTrue();
        assertThat(Protocols.acquire(b).token()).isGreaterThan(second);
    }

    @Test
    void losingAcquireReportsTheHoldersRemainingLease() {
        Protocols.acquire(elector("a"));
        LeaseProtocol.AcquireReply lost = Protocols.acquire(elector("b"));
        assertThat(lost.token()).isZero();
        assertThat(lost.holderTtlMillis()).isBetween(1L, 2000L);
    }

    @Test
    void acquireSetsTheLeaseTtlInMilliseconds() {
        Protocols.acquire(elector("a", Duration.ofMillis(1500)));
        assertThat(redis.getExpire(name + ":leader", java.util.concurrent.TimeUnit.MILLISECONDS))
                .isGreaterThan(1000)
                .isLessThanOrEqualTo(1500);
        assertThat(elector("a", Duration.ofMillis(1500)).protocol().ttlMillis()).isEqualTo("1500");
    }

    @Test
    void tokensIncreaseAcrossHolders() {
        Elector a = elector("a");
        Elector b = elector("b");
        assertThat(Protocols.acquire(a).token()).isEqualTo(1);
        assertThat(Protocols.acquire(b).token()).isZero();
        redis.delete(name + ":leader");
        assertThat(Protocols.acquire(b).token()).isGreaterThan(1);
    }

    @Test
    void ownLeftoverLeaseIsTakenOverWithAFreshToken() {
        redis.opsForValue().set(name + ":leader", "a", Duration.ofHours(1));
        Elector a = elector("a");
        assertThat(Protocols.acquire(a).token()).isEqualTo(1);
        assertThat(redis.getExpire(name + ":leader", java.util.concurrent.TimeUnit.MILLISECONDS))
                .isLessThanOrEqualTo(2000);
        assertThat(Protocols.acquire(elector("b")).token()).isZero();
        assertThat(Protocols.acquire(a).token()).isEqualTo(2);
    }

    @Test
    void electionFencesOutThePreviousTerm() {
        Elector a = elector("a");
        Elector b = elector("b");
        long tokenA = Protocols.acquire(a).token();
        assertThat(a.fencer(tokenA).set(name + ":state", "from-A")).isTrue();

        redis.delete(name + ":leader");
        long tokenB = Protocols.acquire(b).token();
        assertThat(tokenB).isEqualTo(2);
        assertThat(get(name + ":fence:applied")).isEqualTo("2");

        assertThat(a.fencer(tokenA).set(name + ":state", "stale")).isFalse();
        assertThat(get(name + ":state")).isEqualTo("from-A");
        assertThat(b.fencer(tokenB).set(name + ":state", "from-B")).isTrue();
        assertThat(get(name + ":state")).isEqualTo("from-B");
    }

    @Test
    void electionNeverRegressesTheHighWaterMark() {
        Elector a = elector("a");
        assertThat(a.fencer(40).set(name + ":state", "out-of-band")).isTrue();
        assertThat(Protocols.acquire(a).token()).isEqualTo(41);
        assertThat(get(name + ":fence:applied")).isEqualTo("41");
        assertThat(a.fencer(40).set(name + ":state", "stale")).isFalse();

        // Counter lost (eviction, partial restore): it heals from the mark.
        redis.delete(List.of(name + ":leader", name + ":fence"));
        assertThat(Protocols.acquire(a).token()).isEqualTo(42);
        assertThat(get(name + ":fence")).isEqualTo("42");
    }

    @Test
    void lostMarkDoesNotRegressTokens() {
        Elector a = elector("a");
        long first = Protocols.acquire(a).token();
        redis.delete(List.of(name + ":leader", name + ":fence:applied"));
        long second = Protocols.acquire(a).token();
        assertThat(second).isGreaterThan(first);
        assertThat(get(name + ":fence:applied")).isEqualTo(Long.toString(second));
    }

    @Test
    void renewOnlyExtendsOwnLease() {
        Elector a = elector("a");
        Protocols.acquire(a);
        redis.opsForValue().set(name + ":leader", "thief", Duration.ofHours(1));
        assertThat(Protocols.renew(a, 1)).isFalse();
        assertThat(get(name + ":leader")).isEqualTo("thief");
        assertThat(Protocols.release(a)).isFalse();
        assertThat(get(name + ":leader")).isEqualTo("thief");
    }

    @Test
    void renewFailsOnceTheMarkMovedPastTheTermsToken() {
        Elector a = elector("a");
        long token = Protocols.acquire(a).token();
        assertThat(a.fencer(token).set(name + ":state", "own write")).isTrue();
        assertThat(Protocols.renew(a, token)).isTrue();
        // A later acquire of the same instance (for example one that was abandoned and arrived
        // late) starts a newer term: the older term can no longer renew.
        long newer = Protocols.acquire(a).token();
        assertThat(Protocols.renew(a, token)).isFalse();
        assertThat(Protocols.renew(a, newer)).isTrue();
        assertThat(get(name + ":leader")).isEqualTo("a");
    }

    @Test
    void aLateReleaseOfAnOlderTermLeavesTheNewerTermsLease() {
        Elector a = elector("a");
        long older = Protocols.acquire(a).token();
        // The same instance wins again (its older release was abandoned at its bound).
        long newer = Protocols.acquire(a).token();
        assertThat(newer).isGreaterThan(older);
        assertThat(Protocols.release(a, older)).isFalse();
        assertThat(get(name + ":leader")).isEqualTo("a");
        assertThat(Protocols.renew(a, newer)).isTrue();
        assertThat(Protocols.release(a, newer)).isTrue();
        assertThat(redis.hasKey(name + ":leader")).isFalse();
    }

    @Test
    void renewAfterReleaseFails() {
        Elector a = elector("a");
        Protocols.acquire(a);
        assertThat(Protocols.release(a)).isTrue();
        assertThat(Protocols.renew(a, 1)).isFalse();
        assertThat(redis.hasKey(name + ":leader")).isFalse();
    }

    @Test
    void aCounterOrMarkThatIsNotAnIntegerIsRefusedBeforeAnyWrite() {
        redis.opsForValue().set(name + ":fence:applied", "1.5");
        assertThatExceptionOfType(DataAccessException.class)
                .isThrownBy(() -> Protocols.acquire(elector("a")))
                .withStackTraceContaining(name + ":fence:applied must hold a decimal integer");
        assertThat(redis.hasKey(name + ":leader")).isFalse();
        assertThat(redis.hasKey(name + ":fence")).isFalse();

        redis.delete(name + ":fence:applied");
        redis.opsForValue().set(name + ":fence", "garbage");
        assertThatExceptionOfType(DataAccessException.class)
                .isThrownBy(() -> Protocols.acquire(elector("a")))
                .withStackTraceContaining(name + ":fence must hold a decimal integer");
        assertThat(redis.hasKey(name + ":leader")).isFalse();
    }

    @Test
    void leaseKeyOfWrongTypeMakesAcquireFail() {
        redis.opsForHash().put(name + ":leader", "f", "v");
        assertThatExceptionOfType(DataAccessException.class)
                .isThrownBy(() -> Protocols.acquire(elector("a")))
                .withStackTraceContaining("WRONGTYPE");
    }

    @Test
    void concurrentContentionMintsUniqueIncreasingTokens() throws Exception {
        int electors = 8;
        int attempts = 50;
        List<Long> all = Collections.synchronizedList(new ArrayList<>());
        List<Callable<List<Long>>> jobs = new ArrayList<>();
        for (int i = 0; i < electors; i++) {
            Elector elector = elector("e" + i);
            jobs.add(
                    () -> {
                        List<Long> won = new ArrayList<>();
                        for (int n = 0; n < attempts; n++) {
                            long token = Protocols.acquire(elector).token();
                            if (token > 0) {
                                won.add(token);
                                all.add(token);
                                Protocols.release(elector);
                            }
                        }
                        return won;
                    });
        }
        ExecutorService pool = Executors.newFixedThreadPool(electors);
        try {
            for (Future<List<Long>> result : pool.invokeAll(jobs)) {
                assertThat(result.get()).isSorted().doesNotHaveDuplicates();
            }
        } finally {
            pool.shutdownNow();
        }
        assertThat(all).isNotEmpty().doesNotHaveDuplicates();
        assertThat(get(name + ":fence")).isEqualTo(Long.toString(Collections.max(all)));
    }
}
