package io.redlease.boot.health;

import io.redlease.boot.lifecycle.LeaderLifecycles;
import io.redlease.core.Elections;
import io.redlease.core.Elector;
import io.redlease.core.partition.PartitionedElection;
import io.redlease.core.scheduling.SlotJobs;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.health.contributor.AbstractHealthIndicator;
import org.springframework.boot.health.contributor.Health;

/**
 * Health of the application's elections: UP while every running elector reaches Redis, whether it
 * leads or follows; DOWN while the last round trip of one of them failed, or while one leads past
 * its local deadline (the watchdog ends such a term within moments).
 *
 * <p>Details, per election id: the election name, this instance's id, its role ({@code leader},
 * {@code follower}, {@code starting} until its first outcome, or {@code stopped}) and, when
 * leading, the token; whether release notifications are heard ({@code notifications}: {@code on} or
 * {@code off}, which does not change the status, and when off, why under {@code notificationsOff}:
 * switched off, Cluster, subscribing, a failed subscription with its cause, or a lost subscription
 * connection being restored); when Redis cannot be reached, the error (with any credentials in URLs
 * masked); under {@code lifecycles}, each leader-only lifecycle bean or listener container and
 * whether it runs (they do not change the status). Under {@code partitions} (an id no election may
 * have), per partitioned election id: its name, this instance's id, whether it runs, the partition
 * count, the partitions this instance owns, its fair share and the live members it counts; a failed
 * balancing round (Redis unreachable) makes the status DOWN. How many partitions an instance owns
 * never changes the status. Under {@code pausedJobs}, when there are any, the election's (or
 * partitioned election's) once-per-slot jobs that an operator paused, as this instance last read
 * their ledgers; a pause never changes the status.
 */
public class RedleaseHealthIndicator extends AbstractHealthIndicator {

    private static final Pattern CREDENTIALS = Pattern.compile("(rediss?://)[^@\\s/]*@");

    private final Elections elections;

    private @Nullable LeaderLifecycles lifecycles;

    private @Nullable SlotJobs slotJobs;

    /**
     * Creates the indicator.
     *
     * @param elections the application's elections
     */
    public RedleaseHealthIndicator(Elections elections) {
        super("redlease health check failed");
        this.elections = elections;
    }

    /**
     * Creates the indicator, with each election's leader-only lifecycles in its details.
     *
     * @param elections the application's elections
     * @param lifecycles the leader-only lifecycles, or null
     */
    public RedleaseHealthIndicator(Elections elections, @Nullable LeaderLifecycles lifecycles) {
        this(elections);
        this.lifecycles = lifecycles;
    }

    /**
     * Creates the indicator, with each election's leader-only lifecycles and paused once-per-slot
     * jobs in its details.
     *
     * @param elections the application's elections
     * @param lifecycles the leader-only lifecycles, or null
     * @param slotJobs the once-per-slot jobs, or null
     */
    public RedleaseHealthIndicator(
            Elections elections,
            @Nullable LeaderLifecycles lifecycles,
            @Nullable SlotJobs slotJobs) {
        this(elections, lifecycles);
        this.slotJobs = slotJobs;
    }

    @Override
    protected void doHealthCheck(Health.Builder builder) {
        boolean down = false;
        Map<String, Object> details = new LinkedHashMap<>();
        for (Map.Entry<String, Elector> entry : elections.asMap().entrySet()) {
            Elector elector = entry.getValue();
            Map<String, Object> election = new LinkedHashMap<>();
            election.put("name", elector.name());
            election.put("instanceId", elector.instanceId());
            election.put("role", role(elector));
            elector.token().ifPresent(token -> election.put("token", token));
            Optional<String> notificationsOff = elector.notificationsOff();
            election.put("notifications", notificationsOff.isPresent() ? "off" : "on");
            notificationsOff.ifPresent(why -> election.put("notificationsOff", mask(why)));
            if (elector.isPastDeadline()) {
                down = true;
                election.put("pastDeadline", true);
            }
            Optional<Throwable> failure = elector.redisFailure();
            if (failure.isPresent()) {
                down = true;
                election.put("error", describe(failure.get()));
            }
            LifecycleDetails.put(lifecycles, entry.getKey(), election);
            putPausedJobs(entry.getKey(), false, election);
            details.put(entry.getKey(), election);
        }
        Map<String, Object> partitions = new LinkedHashMap<>();
        for (Map.Entry<String, PartitionedElection> entry :
                elections.partitionedAsMap().entrySet()) {
            PartitionedElection election = entry.getValue();
            Map<String, Object> partitioned = new LinkedHashMap<>();
            partitioned.put("name", election.name());
            partitioned.put("instanceId", election.instanceId());
            partitioned.put("running", election.isRunning());
            partitioned.put("partitions", election.partitionCount());
            partitioned.put("owned", election.owned());
            partitioned.put("share", election.share());
            partitioned.put("members", election.members());
            Optional<Throwable> failure = election.redisFailure();
            if (failure.isPresent()) {
                down = true;
                partitioned.put("error", describe(failure.get()));
            }
            putPausedJobs(entry.getKey(), true, partitioned);
            partitions.put(entry.getKey(), partitioned);
        }
        if (!partitions.isEmpty()) {
            details.put(Elections.PARTITIONS, partitions);
        }
        (down ? builder.down() : builder.up()).withDetails(details);
    }

    private void putPausedJobs(String id, boolean partitioned, Map<String, Object> details) {
        SlotJobs jobs = slotJobs;
        List<String> paused =
                jobs == null ? List.of() : jobs.controls().pausedJobs(id, partitioned);
        if (!paused.isEmpty()) {
            details.put("pausedJobs", paused);
        }
    }

    /**
     * Returns {@code leader}, {@code follower}, {@code stopped}, or {@code starting} while a
     * running election has no first outcome yet (still connecting, or a follower whose release
     * subscription is not in place yet).
     */
    public static String role(Elector elector) {
        if (!elector.isRunning()) {
            return "stopped";
        }
        if (elector.isLeader()) {
            return "leader";
        }
        return elector.firstOutcome().isDone() ? "follower" : "starting";
    }

    static String describe(Throwable error) {
        String message = error.getMessage();
        return mask(error.getClass().getName() + (message == null ? "" : ": " + message));
    }

    private static String mask(String text) {
        return CREDENTIALS.matcher(text).replaceAll("$1***@");
    }
}
