package io.redlease.core.scheduling;

import static org.assertj.core.api.Assertions.assertThat;

import io.redlease.core.scheduling.SlotTrigger.Window;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.concurrent.atomic.AtomicInteger;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;
import org.springframework.scheduling.Trigger;
import org.springframework.scheduling.TriggerContext;
import org.springframework.scheduling.support.CronTrigger;

/** The slot arithmetic: every window is bounded, and never reaches back to its start. */
class SlotTriggerTests {

    private static final Clock UTC = Clock.system(ZoneOffset.UTC);

    private static final Instant NOON = Instant.parse("2026-12-03T12:00:00Z");

    /** A cron trigger that counts its evaluations. */
    static final class Counting implements Trigger {

        final CronTrigger cron;

        final AtomicInteger evaluations = new AtomicInteger();

        Counting(String expression) {
            this.cron = new CronTrigger(expression, ZoneOffset.UTC);
        }

        @Override
        public @Nullable Instant nextExecution(TriggerContext context) {
            evaluations.incrementAndGet();
            return cron.nextExecution(context);
        }
    }

    @Test
    void aCronWindowHoldsTheNewestSlotsAfterItsStartWithTheirCount() {
        SlotTrigger cron =
                new SlotTrigger.Cron(new CronTrigger("0 * * * * *", ZoneOffset.UTC), UTC);
        Window window = cron.between(NOON, NOON.plus(Duration.ofMinutes(10)), 3);
        assertThat(window.slots())
                .containsExactly(
                        NOON.plus(Duration.ofMinutes(8)),
                        NOON.plus(Duration.ofMinutes(9)),
                        NOON.plus(Duration.ofMinutes(10)));
        assertThat(window.count()).isEqualTo(10);
        assertThat(window.atLeast()).isFalse();
        assertThat(cron.after(NOON)).isEqualTo(NOON.plusSeconds(60));
        assertThat(cron.between(NOON, NOON.plusSeconds(59), 5).isEmpty()).isTrue();
    }

    @Test
    void aYearOfSecondsIsSearchedWithABoundedNumberOfEvaluations() {
        Counting counting = new Counting("* * * * * *");
        SlotTrigger cron = new SlotTrigger.Cron(counting, UTC);
        Instant from = NOON.minus(Duration.ofDays(365));
        Window window = cron.between(from, NOON, 1000);
        assertThat(counting.evaluations.get()).isLessThanOrEqualTo(4 * SlotTrigger.COUNT_LIMIT);
        assertThat(window.atLeast()).isTrue();
        assertThat(window.count()).isEqualTo(SlotTrigger.COUNT_LIMIT);
        assertThat(window.slots()).hasSize(1000);
        assertThat(window.slots().get(999)).isEqualTo(NOON);
        assertThat(window.slots().get(0)).isEqualTo(NOON.minusSeconds(999));
        assertThat(window.slots()).isSorted().allSatisfy(slot -> assertThat(slot).isAfter(from));
    }

    @Test
    void aSparseCronFarBehindStillFindsItsNewestSlots() {
        // Weekdays at nine: the search window doubles across weekends.
        SlotTrigger cron =
                new SlotTrigger.Cron(new CronTrigger("0 0 9 * * MON-FRI", ZoneOffset.UTC), UTC);
        Instant from = NOON.minus(Duration.ofDays(365 * 60));
        Window window = cron.between(from, NOON, 7);
        assertThat(window.atLeast()).isTrue();
        assertThat(window.slots()).hasSize(7).isSorted();
        assertThat(window.slots().get(6)).isEqualTo(Instant.parse("2026-12-03T09:00:00Z"));
        assertThat(window.slots().get(0)).isEqualTo(Instant.parse("2026-11-25T09:00:00Z"));
    }

    @Test
    void noWindowReachesBackToItsStartWhateverItsLimit() {
        SlotTrigger cron =
                new SlotTrigger.Cron(new CronTrigger("*/5 * * * * *", ZoneOffset.UTC), UTC);
        SlotTrigger rate = new SlotTrigger.FixedRate(Duration.ofMillis(700), NOON);
        SlotTrigger delay = new SlotTrigger.FixedDelay(Duration.ofSeconds(2), NOON);
        for (SlotTrigger trigger : new SlotTrigger[] {cron, rate, delay}) {
            for (int limit : new int[] {1, 2, 10, SlotTrigger.COUNT_LIMIT + 5}) {
                Instant from = NOON.plusMillis(1234);
                Window window = trigger.between(from, from.plusSeconds(60), limit);
                assertThat(window.slots())
                        .as("%s, limit %d", trigger, limit)
                        .hasSizeLessThanOrEqualTo(limit)
                        .isSorted()
                        .allSatisfy(slot -> assertThat(slot).isAfter(from));
            }
        }
    }

    @Test
    void fixedRateSlotsAreWholePeriodsFromTheStart() {
        SlotTrigger.FixedRate rate = new SlotTrigger.FixedRate(Duration.ofMillis(700), NOON);
        assertThat(rate.first(NOON.minusSeconds(5))).isEqualTo(NOON);
        assertThat(rate.after(NOON)).isEqualTo(NOON.plusMillis(700));
        assertThat(rate.after(NOON.plusMillis(699))).isEqualTo(NOON.plusMillis(700));
        Window window = rate.between(NOON, NOON.plusMillis(3500), 2);
        assertThat(window.slots()).containsExactly(NOON.plusMillis(2800), NOON.plusMillis(3500));
        assertThat(window.count()).isEqualTo(5);
        // Counted from the ledger's start instead, the same period falls elsewhere.
        assertThat(rate.from(NOON.plusMillis(100)).after(NOON)).isEqualTo(NOON.plusMillis(100));
        // A start with sub-millisecond digits is kept to the millisecond, as the ledger keeps it.
        assertThat(new SlotTrigger.FixedRate(Duration.ofSeconds(1), NOON.plusNanos(1)).epoch())
                .isEqualTo(NOON);
    }

    @Test
    void aFixedDelaysOnlySlotIsOneDelayAfterTheCompletion() {
        SlotTrigger delay = new SlotTrigger.FixedDelay(Duration.ofSeconds(2), NOON);
        assertThat(delay.first(NOON.plusSeconds(30))).isEqualTo(NOON);
        assertThat(delay.after(NOON.plusSeconds(1))).isEqualTo(NOON.plusSeconds(3));
        assertThat(delay.between(NOON, NOON.plusSeconds(1), 5).isEmpty()).isTrue();
        assertThat(delay.between(NOON, NOON.plusSeconds(60), 5).slots())
                .containsExactly(NOON.plusSeconds(2));
    }
}
