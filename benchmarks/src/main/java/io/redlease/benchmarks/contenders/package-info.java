/**
 * The contestants of the failover and cost benchmarks (redlease, redlease in Go-library mode,
 * Spring Integration, Redisson) behind one small interface, and the child JVM main that runs them.
 */
@NullMarked
package io.redlease.benchmarks.contenders;

import org.jspecify.annotations.NullMarked;
