package io.redlease.core.scheduling;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.time.temporal.ChronoUnit;
import java.util.ArrayDeque;
import java.util.List;
import org.jspecify.annotations.Nullable;
import org.springframework.scheduling.Trigger;
import org.springframework.scheduling.support.SimpleTriggerContext;

/**
 * The slots of a once-per-slot job, from the timing Spring scheduled its method with: a cron
 * trigger's fire times; a fixed rate's start plus whole periods; for a fixed delay, one delay after
 * the previous completion. Slots are kept to the millisecond, as the ledger keeps them.
 */
sealed interface SlotTrigger {

    /**
     * How many slots {@link #between} counts at most; beyond it the count is a lower bound. It also
     * bounds the cron evaluations one search makes (four times this, at most).
     */
    int COUNT_LIMIT = 10_000;

    /** The slot of a schedule's first run, started at {@code now}. */
    @Nullable Instant first(Instant now);

    /**
     * The first slot after {@code instant}; for a fixed delay, one delay after it (the instant is a
     * completion).
     */
    @Nullable Instant after(Instant instant);

    /**
     * The slots in ({@code from}, {@code until}], the newest {@code limit} of them, oldest first,
     * with how many there are. Never a slot at or before {@code from}. For a fixed delay, {@code
     * from} is a completion and the only slot is one delay after it.
     */
    Window between(Instant from, Instant until, int limit);

    /**
     * Slots due, oldest first.
     *
     * @param count how many slots there are in all, of which {@code slots} are the newest
     * @param atLeast whether {@code count} stopped at {@link #COUNT_LIMIT} and there are more
     */
    record Window(List<Instant> slots, long count, boolean atLeast) {

        static final Window EMPTY = new Window(List.of(), 0, false);

        boolean isEmpty() {
            return slots.isEmpty();
        }

        /** How many slots are not in {@link #slots}. */
        long dropped() {
            return count - slots.size();
        }
    }

    private static Instant millis(Instant instant) {
        return instant.truncatedTo(ChronoUnit.MILLIS);
    }

    /** A cron trigger's fire times, in its zone, or else the zone of the scheduler's clock. */
    record Cron(Trigger trigger, Clock clock) implements SlotTrigger {

        /**
         * Two zones apart by a number of seconds that no period of an expression divides, so that
         * an expression whose fire times depend on the zone fires differently in them.
         */
        private static final ZoneId[] PROBES = {
            ZoneOffset.UTC, ZoneOffset.ofHoursMinutesSeconds(5, 45, 7)
        };

        /**
         * Returns the zone of the scheduler's clock when the fire times depend on it (the
         * expression names no zone and its fire times are not whole seconds apart), else null:
         * instances whose clocks are in different zones would compute different slots.
         */
        @Nullable ZoneId clockZone() {
            Instant from = Instant.parse("2026-01-01T00:00:00Z");
            Instant first = null;
            for (ZoneId zone : PROBES) {
                Instant next = new Cron(trigger, clock.withZone(zone)).after(from);
                if (first == null) {
                    first = next;
                } else if (next != null && !next.equals(first)) {
                    return clock.getZone();
                }
            }
            return null;
        }

        /** The same expression, computed in another zone where it names none. */
        Cron inZone(ZoneId zone) {
            return new Cron(trigger, clock.withZone(zone));
        }

        @Override
        public @Nullable Instant first(Instant now) {
            return after(now);
        }

        @Override
        public @Nullable Instant after(Instant instant) {
            // Spring's CronTrigger counts from the last completion: the next fire time after it.
            SimpleTriggerContext context = new SimpleTriggerContext(clock);
            context.update(instant, instant, instant);
            Instant next = trigger.nextExecution(context);
            return next == null ? null : millis(next);
        }

        @Override
        public Window between(Instant from, Instant until, int limit) {
            Budget budget = new Budget(4 * COUNT_LIMIT);
            ArrayDeque<Instant> newest = new ArrayDeque<>();
            long count = 0;
            Instant at = budget.after(this, from);
            while (at != null && !at.isAfter(until)) {
                if (count == COUNT_LIMIT) {
                    return new Window(latest(from, at, until, limit, budget), count, true);
                }
                count++;
                keep(newest, at, limit);
                at = budget.after(this, at);
            }
            return new Window(List.copyOf(newest), count, false);
        }

        /**
         * The newest fire times in (from, until] when there are more than {@link #COUNT_LIMIT}:
         * they are searched in a window before {@code until}, which doubles until it holds enough
         * of them; {@code reached} is the first fire time not counted.
         */
        private List<Instant> latest(
                Instant from, Instant reached, Instant until, int limit, Budget budget) {
            long gap = Math.max(1, Duration.between(from, reached).toMillis() / COUNT_LIMIT);
            // Searching from just before `reached` finds every fire time from it on.
            Instant floor = reached.minusMillis(1);
            long widest = Duration.between(floor, until).toMillis();
            ArrayDeque<Instant> newest = new ArrayDeque<>();
            for (long window = gap * (limit + 1L); ; window *= 2) {
                Instant start = window >= widest ? floor : until.minusMillis(window);
                newest.clear();
                Instant at = budget.after(this, start);
                while (at != null && !at.isAfter(until)) {
                    keep(newest, at, limit);
                    at = budget.after(this, at);
                }
                if (newest.size() >= limit || start.equals(floor) || budget.spent()) {
                    return List.copyOf(newest);
                }
            }
        }

        private static void keep(ArrayDeque<Instant> newest, Instant slot, int limit) {
            newest.addLast(slot);
            if (newest.size() > limit) {
                newest.removeFirst();
            }
        }

        @Override
        public String toString() {
            return "cron " + trigger;
        }
    }

    /** Cron evaluations left to one search; once spent, it settles for what it found. */
    final class Budget {

        private int left;

        Budget(int left) {
            this.left = left;
        }

        @Nullable Instant after(Cron cron, Instant instant) {
            if (left <= 0) {
                return null;
            }
            left--;
            return cron.after(instant);
        }

        boolean spent() {
            return left <= 0;
        }
    }

    /**
     * Whole periods from a start, which the first claim of the job stores so that all instances
     * share it.
     */
    record FixedRate(Duration period, Instant epoch) implements SlotTrigger {

        public FixedRate {
            epoch = millis(epoch);
        }

        /** The same rate counted from another start. */
        FixedRate from(Instant start) {
            return new FixedRate(period, start);
        }

        @Override
        public Instant first(Instant now) {
            return epoch;
        }

        @Override
        public Instant after(Instant instant) {
            return slot(index(instant) + 1);
        }

        @Override
        public Window between(Instant from, Instant until, int limit) {
            long first = index(from) + 1;
            long last = index(until);
            if (last < first || limit < 1) {
                return last < first ? Window.EMPTY : new Window(List.of(), last - first + 1, false);
            }
            long start = Math.max(first, last - limit + 1);
            Instant[] slots = new Instant[(int) (last - start + 1)];
            for (int i = 0; i < slots.length; i++) {
                slots[i] = slot(start + i);
            }
            return new Window(List.of(slots), last - first + 1, false);
        }

        private long index(Instant instant) {
            return Math.floorDiv(Duration.between(epoch, instant).toMillis(), period.toMillis());
        }

        private Instant slot(long index) {
            return epoch.plusMillis(Math.multiplyExact(index, period.toMillis()));
        }

        @Override
        public String toString() {
            return "fixedRate " + period;
        }
    }

    /** One delay after the previous completion on any instance. */
    record FixedDelay(Duration delay, Instant start) implements SlotTrigger {

        public FixedDelay {
            start = millis(start);
        }

        @Override
        public Instant first(Instant now) {
            return start;
        }

        @Override
        public Instant after(Instant completion) {
            return millis(completion).plus(delay);
        }

        @Override
        public Window between(Instant completion, Instant until, int limit) {
            Instant slot = after(completion);
            return slot.isAfter(until) || limit < 1
                    ? Window.EMPTY
                    : new Window(List.of(slot), 1, false);
        }

        @Override
        public String toString() {
            return "fixedDelay " + delay;
        }
    }
}
