package io.redlease.reliability;

import static io.redlease.test.TestTimeScale.scaled;

import io.redlease.core.Elector;
import io.redlease.core.ElectorConfig;
import io.redlease.core.Fencer;
import io.redlease.core.LeaderInfo;
import io.redlease.core.LeaderMetadata;
import io.redlease.core.Preference;
import io.redlease.core.SlotLedger;
import io.redlease.core.Term;
import io.redlease.core.partition.PartitionedElection;
import io.redlease.core.partition.PartitionedElectionConfig;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.Supplier;
import org.awaitility.Awaitility;
import org.awaitility.core.ConditionTimeoutException;
import org.springframework.data.redis.core.StringRedisTemplate;

/**
 * One run of a feature's Redis traffic under an ACL user, as an application uses the feature: two
 * instances, a hand-off, and a graceful stop, so that every command the feature sends is sent. A
 * refusal (an error from Redis, or a denial in {@code ACL LOG}) ends the run early: {@link
 * #problems()} or the ACL LOG then says what was refused.
 */
final class FeatureRun implements AutoCloseable {

    /** Thrown to end a run at its first refusal. */
    static final class Refused extends RuntimeException {
        Refused(String what) {
            super(what, null, false, false);
        }
    }

    private static final Duration STEP = scaled(Duration.ofSeconds(10));

    /**
     * The leases' time to live: long enough that a loaded machine does not lose a term in the
     * middle of a run (a hand-off is a graceful release, which does not wait for it).
     */
    private static final Duration TTL = Duration.ofSeconds(3);

    private final FeatureAcl feature;

    private final String name;

    private final Supplier<StringRedisTemplate> connect;

    private final BooleanSupplier denied;

    private final List<String> problems = new CopyOnWriteArrayList<>();

    private final List<AutoCloseable> running = new ArrayList<>();

    /** Successful renewals of every elector of the run. */
    private final AtomicInteger renewals = new AtomicInteger();

    /**
     * @param connect a new template as the feature's ACL user, one per instance
     * @param denied whether {@code ACL LOG} holds a denial for the user
     */
    FeatureRun(
            FeatureAcl feature,
            String name,
            Supplier<StringRedisTemplate> connect,
            BooleanSupplier denied) {
        this.feature = feature;
        this.name = name;
        this.connect = connect;
        this.denied = denied;
    }

    /** Errors from Redis the run met, as text; empty when nothing was refused. */
    List<String> problems() {
        return problems;
    }

    /** Runs the feature until done, or until the first refusal. */
    void run() {
        try {
            switch (feature) {
                case ELECTION -> election();
                case FENCED_WRITES -> fencedWrites();
                case ONCE_PER_SLOT -> oncePerSlot();
                case DISCOVERY -> discovery();
                case PREFERENCE -> preference();
                case PARTITIONS -> partitions();
            }
        } catch (Refused refused) {
            // Judged by the caller from the problems and the ACL LOG.
        } finally {
            close();
        }
    }

    private void election() {
        Elector a = started("a", builder -> {});
        await("a leads", a::isLeader);
        Elector b = started("b", builder -> {});
        await("b hears releases", () -> !b.isLeader() && b.notificationsOff().isEmpty());
        call("holder", b::holder);
        a.stop();
        await("b takes over", b::isLeader);
    }

    private void fencedWrites() {
        Elector a = started("a", builder -> {});
        await("a leads", a::isLeader);
        applied(a, "Fencer.set", fencer -> fencer.set(name + ":data:string", "v"));
        applied(a, "Fencer.hset", fencer -> fencer.hset(name + ":data:hash", "field", "v"));
        applied(
                a,
                "Fencer.eval",
                fencer ->
                        fencer.eval(
                                "redis.call('RPUSH', KEYS[2], ARGV[2])",
                                List.of(name + ":data:list"),
                                "v"));
    }

    private void oncePerSlot() {
        Elector a = started("a", builder -> {});
        await("a leads", a::isLeader);
        Term term = a.term().orElseThrow();
        SlotLedger ledger = new SlotLedger(a, "job");
        Instant now = Instant.now();
        call("SlotLedger.read", ledger::read);
        call(
                "SlotLedger.claim",
                () ->
                        ledger.claim(
                                term, now.minusSeconds(60), ZoneOffset.UTC, now.minusSeconds(60)));
        call("SlotLedger.mark", () -> ledger.mark(term, now, now, now.minusSeconds(60)));
        call("SlotLedger.read", ledger::read);
        // An operator's pause and resume, from any instance: the same ledger and commands.
        call("SlotLedger.pause", () -> ledger.pause(now));
        call("SlotLedger.resume", () -> ledger.resume(now.plusSeconds(1)));
    }

    private void discovery() {
        Elector a = elector("a", builder -> {});
        a.advertise(new LeaderMetadata("http://a.example", "1.0", Map.of("zone", "z1")));
        a.start();
        await("a leads", a::isLeader);
        Elector b = started("b", builder -> {});
        await(
                "b reads a's metadata",
                () -> call("leaderInfo", b::leaderInfo).flatMap(LeaderInfo::metadata).isPresent());
        // Each renewal refreshes the metadata; the release removes it.
        int renewed = renewals.get();
        await("a renews twice more", () -> renewals.get() >= renewed + 2);
        a.stop();
        await("b takes over", b::isLeader);
    }

    private void preference() {
        Elector a = elector("a", builder -> {});
        a.prefer(Preference.priority(1), null);
        a.start();
        await("a leads", a::isLeader);
        Elector b = elector("b", builder -> {});
        b.prefer(Preference.priority(2), null);
        b.start();
        await("a hands over to b, which ranks higher", b::isLeader);
    }

    private void partitions() {
        PartitionedElection a = partitioned("a");
        await("a owns every partition", () -> a.owned().size() == 4);
        PartitionedElection b = partitioned("b");
        await("b owns its share", () -> b.owned().size() == 2 && a.owned().size() == 2);
        call("holders", a::holders);
        b.stop();
        await("a owns every partition again", () -> a.owned().size() == 4);
    }

    private PartitionedElection partitioned(String id) {
        PartitionedElection election =
                new PartitionedElection(
                        connect.get(),
                        PartitionedElectionConfig.builder(name, 4)
                                .instanceId(id)
                                .ttl(TTL)
                                .renewInterval(Duration.ofMillis(300))
                                .acquireInterval(Duration.ofMillis(300))
                                .balanceInterval(Duration.ofMillis(100))
                                .build());
        running.add(election);
        election.start();
        return election;
    }

    private Elector started(String id, Consumer<ElectorConfig.Builder> tweak) {
        Elector elector = elector(id, tweak);
        elector.start();
        return elector;
    }

    private Elector elector(String id, Consumer<ElectorConfig.Builder> tweak) {
        ElectorConfig.Builder builder =
                ElectorConfig.builder(name)
                        .instanceId(id)
                        .ttl(TTL)
                        .renewInterval(Duration.ofMillis(300))
                        .acquireInterval(Duration.ofMillis(300))
                        .observer(
                                new io.redlease.core.Observer() {
                                    @Override
                                    public void onRoundTrip(
                                            Operation operation,
                                            Duration duration,
                                            boolean succeeded) {
                                        if (operation == Operation.RENEW && succeeded) {
                                            renewals.incrementAndGet();
                                        }
                                    }

                                    @Override
                                    public void onError(Operation operation, Throwable error) {
                                        String text = Harness.describe(error);
                                        if (!text.contains("QueryTimeout")) {
                                            problems.add(id + " " + operation + ": " + text);
                                        }
                                    }
                                });
        tweak.accept(builder);
        Elector elector = new Elector(connect.get(), builder.build());
        running.add(elector);
        return elector;
    }

    private <T> T call(String what, Supplier<T> action) {
        try {
            return action.get();
        } catch (RuntimeException ex) {
            problems.add(what + ": " + Harness.describe(ex));
            throw new Refused(what);
        }
    }

    /**
     * Writes through the fence of the leader's current term; a write the fence refuses because the
     * term was lost meanwhile (a stall of the loaded machine) is tried again in the next term.
     */
    private void applied(Elector leader, String what, Function<Fencer, Boolean> write) {
        for (int attempt = 0; attempt < 3; attempt++) {
            await("a leads", leader::isLeader);
            Optional<Fencer> fencer = leader.fencer();
            if (fencer.isPresent() && call(what, () -> write.apply(fencer.get()))) {
                return;
            }
        }
        problems.add(what + ": refused by the fence three times while leading");
        throw new Refused(what);
    }

    private void await(String what, BooleanSupplier condition) {
        try {
            Awaitility.await(what)
                    .atMost(STEP)
                    .pollInterval(Duration.ofMillis(10))
                    .until(
                            () -> {
                                if (!problems.isEmpty() || denied.getAsBoolean()) {
                                    throw new Refused(what);
                                }
                                return condition.getAsBoolean();
                            });
        } catch (ConditionTimeoutException ex) {
            problems.add("timed out waiting until " + what);
            throw new Refused(what);
        }
    }

    /** Stops every instance of the run gracefully, last started first. */
    @Override
    public void close() {
        for (int i = running.size() - 1; i >= 0; i--) {
            try {
                running.get(i).close();
            } catch (Exception ex) {
                problems.add("stopping: " + Harness.describe(ex));
            }
        }
        running.clear();
    }
}
