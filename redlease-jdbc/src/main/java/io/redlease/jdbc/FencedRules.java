package io.redlease.jdbc;

import java.io.IOException;
import java.io.InputStream;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.jspecify.annotations.Nullable;
import org.springframework.asm.ClassReader;
import org.springframework.asm.ClassVisitor;
import org.springframework.asm.MethodVisitor;
import org.springframework.asm.Opcodes;
import org.springframework.asm.SpringAsmInfo;
import org.springframework.asm.Type;
import org.springframework.beans.factory.BeanCreationException;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.util.ClassUtils;

/**
 * The rules a bean with {@link Fenced} methods is checked against when it is created; each broken
 * rule is a {@link BeanCreationException} naming the method and the fix, since the proxy that
 * fences the call would be bypassed and the transaction would commit unfenced.
 *
 * <p>A fenced method must be reachable through the proxy: not static, private or final. And the
 * class must not call its own fenced methods: the bytecode of the bean's class and its superclasses
 * is read (with Spring's repackaged ASM), and a call to a fenced method whose owner is one of those
 * classes is refused, unless the caller is itself a fenced method of the same election (it runs in
 * the transaction its own proxy call fenced). The rule is conservative: a call on another instance
 * of the same class, or from a lambda of a fenced method, is refused too.
 */
final class FencedRules {

    private FencedRules() {}

    /** Refuses a fenced method that no proxy can advise. */
    static void checkAdvisable(String beanName, Class<?> type, Method method) {
        int modifiers = method.getModifiers();
        if (!Modifier.isStatic(modifiers)
                && !Modifier.isPrivate(modifiers)
                && !Modifier.isFinal(modifiers)) {
            return;
        }
        boolean onMethod = AnnotatedElementUtils.hasAnnotation(method, Fenced.class);
        boolean reachable = !Modifier.isStatic(modifiers) && !Modifier.isPrivate(modifiers);
        if (onMethod || (reachable && FencedInterceptor.find(method, type) != null)) {
            throw new BeanCreationException(
                    beanName,
                    "redlease: @Fenced on "
                            + describe(method)
                            + " cannot be applied: the method is "
                            + (Modifier.isStatic(modifiers)
                                    ? "static"
                                    : Modifier.isPrivate(modifiers) ? "private" : "final")
                            + ", so no proxy can fence its transaction and it would commit"
                            + " unfenced. Make it a non-final instance method that callers reach"
                            + " through the bean.");
        }
    }

    /**
     * Refuses calls of the class's own fenced methods, which bypass the proxy.
     *
     * @param fenced the fenced methods, each with its election id
     */
    static void checkSelfInvocation(String beanName, Class<?> type, Map<Method, String> fenced) {
        Map<String, String> elections = new HashMap<>();
        Map<String, Method> methods = new HashMap<>();
        fenced.forEach(
                (method, election) -> {
                    String key = method.getName() + Type.getMethodDescriptor(method);
                    elections.put(key, election);
                    methods.put(key, method);
                });
        Set<String> owners = new HashSet<>();
        List<Class<?>> hierarchy = new ArrayList<>();
        for (Class<?> c = type; c != null && c != Object.class; c = c.getSuperclass()) {
            owners.add(Type.getInternalName(c));
            hierarchy.add(c);
        }
        for (Class<?> c : hierarchy) {
            @Nullable String call = firstSelfCall(c, owners, elections);
            if (call != null) {
                String[] parts = call.split(" ", 2);
                throw new BeanCreationException(
                        beanName,
                        "redlease: @Fenced on "
                                + describe(methods.get(parts[1]))
                                + " cannot be applied to the call from "
                                + c.getName()
                                + "."
                                + parts[0]
                                + "(): it calls the method on its own instance, bypassing the"
                                + " proxy that fences the transaction, so that transaction would"
                                + " commit unfenced. Call it through the bean (inject it, or"
                                + " move the fenced method to another bean).");
            }
        }
    }

    /** Returns "caller callee" of the first call of a fenced method from a non-fenced caller. */
    private static @Nullable String firstSelfCall(
            Class<?> type, Set<String> owners, Map<String, String> elections) {
        ClassLoader loader = type.getClassLoader();
        if (loader == null) {
            return null;
        }
        String[] found = new String[1];
        try (InputStream in =
                loader.getResourceAsStream(
                        ClassUtils.convertClassNameToResourcePath(type.getName())
                                + ClassUtils.CLASS_FILE_SUFFIX)) {
            if (in == null) {
                return null;
            }
            new ClassReader(in)
                    .accept(
                            new ClassVisitor(SpringAsmInfo.ASM_VERSION) {
                                @Override
                                public MethodVisitor visitMethod(
                                        int access,
                                        String name,
                                        String descriptor,
                                        String signature,
                                        String[] exceptions) {
                                    if ((access & Opcodes.ACC_BRIDGE) != 0 || found[0] != null) {
                                        return null;
                                    }
                                    @Nullable String callerElection =
                                            elections.get(name + descriptor);
                                    return new ThisTracker((access & Opcodes.ACC_STATIC) != 0) {
                                        @Override
                                        void call(
                                                String owner,
                                                String callee,
                                                String calleeDescriptor,
                                                boolean receiverMayBeThis) {
                                            String key = callee + calleeDescriptor;
                                            String election = elections.get(key);
                                            if (found[0] == null
                                                    && receiverMayBeThis
                                                    && owners.contains(owner)
                                                    && election != null
                                                    && !election.equals(callerElection)) {
                                                found[0] = name + " " + key;
                                            }
                                        }
                                    };
                                }
                            },
                            ClassReader.SKIP_DEBUG | ClassReader.EXPAND_FRAMES);
        } catch (IOException | RuntimeException ex) {
            throw new IllegalStateException(
                    "redlease: cannot read the bytecode of "
                            + type.getName()
                            + " to check calls of its @Fenced methods",
                    ex);
        }
        return found[0];
    }

    private static String describe(@Nullable Method method) {
        return method == null
                ? "a method"
                : method.getDeclaringClass().getName() + "." + method.getName() + "()";
    }
}
