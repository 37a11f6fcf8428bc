/** Auto-configuration of redlease's Micrometer meters. */
@NullMarked
package io.redlease.boot.autoconfigure.metrics;

import org.jspecify.annotations.NullMarked;
