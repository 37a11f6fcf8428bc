/** Lease-based leader election on Redis with fencing tokens. */
@NullMarked
package io.redlease.core;

import org.jspecify.annotations.NullMarked;
