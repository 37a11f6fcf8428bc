/**
 * The failover harness: graceful hand-off and crash (SIGKILL) failover latency across child JVMs.
 */
@NullMarked
package io.redlease.benchmarks.failover;

import org.jspecify.annotations.NullMarked;
