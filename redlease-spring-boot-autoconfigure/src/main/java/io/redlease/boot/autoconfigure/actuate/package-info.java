/** Auto-configuration of redlease's actuator endpoint. */
@NullMarked
package io.redlease.boot.autoconfigure.actuate;

import org.jspecify.annotations.NullMarked;
