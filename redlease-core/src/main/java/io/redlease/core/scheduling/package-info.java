/**
 * Once-per-slot scheduled jobs ({@code @LeaderOnly(oncePerSlot = true)} on {@code @Scheduled}
 * methods): Spring schedules the method, {@link io.redlease.core.scheduling.SlotJobs} puts a chain
 * of one run per slot on the same scheduler in its place, and each run is marked in the job's
 * {@link io.redlease.core.SlotLedger} only when it completed inside an active term. A job of a
 * partitioned election ({@code @LeaderOnly(partitions = ..., oncePerSlot = true)}) is one such job
 * per partition, each with its own chain and ledger, run inside that partition's term.
 */
@NullMarked
package io.redlease.core.scheduling;

import org.jspecify.annotations.NullMarked;
