/** How soon followers read a new leader's advertised URL. */
@NullMarked
package io.redlease.benchmarks.discovery;

import org.jspecify.annotations.NullMarked;
