package io.redlease.core.annotation;

import io.redlease.core.SlotLedger;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZonedDateTime;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.TimeZone;
import java.util.function.UnaryOperator;
import org.jspecify.annotations.Nullable;
import org.springframework.format.annotation.DurationFormat;
import org.springframework.format.datetime.standard.DurationFormatterUtils;
import org.springframework.scheduling.annotation.Scheduled;
import org.springframework.scheduling.support.CronExpression;
import org.springframework.util.StringUtils;

/**
 * The slots of a {@code @Scheduled} method, worked out from its own trigger: a cron expression's
 * fire times; for a fixed rate the shared start plus whole periods; for a fixed delay the last
 * completion, shared across instances, plus the delay. A tick may fire a little early on its own
 * clock; {@link #tolerance()} maps it to the slot it was scheduled for.
 */
sealed interface SlotTrigger {

    /** How early a tick may fire and still belong to the slot it was scheduled for. */
    Duration MAX_TOLERANCE = Duration.ofMillis(100);

    /** How many slots a search looks through before it stops counting. */
    int SEARCH_LIMIT = 100_000;

    /**
     * Returns the slots due at {@code now}, newest last: those after the ledger's completed slot,
     * at most {@code limit} of them (the newest), with the number due in all.
     *
     * @param tick whether a tick asks: a tick may come up to {@link #tolerance()} early for its
     *     slot, and when the ledger has no slot yet the tick's own slot is due; outside a tick
     *     nothing is due early, nor for a job that never ran
     */
    Due due(SlotLedger.State state, Instant now, int limit, boolean tick);

    /** Returns the next slot after the completed one, or null when the ledger has none. */
    @Nullable Instant next(SlotLedger.State state, Instant now);

    /** Returns how early a tick may fire and still belong to its slot. */
    Duration tolerance();

    /** The slots due now, oldest first, and how many were due in all. */
    record Due(List<Instant> slots, long count) {

        static final Due NONE = new Due(List.of(), 0);

        static Due of(Instant slot) {
            return new Due(List.of(slot), 1);
        }
    }

    /**
     * Reads the trigger of a {@code @Scheduled} annotation.
     *
     * @param resolver resolves placeholders in the annotation's strings
     * @return the trigger, or null for a cron expression that disables the method ({@code "-"})
     * @throws IllegalArgumentException naming the attribute, when a value cannot be read
     */
    static @Nullable SlotTrigger of(Scheduled scheduled, UnaryOperator<String> resolver) {
        DurationFormat.Unit unit =
                DurationFormat.Unit.fromChronoUnit(scheduled.timeUnit().toChronoUnit());
        Duration initialDelay =
                duration(
                        "initialDelay",
                        scheduled.initialDelay(),
                        resolver.apply(scheduled.initialDelayString()),
                        unit);
        String cron = resolver.apply(scheduled.cron());
        if (StringUtils.hasText(cron)) {
            if (Scheduled.CRON_DISABLED.equals(cron)) {
                return null;
            }
            String zone = resolver.apply(scheduled.zone());
            ZoneId zoneId =
                    StringUtils.hasText(zone)
                            ? TimeZone.getTimeZone(zone).toZoneId()
                            : ZoneId.systemDefault();
            try {
                return new Cron(CronExpression.parse(cron), zoneId);
            } catch (IllegalArgumentException ex) {
                throw new IllegalArgumentException(
                        "cron '" + cron + "' is not a cron expression: " + ex.getMessage(), ex);
            }
        }
        Duration rate =
                duration(
                        "fixedRate",
                        scheduled.fixedRate(),
                        resolver.apply(scheduled.fixedRateString()),
                        unit);
        if (rate != null) {
            return new FixedRate(positive("fixedRate", rate));
        }
        Duration delay =
                duration(
                        "fixedDelay",
                        scheduled.fixedDelay(),
                        resolver.apply(scheduled.fixedDelayString()),
                        unit);
        if (delay != null) {
            return new FixedDelay(positive("fixedDelay", delay));
        }
        throw new IllegalArgumentException(
                "@Scheduled sets none of cron, fixedRate and fixedDelay"
                        + (initialDelay != null ? " (initialDelay alone is a one-time task)" : ""));
    }

    private static @Nullable Duration duration(
            String attribute, long value, @Nullable String text, DurationFormat.Unit unit) {
        if (value >= 0) {
            return Duration.of(value, unit.asChronoUnit());
        }
        if (!StringUtils.hasText(text)) {
            return null;
        }
        try {
            return DurationFormatterUtils.detectAndParse(text.trim(), unit);
        } catch (RuntimeException ex) {
            throw new IllegalArgumentException(
                    attribute + "String '" + text + "' is not a duration", ex);
        }
    }

    private static Duration positive(String attribute, Duration value) {
        if (value.isZero() || value.isNegative()) {
            throw new IllegalArgumentException(attribute + " must be positive, was " + value);
        }
        return value;
    }

    private static Duration tolerance(Duration period) {
        Duration quarter = period.dividedBy(4);
        return quarter.compareTo(MAX_TOLERANCE) < 0 ? quarter : MAX_TOLERANCE;
    }

    /** A cron expression's fire times, in its zone. */
    record Cron(CronExpression expression, ZoneId zone) implements SlotTrigger {

        @Override
        public Due due(SlotLedger.State state, Instant now, int limit, boolean tick) {
            Instant until = tick ? now.plus(tolerance()) : now;
            Instant completed = state.completedSlot();
            if (completed == null) {
                if (!tick) {
                    return Due.NONE;
                }
                Instant latest = latest(until);
                return latest == null ? Due.NONE : Due.of(latest);
            }
            return between(completed, until, limit);
        }

        @Override
        public @Nullable Instant next(SlotLedger.State state, Instant now) {
            Instant from = state.completedSlot();
            return after(from != null ? from : now);
        }

        @Override
        public Duration tolerance() {
            return MAX_TOLERANCE;
        }

        private @Nullable Instant after(Instant instant) {
            ZonedDateTime next = expression.next(instant.atZone(zone));
            return next == null ? null : next.toInstant();
        }

        /** The newest fire times in (from, until], at most limit, and how many there are. */
        private Due between(Instant from, Instant until, int limit) {
            ArrayDeque<Instant> newest = new ArrayDeque<>();
            long count = 0;
            Instant at = after(from);
            while (at != null && !at.isAfter(until)) {
                count++;
                newest.addLast(at);
                if (newest.size() > limit) {
                    newest.removeFirst();
                }
                if (count >= SEARCH_LIMIT) {
                    // Far behind: count from the newest fire times back instead.
                    return new Due(List.copyOf(latestFires(until, limit)), count);
                }
                at = after(at);
            }
            return new Due(List.copyOf(newest), count);
        }

        /** The newest fire time at or before until, searching back in doubling windows. */
        private @Nullable Instant latest(Instant until) {
            List<Instant> fires = latestFires(until, 1);
            return fires.isEmpty() ? null : fires.get(0);
        }

        private List<Instant> latestFires(Instant until, int limit) {
            for (Duration window = Duration.ofSeconds(1);
                    window.compareTo(Duration.ofDays(800)) <= 0;
                    window = window.multipliedBy(2)) {
                ArrayDeque<Instant> newest = new ArrayDeque<>();
                Instant at = after(until.minus(window));
                int seen = 0;
                while (at != null && !at.isAfter(until) && seen < SEARCH_LIMIT) {
                    seen++;
                    newest.addLast(at);
                    if (newest.size() > limit) {
                        newest.removeFirst();
                    }
                    at = after(at);
                }
                if (newest.size() >= limit || (!newest.isEmpty() && window.toDays() > 400)) {
                    return new ArrayList<>(newest);
                }
            }
            return List.of();
        }

        @Override
        public String toString() {
            return "cron " + expression + " (" + zone + ")";
        }
    }

    /**
     * Whole periods from the job's start, which the first run stores in the ledger so that every
     * instance counts from the same start.
     */
    record FixedRate(Duration period) implements SlotTrigger {

        @Override
        public Due due(SlotLedger.State state, Instant now, int limit, boolean tick) {
            Instant start = state.epoch();
            if (start == null) {
                return tick ? Due.of(now) : Due.NONE;
            }
            long latest = periods(start, tick ? now.plus(tolerance()) : now);
            if (latest < 0) {
                return Due.NONE;
            }
            Instant completed = state.completedSlot();
            long first = completed == null ? latest : periods(start, completed) + 1;
            if (completed == null && !tick) {
                return Due.NONE;
            }
            long count = Math.max(0, latest - first + 1);
            List<Instant> slots = new ArrayList<>();
            for (long n = Math.max(first, latest - limit + 1); n <= latest; n++) {
                slots.add(start.plus(period.multipliedBy(n)));
            }
            return new Due(slots, count);
        }

        @Override
        public @Nullable Instant next(SlotLedger.State state, Instant now) {
            Instant start = state.epoch();
            if (start == null) {
                return null;
            }
            Instant completed = state.completedSlot();
            long n = completed == null ? 0 : periods(start, completed) + 1;
            return start.plus(period.multipliedBy(n));
        }

        @Override
        public Duration tolerance() {
            return SlotTrigger.tolerance(period);
        }

        private long periods(Instant start, Instant at) {
            return Math.floorDiv(Duration.between(start, at).toMillis(), period.toMillis());
        }

        @Override
        public String toString() {
            return "fixedRate " + period;
        }
    }

    /** The last completion, shared across instances, plus the delay. */
    record FixedDelay(Duration delay) implements SlotTrigger {

        @Override
        public Due due(SlotLedger.State state, Instant now, int limit, boolean tick) {
            Instant completedAt = state.completedAt();
            if (completedAt == null) {
                return tick ? Due.of(now) : Due.NONE;
            }
            Instant slot = completedAt.plus(delay);
            return slot.isAfter(tick ? now.plus(tolerance()) : now) ? Due.NONE : Due.of(slot);
        }

        @Override
        public @Nullable Instant next(SlotLedger.State state, Instant now) {
            Instant completedAt = state.completedAt();
            return completedAt == null ? null : completedAt.plus(delay);
        }

        @Override
        public Duration tolerance() {
            return SlotTrigger.tolerance(delay);
        }

        @Override
        public String toString() {
            return "fixedDelay " + delay;
        }
    }
}
