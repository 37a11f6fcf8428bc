/**
 * JMH micro-benchmarks: fenced against plain writes on one connection, and acquire plus release.
 */
@NullMarked
package io.redlease.benchmarks.jmh;

import org.jspecify.annotations.NullMarked;
