/** Auto-configuration of redlease's health contributor. */
@NullMarked
package io.redlease.boot.autoconfigure.health;

import org.jspecify.annotations.NullMarked;
