/** Actuator health for redlease elections. */
@NullMarked
package io.redlease.boot.health;

import org.jspecify.annotations.NullMarked;
