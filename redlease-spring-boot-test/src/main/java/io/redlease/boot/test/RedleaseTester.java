package io.redlease.boot.test;

import static org.awaitility.Awaitility.await;

import io.redlease.core.Elections;
import io.redlease.core.Elector;
import io.redlease.core.Term;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.UUID;
import org.jspecify.annotations.Nullable;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.data.redis.core.script.RedisScript;

/**
 * Drives one election from a test: waits for this instance to lead or follow, makes it step down,
 * lets another (pretend) instance take the lease or start a newer term, and reads the election's
 * keys in Redis.
 *
 * <p>It writes the wire protocol's keys the way another instance would: {@code <name>:leader}
 * (holder's instance id with a TTL), {@code <name>:fence} (token counter) and {@code
 * <name>:fence:applied} (the newest token that wrote). It only ever advances the counter and the
 * mark, as real instances do, so the election stays sound after a test.
 *
 * <p>Waiting methods use Awaitility with {@link #timeout()}; boolean and reading methods suit
 * {@code await().until(tester::isLeader)} and AssertJ. {@link TestRedis} makes an instance for the
 * main election available as a bean; {@link #of(Elections, RedisConnectionFactory)} builds one
 * anywhere.
 */
public final class RedleaseTester {

    /** Deletes the lease only while it holds the given instance id. */
    private static final RedisScript<Long> RELEASE_IF_HELD =
            RedisScript.of(
                    "if redis.call('GET', KEYS[1]) == ARGV[1] then"
                            + " return redis.call('DEL', KEYS[1]) end return 0",
                    Long.class);

    /**
     * Takes the next token and marks it as written, as a newer leader's first fenced write does.
     */
    private static final RedisScript<Long> NEWER_TERM =
            RedisScript.of(
                    "local token = redis.call('INCR', KEYS[1])"
                            + " redis.call('SET', KEYS[2], token) return token",
                    Long.class);

    private final @Nullable Elections elections;

    private final Elector elector;

    private final StringRedisTemplate redis;

    private final Duration timeout;

    private RedleaseTester(
            @Nullable Elections elections,
            Elector elector,
            StringRedisTemplate redis,
            Duration timeout) {
        this.elections = elections;
        this.elector = elector;
        this.redis = redis;
        this.timeout = timeout;
    }

    /**
     * Creates a tester for the main election of an application.
     *
     * @param elections the application's elections
     * @param connectionFactory the connection to the elections' Redis
     * @return the tester
     */
    public static RedleaseTester of(Elections elections, RedisConnectionFactory connectionFactory) {
        Objects.requireNonNull(elections, "elections must not be null");
        return create(elections, elections.get(Elections.DEFAULT), connectionFactory);
    }

    /**
     * Creates a tester for one elector.
     *
     * @param elector the elector
     * @param connectionFactory the connection to the elector's Redis
     * @return the tester
     */
    public static RedleaseTester of(Elector elector, RedisConnectionFactory connectionFactory) {
        return create(null, elector, connectionFactory);
    }

    private static RedleaseTester create(
            @Nullable Elections elections,
            Elector elector,
            RedisConnectionFactory connectionFactory) {
        Objects.requireNonNull(elector, "elector must not be null");
        Objects.requireNonNull(connectionFactory, "connectionFactory must not be null");
        StringRedisTemplate redis = new StringRedisTemplate(connectionFactory);
        redis.afterPropertiesSet();
        return new RedleaseTester(elections, elector, redis, defaultTimeout(elector));
    }

    /** Ten seconds, or three lease TTLs when that is longer. */
    private static Duration defaultTimeout(Elector elector) {
        Duration ttls = elector.config().ttl().multipliedBy(3);
        Duration floor = Duration.ofSeconds(10);
        return ttls.compareTo(floor) > 0 ? ttls : floor;
    }

    /**
     * Returns a tester for another election of the same application.
     *
     * @param id the election id
     * @return the tester
     * @throws IllegalStateException if this tester was made for a single elector
     */
    public RedleaseTester election(String id) {
        if (elections == null) {
            throw new IllegalStateException(
                    "redlease: this tester was made for one elector; use"
                            + " RedleaseTester.of(elections, ...)");
        }
        Elector other = elections.get(id);
        return new RedleaseTester(elections, other, redis, defaultTimeout(other));
    }

    /**
     * Returns a tester that waits at most {@code timeout}.
     *
     * @param timeout how long the waiting methods wait; must be positive
     * @return the tester
     */
    public RedleaseTester withTimeout(Duration timeout) {
        Objects.requireNonNull(timeout, "timeout must not be null");
        if (timeout.isZero() || timeout.isNegative()) {
            throw new IllegalArgumentException(
                    "redlease: timeout must be positive but was " + timeout);
        }
        return new RedleaseTester(elections, elector, redis, timeout);
    }

    /** Returns how long the waiting methods wait. */
    public Duration timeout() {
        return timeout;
    }

    /** Returns the elector under test. */
    public Elector elector() {
        return elector;
    }

    /** Returns the election name, the prefix of its Redis keys. */
    public String name() {
        return elector.name();
    }

    /** Returns whether this instance leads the election now. */
    public boolean isLeader() {
        return elector.isLeader();
    }

    /** Returns whether this instance takes part in the election and does not lead it. */
    public boolean isFollower() {
        return elector.isRunning() && !elector.isLeader();
    }

    /** Returns the instance id in the lease ({@code <name>:leader}), if the lease is held. */
    public Optional<String> holder() {
        return Optional.ofNullable(redis.opsForValue().get(leaderKey()));
    }

    /** Returns the last token handed out ({@code <name>:fence}), 0 if none. */
    public long lastToken() {
        return number(redis.opsForValue().get(name() + ":fence"));
    }

    /**
     * Returns the newest token that wrote through the fence ({@code <name>:fence:applied}), 0 if
     * none.
     */
    public long appliedMark() {
        return number(redis.opsForValue().get(name() + ":fence:applied"));
    }

    /**
     * Waits until this instance leads, starting the elector first if it is not running.
     *
     * @return the term it leads
     */
    public Term awaitLeadership() {
        if (!elector.isRunning()) {
            elector.start();
        }
        return await("leadership of " + name())
                .atMost(timeout)
                .until(() -> elector.term().filter(Term::isActive), Optional::isPresent)
                .orElseThrow();
    }

    /** Waits until this instance takes part in the election and another instance leads it. */
    public void awaitFollower() {
        await("following in " + name())
                .atMost(timeout)
                .until(
                        () ->
                                isFollower()
                                        && holder().filter(id -> !id.equals(elector.instanceId()))
                                                .isPresent());
    }

    /**
     * Makes this instance resign its term and waits until the term has ended; its leader-only work
     * is interrupted. Another instance, or this one again, may win the next term.
     *
     * @return the ended term
     * @throws IllegalStateException if this instance does not lead
     */
    public Term stepDown() {
        Term term =
                elector.term()
                        .orElseThrow(
                                () ->
                                        new IllegalStateException(
                                                "redlease: this instance does not lead " + name()));
        elector.resign();
        await("end of term " + term.token()).atMost(timeout).until(() -> !term.isActive());
        return term;
    }

    /**
     * Overwrites the lease with another instance id for a minute, as if the lease had lapsed and
     * another instance had taken it, without a new token. This instance loses its term at its next
     * renewal and follows until the lease is released or expires.
     *
     * @return the other instance's lease
     */
    public ForeignLease stealLease() {
        return stealLease(Duration.ofMinutes(1));
    }

    /**
     * Overwrites the lease with another instance id for {@code holdFor}.
     *
     * @param holdFor how long the lease lasts; at least a millisecond
     * @return the other instance's lease
     */
    public ForeignLease stealLease(Duration holdFor) {
        Objects.requireNonNull(holdFor, "holdFor must not be null");
        if (holdFor.toMillis() < 1) {
            throw new IllegalArgumentException(
                    "redlease: holdFor must be at least 1ms but was " + holdFor);
        }
        String thief = "redlease-tester-" + UUID.randomUUID();
        redis.opsForValue().set(leaderKey(), thief, holdFor);
        return new ForeignLease(thief, null);
    }

    /**
     * Starts a newer term without taking the lease: takes the next token ({@code INCR
     * <name>:fence}) and marks it as written ({@code SET <name>:fence:applied}). From then on,
     * every fenced write with an older token, such as this instance's current one, is refused; the
     * instance steps down at its next renewal and wins a term with a newer token.
     *
     * @return the newer term's token
     */
    public long startNewerTerm() {
        Long token =
                redis.execute(NEWER_TERM, List.of(name() + ":fence", name() + ":fence:applied"));
        return Objects.requireNonNull(token, "no reply to INCR");
    }

    /**
     * Hands leadership to another (pretend) instance: it takes the lease for a minute and starts a
     * newer term, so this instance loses its term and its fenced writes are refused.
     *
     * @param instanceId the other instance's id
     * @return the other instance's lease, with its token
     */
    public ForeignLease handLeadershipTo(String instanceId) {
        Objects.requireNonNull(instanceId, "instanceId must not be null");
        if (instanceId.isBlank() || instanceId.equals(elector.instanceId())) {
            throw new IllegalArgumentException(
                    "redlease: instanceId must name another instance but was '" + instanceId + "'");
        }
        redis.opsForValue().set(leaderKey(), instanceId, Duration.ofMinutes(1));
        return new ForeignLease(instanceId, startNewerTerm());
    }

    private String leaderKey() {
        return name() + ":leader";
    }

    private static long number(@Nullable String value) {
        return value == null ? 0 : Long.parseLong(value);
    }

    @Override
    public String toString() {
        return "RedleaseTester[" + name() + ", " + elector.instanceId() + "]";
    }

    /** A lease that the tester gave another (pretend) instance. */
    public final class ForeignLease implements AutoCloseable {

        private final String instanceId;

        private final @Nullable Long token;

        private ForeignLease(String instanceId, @Nullable Long token) {
            this.instanceId = instanceId;
            this.token = token;
        }

        /** Returns the other instance's id. */
        public String instanceId() {
            return instanceId;
        }

        /** Returns the other instance's token, if it started a newer term. */
        public OptionalLong token() {
            return token == null ? OptionalLong.empty() : OptionalLong.of(token);
        }

        /** Releases the lease if the other instance still holds it, so the election goes on. */
        public void release() {
            redis.execute(RELEASE_IF_HELD, List.of(leaderKey()), instanceId);
        }

        /** Releases the lease. */
        @Override
        public void close() {
            release();
        }

        @Override
        public String toString() {
            return "ForeignLease[" + instanceId + (token == null ? "" : ", token " + token) + "]";
        }
    }
}
