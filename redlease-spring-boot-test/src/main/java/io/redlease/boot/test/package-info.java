/**
 * A test kit for applications that use redlease: {@link io.redlease.boot.test.TestRedis} gives a
 * {@code @SpringBootTest} a real Redis and a {@link io.redlease.boot.test.RedleaseTester}, which
 * makes this instance lead, follow, step down or lose to a newer term; {@link
 * io.redlease.boot.test.RedleaseAssertions} states leadership with AssertJ.
 */
@NullMarked
package io.redlease.boot.test;

import org.jspecify.annotations.NullMarked;
