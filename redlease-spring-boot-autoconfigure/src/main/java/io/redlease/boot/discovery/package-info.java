/** Finding the leader of an election and forwarding requests to it. */
@NullMarked
package io.redlease.boot.discovery;

import org.jspecify.annotations.NullMarked;
