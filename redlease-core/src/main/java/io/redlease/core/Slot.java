package io.redlease.core;

import java.time.Instant;

/**
 * The slot a once-per-slot scheduled run is doing ({@code @LeaderOnly(oncePerSlot = true)}): the
 * time its trigger scheduled it for, which may lie in the past when the run catches up. A job asks
 * for it through {@link LeadershipContext#slot()}, so that the run at 12:00:05 can still produce
 * "the 12:00 report".
 *
 * @param job the job's id: the bean name and the method name, joined by a dot
 * @param time the scheduled time of the slot
 * @param catchUp whether this run catches up a slot that no tick ran on time
 */
public record Slot(String job, Instant time, boolean catchUp) {}
