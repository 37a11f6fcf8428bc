/** Auto-configuration of redlease's observations and of the log correlation of leader-only work. */
@NullMarked
package io.redlease.boot.autoconfigure.observation;

import org.jspecify.annotations.NullMarked;
