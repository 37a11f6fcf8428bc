/** Many elections in one JVM: threads, heap, and leases through a Redis stall. */
@NullMarked
package io.redlease.benchmarks.scale;

import org.jspecify.annotations.NullMarked;
