/**
 * Partitioned leadership: the work of one role split into a fixed number of partitions, each an
 * ordinary election with its own lease and fencing token, spread evenly over the live instances
 * without a coordinator. Start with {@link io.redlease.core.partition.PartitionedElection}.
 */
@NullMarked
package io.redlease.core.partition;

import org.jspecify.annotations.NullMarked;
