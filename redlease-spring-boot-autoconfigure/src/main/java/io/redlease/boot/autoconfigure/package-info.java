/**
 * Spring Boot auto-configuration for redlease: {@code redlease.*} properties, electors,
 * {@code @LeaderOnly}, the lifecycle, events and failure analysis.
 */
@NullMarked
package io.redlease.boot.autoconfigure;

import org.jspecify.annotations.NullMarked;
