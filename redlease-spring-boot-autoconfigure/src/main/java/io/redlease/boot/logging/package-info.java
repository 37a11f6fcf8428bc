/** Log correlation of leader-only work: its election, token, partition and slot in the MDC. */
@NullMarked
package io.redlease.boot.logging;

import org.jspecify.annotations.NullMarked;
