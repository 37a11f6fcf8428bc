/** Micrometer meters for redlease elections. */
@NullMarked
package io.redlease.boot.metrics;

import org.jspecify.annotations.NullMarked;
