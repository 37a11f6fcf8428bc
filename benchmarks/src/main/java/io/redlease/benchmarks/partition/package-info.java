/** Rebalancing of partitioned leadership: time to balance and partitions moved. */
package io.redlease.benchmarks.partition;
