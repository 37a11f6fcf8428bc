package io.redlease.jdbc;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Fences the transaction the annotated method runs in (or every method of the annotated type) with
 * the leadership term of the calling thread; put it next to {@code @Transactional}:
 *
 * <pre>{@code
 * @LeaderOnly
 * @Transactional
 * @Fenced
 * public void settle() { ... }
 * }</pre>
 *
 * <p>The call fails with {@link UnfencedTransactionException} before the method runs when there is
 * no transaction, no term, or the transaction is read-only or not on the fenced {@code DataSource}.
 * When the transaction commits, the term's token is stamped into the fence table; if a newer term
 * has committed there, the commit fails with {@link FencedOutException} and the transaction is
 * rolled back. A method that joins an outer transaction fences the outer one. See {@link
 * TransactionFencing}.
 */
@Target({ElementType.METHOD, ElementType.TYPE})
@Retention(RetentionPolicy.RUNTIME)
@Documented
public @interface Fenced {

    /** The election id; empty for the main election. */
    String value() default "";
}
