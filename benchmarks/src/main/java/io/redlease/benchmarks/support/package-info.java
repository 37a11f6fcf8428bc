/**
 * Shared helpers of the benchmarks: a private Redis server, child JVMs and their events, statistics
 * and machine facts.
 */
@NullMarked
package io.redlease.benchmarks.support;

import org.jspecify.annotations.NullMarked;
