/** The redlease actuator endpoint. */
@NullMarked
package io.redlease.boot.actuate;

import org.jspecify.annotations.NullMarked;
