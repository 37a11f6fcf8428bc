/** Spring application events for leadership transitions. */
@NullMarked
package io.redlease.boot.event;

import org.jspecify.annotations.NullMarked;
