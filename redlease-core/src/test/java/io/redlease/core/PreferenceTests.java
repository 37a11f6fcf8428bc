package io.redlease.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.awaitility.Awaitility.await;

import io.redlease.core.Observer.Operation;
import io.redlease.test.RedisExtension;
import io.redlease.test.RedisServer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.data.redis.core.RedisCallback;
import org.springframework.data.redis.core.StringRedisTemplate;

/**
 * Preferred leadership on a real Redis: a leader hands over once to a live, ready candidate that
 * ranks higher; lower followers leave a free lease to it; ties and unready candidates change
 * nothing; a crashed preferred candidate holds the lease back for at most one time to live.
 */
@ExtendWith(RedisExtension.class)
class PreferenceTests {

    private static final Duration TTL = Duration.ofMillis(600);

    private final Templates templates = new Templates();

    private final List<Elector> electors = new ArrayList<>();

    private StringRedisTemplate redis;

    private String name;

    @BeforeEach
    void setUp(RedisServer server, TestInfo info) {
        this.redis = templates.on(server);
        this.name = Names.unique(info);
    }

    @AfterEach
    void tearDown() {
        electors.forEach(Elector::close);
        templates.close();
    }

    /** An elector and what it saw: terms won and successful round trips. */
    private record Candidate(Elector elector, Recorder recorder, AtomicInteger roundTrips) {

        long terms() {
            return recorder.count("elected");
        }
    }

    private Candidate candidate(String id, Preference preference, AtomicBoolean ready) {
        Recorder recorder = new Recorder();
        AtomicInteger roundTrips = new AtomicInteger();
        Elector elector =
                new Elector(
                        redis,
                        ElectorConfig.builder(name)
                                .ttl(TTL)
                                .renewInterval(Duration.ofMillis(100))
                                .acquireInterval(Duration.ofMillis(100))
                                .leaseAwareScheduling(false)
                                .instanceId(id)
                                .observer(recorder)
                                .observer(
                                        new Observer() {
                                            @Override
                                            public void onRoundTrip(
                                                    Operation operation,
                                                    Duration duration,
                                                    boolean succeeded) {
                                                if (succeeded) {
                                                    roundTrips.incrementAndGet();
                                                }
                                            }
                                        })
                                .build());
        if (preference != null) {
            elector.prefer(preference, ready::get);
        }
        electors.add(elector);
        return new Candidate(elector, recorder, roundTrips);
    }

    private static void awaitRoundTrips(Candidate candidate, int more) {
        int target = candidate.roundTrips().get() + more;
        await().until(() -> candidate.roundTrips().get() >= target);
    }

    @Test
    void anEntryOutlivesTheLongestSleepBetweenHeartbeats() {
        ElectorConfig.Builder config =
                ElectorConfig.builder(name).ttl(TTL).acquireInterval(Duration.ofMillis(300));
        assertThat(Candidacy.lifetime(config.leaseAwareScheduling(false).build())).isEqualTo(TTL);
        assertThat(Candidacy.lifetime(config.leaseAwareScheduling(true).build()))
                .isEqualTo(Duration.ofMillis(900));
        assertThat(
                        Candidacy.lifetime(
                                config.leaseAwareScheduling(false)
                                        .acquireInterval(Duration.ofMillis(500))
                                        .build()))
                .isEqualTo(Duration.ofMillis(800));
    }

    @Test
    void ranksComparePriorityThenVersion() {
        assertThat(Preference.priority(2)).isGreaterThan(Preference.priority(1));
        assertThat(Preference.priority(-1)).isLessThan(Preference.priority(0));
        assertThat(Preference.priority(Integer.MIN_VALUE))
                .isLessThan(Preference.priority(Integer.MAX_VALUE));
        assertThat(Preference.version("1.10.0")).isGreaterThan(Preference.version("1.9.7"));
        assertThat(Preference.version("2.0")).isGreaterThan(Preference.version("1.99.99"));
        assertThat(Preference.version("1.0.1")).isGreaterThan(Preference.version("1.0"));
        assertThat(Preference.version("1.4.0")).isGreaterThan(Preference.version("1.4.0-rc1"));
        assertThat(Preference.version("1.4.0-rc10")).isGreaterThan(Preference.version("1.4.0-rc2"));
        assertThat(Preference.version("1.4.0-SNAPSHOT")).isLessThan(Preference.version("1.4.0"));
        assertThat(Preference.version("1.04")).isEqualTo(Preference.version("1.4"));
        assertThat(Preference.of(1, "0.1")).isGreaterThan(Preference.of(1, null));
        assertThat(Preference.of(2, "0.1")).isGreaterThan(Preference.of(1, "9.9"));
        assertThat(Preference.version("1.2.3").rank()).matches("[0-9a-z]+");
        assertThatIllegalArgumentException()
                .isThrownBy(() -> Preference.version("-"))
                .withMessageContaining("letter or digit");
    }

    @Test
    void aLeaderHandsOverOnceToAReadyCandidateThatRanksHigher() {
        Candidate low = candidate("low", Preference.priority(0), new AtomicBoolean(true));
        low.elector().start();
        low.recorder().await("elected", 1);
        Candidate high = candidate("high", Preference.priority(1), new AtomicBoolean(true));
        high.elector().start();
        high.recorder().await("elected", 1);
        assertThat(low.recorder().events("steppedDown")).hasSize(1);
        // Many renewals later: no further change.
        awaitRoundTrips(high, 20);
        assertThat(high.terms()).isEqualTo(1);
        assertThat(low.terms()).isEqualTo(1);
        assertThat(high.elector().isLeader()).isTrue();
    }

    @Test
    void aCandidateThatIsNotReadyTakesOverOnlyOnceReady() {
        Candidate low = candidate("low", Preference.priority(0), new AtomicBoolean(true));
        low.elector().start();
        low.recorder().await("elected", 1);
        AtomicBoolean ready = new AtomicBoolean(false);
        Candidate high = candidate("high", Preference.priority(5), ready);
        high.elector().start();
        awaitRoundTrips(high, 10);
        awaitRoundTrips(low, 10);
        assertThat(high.terms()).isZero();
        assertThat(low.elector().isLeader()).isTrue();
        ready.set(true);
        high.recorder().await("elected", 1);
        assertThat(low.terms()).isEqualTo(1);
    }

    @Test
    void lowerFollowersLeaveAFreeLeaseToALiveReadyHigherCandidate() {
        Candidate high = candidate("high", Preference.version("2.0.0"), new AtomicBoolean(true));
        high.elector().start();
        high.recorder().await("elected", 1);
        Candidate low1 = candidate("low1", Preference.version("1.9.0"), new AtomicBoolean(true));
        Candidate low2 = candidate("low2", Preference.version("1.9.0"), new AtomicBoolean(true));
        low1.elector().start();
        low2.elector().start();
        awaitRoundTrips(low1, 5);
        awaitRoundTrips(low2, 5);
        for (int i = 2; i <= 4; i++) {
            high.elector().resign();
            high.recorder().await("elected", i);
        }
        assertThat(low1.terms()).isZero();
        assertThat(low2.terms()).isZero();
    }

    @Test
    void whenALeaseLapsesALowerFollowerLeavesItToAHigherOne() {
        // A holder that will never renew (a crashed leader without preference).
        redis.opsForValue().set(name + ":leader", "crashed", Duration.ofMillis(1500));
        Candidate low = candidate("low", Preference.version("1.0.0"), new AtomicBoolean(true));
        Candidate high = candidate("high", Preference.version("1.1.0"), new AtomicBoolean(true));
        low.elector().start();
        high.elector().start();
        high.recorder().await("elected", 1);
        awaitRoundTrips(low, 3);
        assertThat(low.terms()).isZero();
    }

    @Test
    void equalRanksNeverHandOver() {
        Candidate first = candidate("first", Preference.of(3, "1.0"), new AtomicBoolean(true));
        first.elector().start();
        first.recorder().await("elected", 1);
        Candidate second = candidate("second", Preference.of(3, "1.0"), new AtomicBoolean(true));
        second.elector().start();
        awaitRoundTrips(second, 10);
        awaitRoundTrips(first, 10);
        assertThat(first.terms()).isEqualTo(1);
        assertThat(first.recorder().events("steppedDown")).isEmpty();
        assertThat(second.terms()).isZero();
    }

    @Test
    void aCrashedPreferredCandidateHoldsTheLeaseBackForAtMostOneTtl() {
        // A candidate that heartbeated just now, then crashed: it ranks higher and is ready.
        long expires = ghost(TTL);
        Candidate low = candidate("low", Preference.priority(0), new AtomicBoolean(true));
        long started = System.currentTimeMillis();
        low.elector().start();
        low.recorder().await("elected", 1);
        long electedAt = System.currentTimeMillis();
        // Held back until the ghost's entry lapsed (by Redis's clock, within the local clock's
        // drift of a loopback server), then elected at its next poll.
        assertThat(electedAt).isGreaterThanOrEqualTo(expires - 50);
        System.out.printf(
                "preference: crashed candidate held the lease back %d ms (TTL %d ms)%n",
                electedAt - started, TTL.toMillis());
        assertThat(redis.opsForHash().hasKey(name + ":candidates", "ghost")).isFalse();
    }

    @Test
    void aLeftoverLeaseOfItsOwnIdHeldBackForAHigherCandidateCountsAsHeld() {
        // A lease left by an earlier run with this instance's id (a lost release, a restart with a
        // fixed id) while a higher, ready candidate is live: the gate holds the instance back,
        // and the lease is still held until it lapses.
        ghost(Duration.ofMinutes(1));
        redis.opsForValue().set(name + ":leader", "low", Duration.ofMinutes(1));
        Candidate low = candidate("low", Preference.priority(0), new AtomicBoolean(true));
        low.elector().start();
        low.recorder().await("follower", 1);
        assertThat(low.elector().isLeader()).isFalse();
        assertThat(low.elector().leaseHeld()).isTrue();
        assertThat(low.terms()).isZero();
    }

    @Test
    void anInstanceWithoutPreferenceIgnoresTheCandidatesLikeTheGoLibrary() {
        ghost(Duration.ofMinutes(1));
        Candidate plain = candidate("plain", null, new AtomicBoolean(true));
        plain.elector().start();
        plain.recorder().await("elected", 1);
        assertThat(plain.elector().preference()).isEmpty();
    }

    /**
     * Writes the entry of a candidate that heartbeated just now and then crashed: it ranks higher
     * than any test candidate and is ready; returns when the entry lapses, by Redis's clock.
     */
    private long ghost(Duration lifetime) {
        Long now = redis.execute((RedisCallback<Long>) c -> c.serverCommands().time());
        long expires = now + lifetime.toMillis();
        redis.opsForHash()
                .put(
                        name + ":candidates",
                        "ghost",
                        expires + "|1|" + Preference.priority(9).rank());
        return expires;
    }
}
