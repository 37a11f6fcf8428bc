/**
 * {@link io.redlease.core.annotation.LeaderOnly @LeaderOnly}: run a bean method only while this
 * instance leads an election, applied by {@link
 * io.redlease.core.annotation.LeaderOnlyAnnotationBeanPostProcessor}.
 */
@NullMarked
package io.redlease.core.annotation;

import org.jspecify.annotations.NullMarked;
