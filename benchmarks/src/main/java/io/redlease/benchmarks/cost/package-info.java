/**
 * The cost harness: Redis commands per second, connections, threads and heap per process for 1 to
 * 1,000 elections.
 */
@NullMarked
package io.redlease.benchmarks.cost;

import org.jspecify.annotations.NullMarked;
