package io.redlease.core.annotation;

import io.redlease.core.scheduling.MissedSlots;
import io.redlease.core.scheduling.SlotJobs;
import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Runs the annotated method (or every method of the annotated type) only while this instance leads
 * an election; typically on a {@code @Scheduled} method, so that exactly one instance does the job.
 *
 * <p>When this instance leads, the call runs with the current term bound to the thread: {@link
 * io.redlease.core.LeadershipContext#fencer()} returns that term's fencer, and, unless {@link
 * #interruptOnStepDown()} is false, the thread is interrupted if the term ends during the call.
 * When it does not lead, the call is skipped ({@link WhenNotLeader#SKIP}) or rejected with a {@link
 * io.redlease.core.NotLeaderException} ({@link WhenNotLeader#REJECT}). The check costs no Redis
 * round trip: it reads the elector's current term.
 *
 * <p>A skipped call returns: nothing for {@code void}; {@code Optional.empty()} for {@code
 * Optional}; a future completed with {@code null} for {@code CompletableFuture} and {@code
 * CompletionStage}; {@code null} for any other reference type. A method with a primitive return
 * type and the skip policy is rejected when the bean is created, since no value would be honest.
 *
 * <p>Leading is not exclusive: a leader that is paused past its lease can still be running a call
 * when a successor starts one. Route shared writes through the fencer.
 *
 * <p>Methods that return a reactive type ({@code Mono}, {@code Flux}, any type Spring's {@code
 * ReactiveAdapterRegistry} adapts) or are Kotlin {@code suspend} functions are refused when the
 * bean is created: the check would run when the publisher is assembled, not when it runs.
 *
 * <p>On a class that implements {@link org.springframework.context.Lifecycle} (a {@code
 * SmartLifecycle}, a listener container, an inbound adapter), the annotation marks a leader-only
 * lifecycle bean instead: its methods are not advised; with Spring Boot's auto-configuration it is
 * not started with the application context, it is started when this instance is elected (in phase
 * order) and stopped when the term ends, and a graceful step-down releases the lease only after it
 * stopped. {@link #value()} names the election; the other attributes do not apply.
 */
@Target({ElementType.METHOD, ElementType.TYPE})
@Retention(RetentionPolicy.RUNTIME)
@Documented
public @interface LeaderOnly {

    /** The election id; empty for the main election. */
    String value() default "";

    /**
     * The id of a partitioned election ({@code redlease.partitions.<id>}); empty for none. With an
     * id, each call runs the method once per partition this instance owns when the call is made,
     * one after another on the calling thread, in ascending partition order; each run has that
     * partition's term bound, so {@link io.redlease.core.LeadershipContext#fencer()} and {@code
     * token()} are the partition's and {@link io.redlease.core.LeadershipContext#partition()} names
     * it. A partition whose term ends before its turn is skipped; a run whose term ends during it
     * is interrupted (unless {@link #interruptOnStepDown()} is false). When it owns none, the call
     * is skipped or rejected as {@link #whenNotLeader()} says. Called within a run of the same
     * partitioned election, the method runs once, in that run's partition. With {@link
     * #oncePerSlot()}, a {@code @Scheduled} method is one once-per-slot job per partition: each
     * partition's slots run on its holder inside that partition's term, marked in a ledger of the
     * partition's own, with {@link #missedSlots()} applied per partition (a partition's new holder
     * catches up what it missed). Refused when the bean is created: together with {@link #value()},
     * on a type, on a method that does not return {@code void}, and an unknown id.
     */
    String partitions() default "";

    /** What happens to a call made while this instance does not lead. */
    WhenNotLeader whenNotLeader() default WhenNotLeader.SKIP;

    /** Whether the thread running the call is interrupted when the term ends during it. */
    boolean interruptOnStepDown() default true;

    /**
     * Whether a {@code @Scheduled} method runs once per slot across instances and failovers: each
     * slot of its trigger that {@link #missedSlots()} does not drop completes at least once, and
     * never runs again after it was marked complete. A run marks its slot in Redis only if it
     * completed on the scheduler's thread while its term was active and its lease still held. The
     * running code reads its slot from {@link io.redlease.core.LeadershipContext#slot()}. A method
     * returning a {@code Mono} or a {@code Flux} completes when its publisher does. A run repeated
     * after its term ended before the mark redoes the method's effects: key them by the slot.
     * Refused when the bean is created: {@code @Async}, a method returning a {@code Future} or a
     * {@code CompletionStage}, a Kotlin {@code suspend} function, and more than one
     * {@code @Scheduled} trigger.
     */
    boolean oncePerSlot() default false;

    /** What a once-per-slot job does with slots missed while no instance ran them. */
    MissedSlots missedSlots() default MissedSlots.DEFAULT;

    /**
     * The most missed slots {@link MissedSlots#RUN_ALL} runs at once, and how far behind a leader
     * may fall before it drops the oldest slots; 1 to {@value SlotJobs#MAX_CATCH_UP}, or 0 for
     * {@code redlease.scheduling.max-catch-up} (by default 10).
     */
    int maxCatchUp() default 0;

    /** What a {@code @LeaderOnly} call does when this instance does not lead. */
    enum WhenNotLeader {
        /** Return without running the method. */
        SKIP,
        /** Throw a {@link io.redlease.core.NotLeaderException}. */
        REJECT
    }
}
