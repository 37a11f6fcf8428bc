package io.redlease.jdbc;

import java.lang.reflect.Method;
import java.util.function.Supplier;
import org.aopalliance.intercept.MethodInterceptor;
import org.aopalliance.intercept.MethodInvocation;
import org.jspecify.annotations.Nullable;
import org.springframework.aop.support.AopUtils;
import org.springframework.core.annotation.AnnotatedElementUtils;

/** Fences the current transaction before a {@link Fenced} method runs. */
final class FencedInterceptor implements MethodInterceptor {

    private final Supplier<TransactionFencing> fencing;

    FencedInterceptor(Supplier<TransactionFencing> fencing) {
        this.fencing = fencing;
    }

    @Override
    public @Nullable Object invoke(MethodInvocation invocation) throws Throwable {
        Object target = invocation.getThis();
        Class<?> type =
                target != null
                        ? AopUtils.getTargetClass(target)
                        : invocation.getMethod().getDeclaringClass();
        @Nullable Fenced fenced = find(invocation.getMethod(), type);
        try {
            fencing.get().fence(fenced != null ? fenced.value() : "");
        } catch (UnfencedTransactionException ex) {
            throw new UnfencedTransactionException(
                    ex.getMessage()
                            + " (@Fenced method "
                            + type.getName()
                            + "."
                            + invocation.getMethod().getName()
                            + ")",
                    ex);
        }
        return invocation.proceed();
    }

    static @Nullable Fenced find(Method method, Class<?> type) {
        Method specific = AopUtils.getMostSpecificMethod(method, type);
        Fenced fenced = AnnotatedElementUtils.findMergedAnnotation(specific, Fenced.class);
        if (fenced == null) {
            fenced = AnnotatedElementUtils.findMergedAnnotation(type, Fenced.class);
        }
        return fenced;
    }
}
