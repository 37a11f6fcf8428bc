/**
 * Leader-only lifecycle beans and listener containers: started on election, stopped with the term.
 */
@NullMarked
package io.redlease.boot.lifecycle;

import org.jspecify.annotations.NullMarked;
