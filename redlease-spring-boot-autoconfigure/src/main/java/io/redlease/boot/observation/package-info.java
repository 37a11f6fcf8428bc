/**
 * Observations of redlease for Micrometer's Observation API: leader-only runs ({@link
 * io.redlease.boot.observation.LeaderOnlyObservationDocumentation}), election transitions ({@link
 * io.redlease.boot.observation.ElectionObservationDocumentation}), each with a convention an
 * application can replace, and the predicate that keeps redlease's background Redis traffic out of
 * an application's traces.
 */
@NullMarked
package io.redlease.boot.observation;

import org.jspecify.annotations.NullMarked;
